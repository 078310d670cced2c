/**
 * FileStorage: workflows and artifacts as plain files under one folder.
 *
 *   <basePath>/workflows/            one `<name>.ts` per workflow (+ `.meta/<name>.json` sidecars)
 *   <basePath>/artifacts/            one file per artifact      (+ `.meta/<name>` sidecars)
 *   <basePath>/workspaces/<id>/...   the same two folders per workspace, when `workspaceId` is set
 *
 * Several processes may share one base folder: every write is an atomic rename and there is no
 * shared index file to fight over.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ValidationError } from "../../errors.js";
import { toStorageError } from "../atomic.js";
import { validateWorkspaceId } from "../names.js";
import type { StorageBackend, StorageDescriptor } from "../protocol.js";
import { FileArtifactStore } from "./artifacts.js";
import { FileWorkflowStore } from "./workflows.js";

export interface FileStorageOptions {
  /** Folder holding everything; created if missing. Relative paths resolve against the cwd. */
  basePath: string;
  /** Isolates one tenant's workflows and artifacts under `<basePath>/workspaces/<workspaceId>/`. */
  workspaceId?: string;
}

const optionsSchema = z
  .object({ basePath: z.string().min(1, "basePath must not be empty"), workspaceId: z.string().optional() })
  .strict();

export class FileStorage implements StorageBackend {
  /** Absolute base folder, as given (shared by all workspaces). */
  readonly basePath: string;
  readonly workspaceId?: string;
  /** Absolute folder holding this backend's `workflows/` and `artifacts/` (the workspace folder when scoped). */
  readonly root: string;
  readonly workflows: FileWorkflowStore;
  readonly artifacts: FileArtifactStore;

  constructor(options: FileStorageOptions) {
    const parsed = optionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new ValidationError(
        `Invalid FileStorage options: ${z.prettifyError(parsed.error)}. Expected { basePath: string, workspaceId?: string }.`,
      );
    }
    const { basePath, workspaceId } = parsed.data;
    if (workspaceId !== undefined) this.workspaceId = validateWorkspaceId(workspaceId);
    this.basePath = path.resolve(basePath);
    this.root = workspaceId === undefined ? this.basePath : path.join(this.basePath, "workspaces", workspaceId);
    const workflowsDir = path.join(this.root, "workflows");
    const artifactsDir = path.join(this.root, "artifacts");
    for (const dir of [workflowsDir, artifactsDir]) {
      try {
        mkdirSync(dir, { recursive: true });
      } catch (err) {
        throw toStorageError("create folder", dir, err);
      }
    }
    this.workflows = new FileWorkflowStore(workflowsDir);
    this.artifacts = new FileArtifactStore(artifactsDir);
  }

  toDescriptor(): StorageDescriptor {
    return this.workspaceId === undefined
      ? { type: "file", basePath: this.basePath }
      : { type: "file", basePath: this.basePath, workspaceId: this.workspaceId };
  }

  /** Nothing to release (no handles are held between calls); safe to call any number of times. */
  async close(): Promise<void> {}
}
