/**
 * The operation index: what listing and searching a spec's operations need (each operation's name
 * and one-line description, the tool's title, the request target), kept in one small JSON file so
 * that a new process registers a large spec without parsing it. GitHub's 13 MB description gives a
 * 0.4 MB index: a load reads and hashes the spec's stored bytes (0.9 MB gzip, no gunzip) and parses
 * the index; the document itself is parsed when an operation is first described or called.
 *
 * An index is derived data and never trusted: it is used only when its key — the sha256 of the
 * spec's bytes as stored plus everything else the index depends on (filters, limits, base_url, where
 * the spec is) — matches, and when every field passes the checks below; anything else (a changed
 * spec, a torn or edited file, another format) reads as missing, and the caller parses the spec
 * and writes a new index. Files are written with the atomic temp-file-and-rename of
 * storage/atomic.ts (a reader sees the old index or the new one, never a prefix), one file per
 * tool, so the folder holds at most one index per tool file that ever used it.
 */
import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import path from "node:path";
import { isErrno, sweepTempFiles, writeFileAtomic, DEFAULT_TEMP_MAX_AGE_MS } from "../../../storage/atomic.js";
import { IDENTIFIER_RE } from "../../validate.js";
import { normaliseBaseUrl } from "../http/schema.js";
import { UNSAFE_CALLABLE_NAMES } from "./operations.js";

/** Bump when what an index holds, or how any of it is derived from a spec, changes. */
export const INDEX_FORMAT = 1;
/** Largest index file read (GitHub's 1,223 operations take 0.4 MB; 10,000 long ones fit). */
const MAX_INDEX_BYTES = 32 * 1024 * 1024;
/** Longest text accepted in an index (descriptions are cut at 400 characters plus the route). */
const MAX_INDEX_TEXT = 4_000;
const MAX_NAME = 250;

export interface IndexedOperation {
  name: string;
  /** The callable's description, as shown by listing and search. */
  description: string;
}

export interface OperationIndex {
  /** The spec's `info.title` and the first paragraph of `info.description`. */
  title: string;
  about: string;
  /** Where requests go (the YAML's base_url, else the spec's first server). */
  baseUrl: string;
  /** The document is YAML (its parser is loaded before the document is needed). */
  yaml: boolean;
  operations: IndexedOperation[];
}

/** The sha256 hex of `bytes`: the spec's identity in an index key. */
export function specHash(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The key an index must carry to be used: the spec's hash and every input that shapes the index. */
export function indexKey(hash: string, inputs: Record<string, unknown>): string {
  return createHash("sha256").update(JSON.stringify({ format: INDEX_FORMAT, spec: hash, inputs })).digest("hex");
}

/** The index file of one tool (`identity`: where its definition is and its name) in `dir`. */
export function indexFile(dir: string, identity: string): string {
  return path.join(dir, `${createHash("sha256").update(identity).digest("hex").slice(0, 32)}.json`);
}

function isText(v: unknown, max = MAX_INDEX_TEXT): v is string {
  return typeof v === "string" && v.length <= max;
}

/** The index's fields, checked one by one; null when anything is off. */
function checked(body: unknown, maxOperations: number): OperationIndex | null {
  if (typeof body !== "object" || body === null) return null;
  const b = body as Record<string, unknown>;
  if (!isText(b["title"]) || !isText(b["about"]) || typeof b["yaml"] !== "boolean" || !isText(b["baseUrl"])) return null;
  const base = normaliseBaseUrl(b["baseUrl"]);
  if ("problem" in base || base.url !== b["baseUrl"]) return null;
  const ops = b["operations"];
  if (!Array.isArray(ops) || ops.length > maxOperations) return null;
  const names = new Set<string>();
  const operations: IndexedOperation[] = [];
  for (const op of ops as unknown[]) {
    if (typeof op !== "object" || op === null) return null;
    const { name, description } = op as Record<string, unknown>;
    if (!isText(name, MAX_NAME) || !IDENTIFIER_RE.test(name) || UNSAFE_CALLABLE_NAMES.has(name) || names.has(name) || !isText(description)) return null;
    names.add(name);
    operations.push({ name, description });
  }
  return { title: b["title"], about: b["about"], baseUrl: b["baseUrl"], yaml: b["yaml"], operations };
}

/** Reads at most MAX_INDEX_BYTES of `file`; null when it is missing or larger. */
async function readCapped(file: string): Promise<Buffer | null> {
  let handle;
  try {
    handle = await open(file, "r");
  } catch (err) {
    if (isErrno(err, "ENOENT", "ENOTDIR", "EISDIR")) return null;
    throw err;
  }
  try {
    const { size } = await handle.stat();
    if (size > MAX_INDEX_BYTES) return null;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * The index in `file` when it carries `key` and passes every check; null otherwise (missing,
 * stale, torn, edited, unreadable). Never throws: an index is only ever a shortcut.
 */
export async function readOperationIndex(file: string, key: string, maxOperations: number): Promise<OperationIndex | null> {
  try {
    const bytes = await readCapped(file);
    if (!bytes) return null;
    const parsed = JSON.parse(bytes.toString("utf8")) as unknown;
    if (typeof parsed !== "object" || parsed === null) return null;
    const { format, key: stored, index } = parsed as Record<string, unknown>;
    if (format !== INDEX_FORMAT || stored !== key) return null;
    return checked(index, maxOperations);
  } catch {
    return null;
  }
}

/**
 * Writes `index` under `key`, atomically. Fails quietly (a read-only base, a full disk): the next
 * load parses the spec again, which is all a missing index costs. Temp files a killed writer left
 * in the folder are swept first.
 */
export async function writeOperationIndex(file: string, key: string, index: OperationIndex): Promise<void> {
  try {
    await sweepTempFiles(path.dirname(file), DEFAULT_TEMP_MAX_AGE_MS).catch(() => 0);
    await writeFileAtomic(file, JSON.stringify({ format: INDEX_FORMAT, key, index }));
  } catch {
    // The index is a shortcut; the spec itself was read and parsed.
  }
}
