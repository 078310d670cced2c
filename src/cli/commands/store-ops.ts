/**
 * What `ts-code-mode store` does, apart from flags and printing: copy workflows or tool YAML from a
 * folder into Redis (bootstrap), read them back out (list, pull), and compare the two (diff).
 * Each operation returns a plain report so the command can print it as text or JSON.
 */
import { readdir, readFile, stat, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { FileWorkflowStore } from "../../storage/file/workflows.js";
import type { WorkflowRecord } from "../../storage/protocol.js";
import type { RedisStorage } from "../../storage/redis/storage.js";
import { validateToolFileStem } from "../../storage/redis/tools.js";
import { compareNames } from "../../storage/names.js";
import { extractSignature } from "../../workflows/signature.js";
import { bootstrapSkills, diffSkills, listSkills, pullSkills, type ListedSkill } from "./store-skills.js";

export type StoreType = "workflows" | "tools" | "skills";
export const STORE_TYPES: readonly StoreType[] = ["workflows", "tools", "skills"];

/** Called every PROGRESS_EVERY items (and at the end) during long operations. */
export type Progress = (done: number, total: number, what: string) => void;
export const PROGRESS_EVERY = 100;

export interface SourceItem {
  name: string;
  /** What `diff` compares: the workflow's source and explicit description, or the YAML text. */
  fingerprint: string;
}

export interface BootstrapReport {
  type: StoreType;
  source: string;
  written: string[];
  /** With --clear: names that were in the target and not in the source. */
  removed: string[];
  warnings: string[];
}

export type DiffStatus = "+" | "-" | "~" | "=";
export interface DiffEntry {
  status: DiffStatus;
  name: string;
}

export interface PullReport {
  type: StoreType;
  dest: string;
  written: Array<{ name: string; file: string; outcome: "created" | "replaced" | "unchanged" }>;
}

// ---- sources ------------------------------------------------------------------------------------

/** `DIR/workflows` (a base folder) when it exists, else DIR itself; likewise `DIR/tools`. */
export async function resolveSourceDir(dir: string, type: StoreType): Promise<string> {
  const abs = path.resolve(dir);
  const nested = path.join(abs, type);
  if (await isDirectory(nested)) return nested;
  if (await isDirectory(abs)) return abs;
  throw new SourceError(`Source folder ${abs} does not exist (or is not a folder).`);
}

/** A problem with the --source folder (reported as a usage error). */
export class SourceError extends Error {
  override readonly name = "SourceError";
}

/**
 * The workflows of a folder, as FileStorage reads them (`<name>.ts`/`.js`, with `.meta` sidecars
 * when present). Hand-written files get their params and description derived here, once, so a
 * store with thousands of workflows never has to parse them all again on every listing.
 */
export async function readSourceWorkflows(dir: string, progress?: Progress): Promise<{ records: WorkflowRecord[]; warnings: string[] }> {
  // Copies: the store hands out frozen records (its catalogue shares them), and these get params filled in.
  const records = (await new FileWorkflowStore(dir).list()).map((r) => ({ ...r }));
  const warnings: string[] = [];
  let done = 0;
  for (const r of records) {
    if (r.params === undefined || r.description === "") {
      const sig = await extractSignature(r.source, `${r.name}.ts`);
      if (sig.syntaxError) warnings.push(`${r.name}: syntax error at line ${sig.syntaxError.line}:${sig.syntaxError.column}: ${sig.syntaxError.message}`);
      else if (!sig.hasRun) warnings.push(`${r.name}: does not export a function named run`);
      if (!sig.syntaxError) {
        r.params ??= sig.params;
        if (r.description === "" && sig.description) {
          r.description = sig.description;
          r.descriptionExplicit = false;
        }
      }
    }
    done++;
    if (progress && (done % PROGRESS_EVERY === 0 || done === records.length)) progress(done, records.length, "workflows read");
  }
  return { records, warnings };
}

/** `*.yaml` / `*.yml` files of a folder (not hidden, not in subfolders), like ToolRegistry.load. */
export async function readSourceTools(dir: string): Promise<Array<{ name: string; text: string }>> {
  const entries = await readdir(dir, { withFileTypes: true });
  const docs: Array<{ name: string; text: string }> = [];
  const seen = new Map<string, string>();
  for (const e of entries) {
    if (!(e.isFile() || e.isSymbolicLink()) || e.name.startsWith(".") || !/\.ya?ml$/i.test(e.name)) continue;
    const name = validateToolFileStem(e.name.replace(/\.ya?ml$/i, ""));
    const other = seen.get(name);
    if (other) throw new SourceError(`Both ${other} and ${e.name} would be stored as tool "${name}"; keep one of them.`);
    seen.set(name, e.name);
    docs.push({ name, text: await readFile(path.join(dir, e.name), "utf8") });
  }
  return docs.sort((a, b) => compareNames(a.name, b.name));
}

export function workflowFingerprint(r: WorkflowRecord): string {
  const explicit = r.descriptionExplicit ?? r.description !== "";
  return JSON.stringify([r.source, explicit ? r.description : ""]);
}

// ---- operations ---------------------------------------------------------------------------------

export async function bootstrap(
  storage: RedisStorage,
  type: StoreType,
  sourceDir: string,
  options: { clear: boolean; progress?: Progress },
): Promise<BootstrapReport> {
  if (type === "skills") return bootstrapSkills(storage, sourceDir, options);
  if (type === "workflows") {
    const { records, warnings } = await readSourceWorkflows(sourceDir, options.progress);
    const before = options.clear ? (await storage.workflows.list()).map((r) => r.name) : [];
    await storage.workflows.saveMany(records, { clear: options.clear });
    options.progress?.(records.length, records.length, "workflows written");
    const written = records.map((r) => r.name);
    return { type, source: sourceDir, written, removed: without(before, written), warnings };
  }
  const docs = await readSourceTools(sourceDir);
  const before = options.clear ? (await storage.tools.list()).map((d) => d.name) : [];
  await storage.tools.saveMany(docs, { clear: options.clear });
  const written = docs.map((d) => d.name);
  return { type, source: sourceDir, written, removed: without(before, written), warnings: [] };
}

export interface ListedWorkflow {
  name: string;
  description: string;
  params: number;
  updatedAt: string;
}
export interface ListedTool {
  name: string;
  file: string;
  bytes: number;
  description: string;
}

export async function listTarget(storage: RedisStorage, type: StoreType): Promise<ListedWorkflow[] | ListedTool[] | ListedSkill[]> {
  if (type === "skills") return listSkills(storage);
  if (type === "workflows") {
    return (await storage.workflows.list()).map((r) => ({ name: r.name, description: r.description, params: r.params?.length ?? 0, updatedAt: r.updatedAt }));
  }
  // Loaded here, not at startup: every other command of the CLI would pay for the YAML parser.
  const { parse: parseYaml } = await import("yaml");
  return (await storage.tools.list()).map((d) => ({ name: d.name, file: d.file, bytes: Buffer.byteLength(d.text), description: yamlDescription(parseYaml, d.text) }));
}

export async function pull(storage: RedisStorage, type: StoreType, dest: string, progress?: Progress): Promise<PullReport> {
  if (type === "skills") return pullSkills(storage, dest);
  const dir = path.join(path.resolve(dest), type);
  await mkdir(dir, { recursive: true });
  const written: PullReport["written"] = [];
  if (type === "workflows") {
    const store = new FileWorkflowStore(dir);
    const records = await storage.workflows.list();
    for (const r of records) {
      const existing = await store.get(r.name);
      const outcome = !existing ? "created" : sameWorkflow(existing, r) ? "unchanged" : "replaced";
      if (outcome !== "unchanged") await store.save(r);
      written.push({ name: r.name, file: path.join(dir, `${r.name}.ts`), outcome });
      if (progress && (written.length % PROGRESS_EVERY === 0 || written.length === records.length)) progress(written.length, records.length, "workflows pulled");
    }
  } else {
    for (const d of await storage.tools.list()) {
      const file = path.join(dir, d.file);
      const old = await readFile(file, "utf8").catch(() => null);
      const outcome = old === null ? "created" : old === d.text ? "unchanged" : "replaced";
      if (outcome !== "unchanged") await writeFile(file, d.text);
      written.push({ name: d.name, file, outcome });
    }
  }
  return { type, dest: dir, written };
}

export async function diff(storage: RedisStorage, type: StoreType, sourceDir: string): Promise<DiffEntry[]> {
  if (type === "skills") return diffSkills(storage, sourceDir);
  const source = new Map<string, string>();
  const target = new Map<string, string>();
  if (type === "workflows") {
    for (const r of await new FileWorkflowStore(sourceDir).list()) source.set(r.name, workflowFingerprint(r));
    for (const r of await storage.workflows.list()) target.set(r.name, workflowFingerprint(r));
  } else {
    for (const d of await readSourceTools(sourceDir)) source.set(d.name, d.text);
    for (const d of await storage.tools.list()) target.set(d.name, d.text);
  }
  const names = [...new Set([...source.keys(), ...target.keys()])].sort(compareNames);
  return names.map((name) => {
    const s = source.get(name);
    const t = target.get(name);
    const status: DiffStatus = t === undefined ? "+" : s === undefined ? "-" : s === t ? "=" : "~";
    return { status, name };
  });
}

// ---- helpers ------------------------------------------------------------------------------------

function sameWorkflow(a: WorkflowRecord, b: WorkflowRecord): boolean {
  return workflowFingerprint(a) === workflowFingerprint(b);
}

function without(all: string[], keep: string[]): string[] {
  const k = new Set(keep);
  return all.filter((n) => !k.has(n));
}

function yamlDescription(parseYaml: (text: string) => unknown, text: string): string {
  try {
    const doc = parseYaml(text) as unknown;
    const d = typeof doc === "object" && doc !== null ? (doc as Record<string, unknown>)["description"] : undefined;
    return typeof d === "string" ? d : "";
  } catch {
    return "";
  }
}

async function isDirectory(p: string): Promise<boolean> {
  return stat(p).then((s) => s.isDirectory(), () => false);
}
