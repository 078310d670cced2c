/**
 * The storage contract. A backend holds two stores (workflows, artifacts) and can describe itself
 * as JSON so that an executor in another process or container can reconnect to the same data.
 * Nothing here knows about executors, tools or TypeScript.
 */

import type { RunStore } from "./runs.js";

/** A JSON value as stored in metadata and JSON artifacts. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface WorkflowParam {
  name: string;
  /** TypeScript type text, e.g. "string", "number", "string[]", "unknown". */
  type: string;
  description?: string;
  required: boolean;
  /** The default as a value (`retries = 3` → 3); absent when none, or when it is not a literal (`defaultExpression`). */
  default?: JsonValue;
  /** Source text of a default that is not a literal (`limit = MAX * 2`): computed when `run` is called. */
  defaultExpression?: string;
}

/** One workflow as stored. `params`/`description` may be missing for hand-written files; the
 * workflows layer derives them from the source. */
export interface WorkflowRecord {
  name: string;
  source: string;
  description: string;
  params?: WorkflowParam[];
  createdAt: string;
  updatedAt: string;
  author?: string;
  /** The language of `source`: absent means TypeScript/JavaScript; "python" means a Python module defining `run` (run only by Python guests). */
  language?: "python";
  /**
   * True when `description` was given by the author (e.g. to `workflows.create`) rather than derived
   * from the source's JSDoc. When the source is edited outside the store, an explicit description is
   * kept and a derived one is dropped (returned as "") so the workflows layer derives it again.
   * Absent: a non-empty description counts as explicit, so nothing the author wrote is ever lost.
   */
  descriptionExplicit?: boolean;
  /** Who saved this workflow: the trust level and executor of the session that saved it. Absent for hand-written files. */
  provenance?: { trust: "trusted" | "untrusted"; executor: string; savedAt: string };
}

/** A file in a workflow folder (or a Redis entry) that the store cannot offer as a workflow, and why. */
export interface WorkflowFileProblem {
  /** The file's name relative to the workflow folder, e.g. "scan-host.ts" (Redis: the hash field). */
  file: string;
  problem: string;
}

export interface WorkflowStore {
  /** Create or replace. Atomic: readers see the old or the new record, never a mix. */
  save(record: WorkflowRecord): Promise<void>;
  get(name: string): Promise<WorkflowRecord | null>;
  list(): Promise<WorkflowRecord[]>;
  /** True when something was deleted. */
  delete(name: string): Promise<boolean>;
  /**
   * What the store found but cannot offer as workflows, so a listing can show them instead of
   * hiding them: FileStorage's `scan-host.ts` (not a valid workflow name) or an unreadable file
   * (EACCES, a symlink loop), RedisStorage's corrupt entries. `list()` leaves those out rather
   * than failing: one bad entry never hides the others.
   */
  problems?(): Promise<WorkflowFileProblem[]>;
  /**
   * What the workflows layer derived from a record `list()` returned (its signature), if the store
   * kept it: a new process then need not parse 10,000 sources again. Keyed by the record object, so
   * it is dropped with the record when the file changes. Stores that keep nothing do not implement it.
   */
  derivedOf?(record: WorkflowRecord): WorkflowDerivation | undefined;
  /** Keeps `derived` with a record `list()` returned, until that record's file changes. */
  rememberDerived?(record: WorkflowRecord, derived: WorkflowDerivation): void;
}

/** What is derived from a workflow's source without running it (workflows/signature.ts). */
export interface WorkflowDerivation {
  description: string | null;
  params: WorkflowParam[];
  closedParams: boolean;
  hasRun: boolean;
  syntaxError: { message: string; line: number; column: number } | null;
}

export type ArtifactKind = "text" | "bytes" | "json";
export type ArtifactData = string | Uint8Array | JsonValue;

export interface ArtifactInfo {
  name: string;
  kind: ArtifactKind;
  /** Size of the stored payload in bytes. */
  size: number;
  description: string;
  metadata: Record<string, JsonValue>;
  createdAt: string;
  updatedAt: string;
}

/** An artifact the store holds but cannot read, and why. */
export interface ArtifactProblem {
  name: string;
  problem: string;
}

export interface SaveArtifactOptions {
  description?: string;
  metadata?: Record<string, JsonValue>;
}

export interface ArtifactStore {
  /** Create or replace. Strings come back as strings, bytes as Uint8Array, anything else as JSON. */
  save(name: string, data: ArtifactData, options?: SaveArtifactOptions): Promise<ArtifactInfo>;
  /** The data, or undefined when there is no such artifact. */
  load(name: string): Promise<ArtifactData | undefined>;
  /** Metadata only. */
  get(name: string): Promise<ArtifactInfo | null>;
  /** Every artifact that can be read; one that cannot is left out (see `problems`), never fails the listing. */
  list(): Promise<ArtifactInfo[]>;
  /** The artifacts `list()` left out, and why (an unreadable file, a corrupt Redis entry). */
  problems?(): Promise<ArtifactProblem[]>;
  exists(name: string): Promise<boolean>;
  delete(name: string): Promise<boolean>;
}

/** One file of a skill folder: its path relative to the folder ("SKILL.md", "scripts/x.py") and its bytes. */
export interface SkillFile {
  path: string;
  bytes: Uint8Array;
}

/**
 * Agent Skills as folders of files (see src/skills/). The store knows files, not the SKILL.md format;
 * the skills layer parses and validates. Paths follow the artifact-name rules (no "..", no leading
 * "."), except the one sidecar the skills layer keeps (PROVENANCE_FILE in src/skills/store-rules.ts).
 */
export interface SkillStore {
  /** Create or replace the whole folder. One commit point: readers see the old folder or the new one, never a mix. */
  save(name: string, files: readonly SkillFile[]): Promise<void>;
  /** Names of the stored skills, sorted. */
  names(): Promise<string[]>;
  /** The folder's files with their sizes, sorted by path; null when there is no such skill. */
  files(name: string): Promise<Array<{ path: string; size: number }> | null>;
  /** One file's bytes; null when the skill or the file does not exist. */
  read(name: string, path: string): Promise<Uint8Array | null>;
  delete(name: string): Promise<boolean>;
  /** Where the skill lives, for a catalog's `<location>`: a file path, or a `skill://` URI. */
  location(name: string): string;
  /** A folder on disk holding the skill's files, when the store keeps them on disk (to run scripts in place). */
  folder?(name: string): string;
}

export type StorageDescriptor =
  | { type: "file"; basePath: string; workspaceId?: string }
  | { type: "redis"; url: string; prefix: string; workspaceId?: string };

/** Named byte values grouped by namespace, shared by every process using the backend. */
export interface BlobStore {
  getMany(namespace: string, keys: readonly string[]): Promise<Map<string, Uint8Array>>;
  setMany(namespace: string, entries: ReadonlyMap<string, Uint8Array>): Promise<void>;
  deleteMany(namespace: string, keys: readonly string[]): Promise<void>;
  keys(namespace: string): Promise<string[]>;
}

export interface StorageBackend {
  readonly workflows: WorkflowStore;
  readonly artifacts: ArtifactStore;
  /** Agent Skills, when the backend keeps them (FileStorage, RedisStorage). */
  readonly skills?: SkillStore;
  /** The run ledger (src/storage/runs.ts), when the backend keeps one (FileStorage, RedisStorage). */
  readonly runs?: RunStore;
  /** JSON-safe description from which `storageFromDescriptor` rebuilds an equivalent backend. */
  toDescriptor(): StorageDescriptor;
  /** Where file-based companions (deps folder, vector cache) may live, if the backend has a disk home. */
  readonly basePath?: string;
  /** Shared named byte values (search vectors), when the backend offers them (Redis). */
  readonly blobs?: BlobStore;
  /** A shared list for the deps layer's configured packages, when the backend offers one (Redis). */
  readonly depsList?: { list(): Promise<string[]>; write(items: string[]): Promise<void> };
  /** The same for Python sessions' packages (a list of its own: npm and pip specs never mix). The venv stays local per machine. */
  readonly pythonDepsList?: { list(): Promise<string[]>; write(items: string[]): Promise<void> };
  close(): Promise<void>;
}

/** Runtime check used where storage arrives from user code (Session constructor). */
export function isStorageBackend(value: unknown): value is StorageBackend {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Partial<StorageBackend>;
  return typeof v.workflows === "object" && typeof v.artifacts === "object" && typeof v.toDescriptor === "function";
}
