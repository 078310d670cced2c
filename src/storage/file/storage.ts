/**
 * FileStorage: workflows and artifacts as plain files under one folder.
 *
 *   <basePath>/workflows/            one `<name>.ts` per workflow (first line: the store's header)
 *   <basePath>/artifacts/            one file per artifact (a header line, then the payload)
 *   <basePath>/runs/<id>/...          the run ledger (runs.ts)
 *   <basePath>/skills/<name>         one Agent Skill: a symlink to its immutable version folder in skills/.versions/ (skills.ts)
 *   <basePath>/{workflows,artifacts}/.tmp/   temp files of saves in progress
 *   <basePath>/workspaces/<id>/...   the same two folders per workspace, when `workspaceId` is set
 *
 * Several processes may share one base folder: every write of a record is one atomic rename (its
 * single commit point) and there is no shared index file to fight over. Opening a FileStorage
 * sweeps temp files that killed writers left behind (older than `tempMaxAgeMs`, writer not alive).
 */
import path from "node:path";
import { z } from "zod";
import { lazy } from "../../lazy.js";
import { ValidationError } from "../../errors.js";
import { isIntIn, isNonEmptyString, quickParse } from "../../values/quick-checks.js";
import { DEFAULT_TEMP_MAX_AGE_MS, sweepTempFiles, toStorageError } from "../atomic.js";
import { validateWorkspaceId } from "../names.js";
import type { StorageBackend, StorageDescriptor } from "../protocol.js";
import { quotaOptionSchema, resolveQuota, type QuotaOptions } from "../quota.js";
import { ARTIFACT_TEMP_DIR, FileArtifactStore } from "./artifacts.js";
import { FileRunStore, RUNS_TEMP_DIR } from "./runs.js";
import { FileSkillStore } from "./skills.js";
import { FileWorkflowStore, WORKFLOW_TEMP_DIR } from "./workflows.js";
import { makeDirsSync } from "../mkdirs.js";

export interface FileStorageOptions {
  /** Folder holding everything; created if missing. Relative paths resolve against the cwd. */
  basePath: string;
  /** Isolates one tenant's workflows and artifacts under `<basePath>/workspaces/<workspaceId>/`. */
  workspaceId?: string;
  /** Largest artifact in bytes (payload + description + metadata). Default 64 MiB. */
  maxArtifactBytes?: number;
  /**
   * Largest total of this store's (workspace's) artifacts in bytes. Default 1 GiB. Exact within one
   * process; writers in other processes are seen within a few seconds.
   */
  maxStoreBytes?: number;
  /** A temp file left by a killed writer is swept on open once older than this. Default 60,000 ms. */
  tempMaxAgeMs?: number;
}

const optionsSchema = lazy(() => z
  .object({
    basePath: z.string().min(1, "basePath must not be empty"),
    workspaceId: z.string().optional(),
    maxArtifactBytes: quotaOptionSchema,
    maxStoreBytes: quotaOptionSchema,
    tempMaxAgeMs: z.number().int().min(0).optional(),
  })
  .strict());

const isQuota = isIntIn(0, Number.MAX_SAFE_INTEGER);
/** optionsSchema by hand, for the cold path (see src/values/quick-checks.ts); zod decides the rest. */
const QUICK_CHECKS = { basePath: isNonEmptyString, workspaceId: (v: unknown) => typeof v === "string", maxArtifactBytes: isQuota, maxStoreBytes: isQuota, tempMaxAgeMs: isIntIn(0, Number.MAX_SAFE_INTEGER) };

export class FileStorage implements StorageBackend {
  /** Absolute base folder, as given (shared by all workspaces). */
  readonly basePath: string;
  readonly workspaceId?: string;
  /** Absolute folder holding this backend's `workflows/` and `artifacts/` (the workspace folder when scoped). */
  readonly root: string;
  readonly workflows: FileWorkflowStore;
  readonly artifacts: FileArtifactStore;
  readonly skills: FileSkillStore;
  /** The run ledger under `<root>/runs/` (runs.ts), created on the first write. */
  readonly runs: FileRunStore;
  /** The sweep of leftover temp files started on open; close() waits for it. */
  private readonly swept: Promise<number>;

  constructor(options: FileStorageOptions) {
    const quick = typeof (options as { basePath?: unknown } | undefined)?.basePath === "string" ? quickParse(options, QUICK_CHECKS) : undefined;
    const parsed = quick ? { success: true as const, data: quick as z.infer<typeof optionsSchema> } : optionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new ValidationError(
        `Invalid FileStorage options: ${z.prettifyError(parsed.error)}. Expected { basePath: string, workspaceId?: string }.`,
      );
    }
    const { basePath, workspaceId, maxArtifactBytes, maxStoreBytes, tempMaxAgeMs } = parsed.data;
    if (workspaceId !== undefined) this.workspaceId = validateWorkspaceId(workspaceId);
    this.basePath = path.resolve(basePath);
    this.root = workspaceId === undefined ? this.basePath : path.join(this.basePath, "workspaces", workspaceId);
    const workflowsDir = path.join(this.root, "workflows");
    const artifactsDir = path.join(this.root, "artifacts");
    for (const dir of [workflowsDir, artifactsDir]) {
      try {
        makeDirsSync(dir);
      } catch (err) {
        throw toStorageError("create folder", dir, err);
      }
    }
    this.workflows = new FileWorkflowStore(workflowsDir);
    // Created on the first save: a base folder without skills stays as it was.
    this.skills = new FileSkillStore(path.join(this.root, "skills"), { maxStoreBytes: resolveQuota({ ...(maxStoreBytes !== undefined ? { maxStoreBytes } : {}) }).maxStoreBytes });
    const quota: QuotaOptions = {
      ...(maxArtifactBytes !== undefined ? { maxArtifactBytes } : {}),
      ...(maxStoreBytes !== undefined ? { maxStoreBytes } : {}),
    };
    this.artifacts = new FileArtifactStore(artifactsDir, quota);
    this.runs = new FileRunStore(path.join(this.root, "runs"));
    const maxAge = tempMaxAgeMs ?? DEFAULT_TEMP_MAX_AGE_MS;
    // Temp folders, plus the folders where an older version put its temp files.
    const dirs = [path.join(workflowsDir, WORKFLOW_TEMP_DIR), path.join(artifactsDir, ARTIFACT_TEMP_DIR), path.join(this.runs.dir, RUNS_TEMP_DIR), workflowsDir, artifactsDir];
    this.swept = Promise.all([...dirs.map((d) => sweepTempFiles(d, maxAge)), this.skills.sweep(maxAge)]).then((counts) => counts.reduce((a, b) => a + b, 0));
  }

  /** How many leftover temp files the sweep on open removed (it never fails). */
  sweepDone(): Promise<number> {
    return this.swept;
  }

  toDescriptor(): StorageDescriptor {
    return this.workspaceId === undefined
      ? { type: "file", basePath: this.basePath }
      : { type: "file", basePath: this.basePath, workspaceId: this.workspaceId };
  }

  /** Waits for the sweep started on open and stops the workflow folder's watcher (a later listing sweeps instead). Safe to call any number of times. */
  async close(): Promise<void> {
    await this.workflows.close();
    await this.swept;
  }
}
