/**
 * The catalogue of a workflow folder: every workflow file's parsed record, keyed by name, with the
 * stamp of the file it was read from (inode, size, mtime, ctime). It is a cache: the files stay the
 * truth, and an entry is used only while its file's stamp is unchanged. Listing 10,000 workflows
 * then costs a directory stat instead of 10,000 reads and parses.
 *
 * How it stays current:
 * - The folder's own stamp (mtime/ctime) changes with every file added, removed or renamed into
 *   place, which is how every save and delete commits (temp file + rename; unlink). When it
 *   differs from the one recorded at the last sweep, `current()` sweeps: one stat per file, and
 *   only files whose stamp differs are read again. This covers other processes' saves and deletes.
 * - An fs.watch watcher on the folder reports files edited in place (an editor saving without a
 *   rename changes no folder stamp); only those names are read again. Without a watcher (it could
 *   not start, or failed) every `current()` sweeps.
 * - Timestamps come from a coarse clock, so two changes within one tick can leave the same stamp.
 *   As git does with its index, a stamp less than RACY_MS older than the moment it was observed is
 *   not trusted: such a file (or the folder) is checked again by the next call.
 * - `<folder>/.catalogue/workflows.json` keeps the entries between processes, so a new process validates
 *   stamps instead of reading every file. It is written atomically (temp file + rename) some time
 *   after a change and on close; a torn, corrupt or foreign catalogue file is ignored and rebuilt.
 *   It trusts nothing the folder's files do not: anyone who can write it can write the files.
 * - Each entry may also carry what the workflows layer derived from its source (signature: params,
 *   description, whether it exports `run`), so a new process need not load the TypeScript parser
 *   and parse every file before its first search. It belongs to the entry, so a changed file (new
 *   stamp, new entry) is derived again.
 */
import { watch, type FSWatcher, type Stats } from "node:fs";
import { mkdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { isErrno, unreadableReason, writeFileAtomic } from "../atomic.js";
import type { WorkflowDerivation, WorkflowRecord } from "../protocol.js";

/**
 * Relative to the workflow folder. In a subfolder so that writing it (temp file in `.tmp/`, renamed
 * into `.catalogue/`) changes neither the workflow folder's stamp nor anything its watcher sees.
 */
export const CATALOGUE_FILE = path.join(".catalogue", "workflows.json");
const CATALOGUE_VERSION = 1;
/** A stamp this close (ms) to the moment it was observed may hide a second change in the same clock tick. */
export const RACY_MS = 100;
/** How long after a change the catalogue file is written (several saves in a row write it once). */
const PERSIST_DELAY_MS = 1000;
/** Files stat'ed at once during a sweep. */
const PARALLEL_STATS = 256;

export interface FileStamp {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** A workflow as read from its file: the record, and a problem reading the header, if any. */
export interface CatalogueRecord {
  record: WorkflowRecord;
  problem?: string;
}

interface Entry {
  /** The file the record was read from, e.g. `scan.ts`. */
  file: string;
  stamp: FileStamp;
  read: CatalogueRecord;
  /** The stamp was too recent to trust: read the file again next time. */
  racy: boolean;
  /** What the workflows layer derived from `read.record.source`, once it has. */
  derived?: WorkflowDerivation;
}

/** Reads one workflow by name: the record and the stamp taken BEFORE reading (so a later change always shows). */
export type ReadWorkflow = (name: string) => Promise<{ read: CatalogueRecord; file: string; stamp: FileStamp } | null>;
/** The workflow names present in the folder (`.py` wins over `.ts`, which wins over `.js`), with the file that holds each. */
export type ScanFolder = () => Promise<Map<string, string>>;

export function stampOf(st: Stats): FileStamp {
  return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

function isRacy(stamp: FileStamp, observedAt: number): boolean {
  return observedAt - Math.max(stamp.mtimeMs, stamp.ctimeMs) < RACY_MS;
}

export class WorkflowCatalogue {
  private entries = new Map<string, Entry>();
  private loaded = false;
  private dirStamp: FileStamp | null = null;
  private dirRacy = true;
  private watcher: FSWatcher | null = null;
  private watchFailed = false;
  /** Names the watcher reported (or this process wrote) since the last call. */
  private readonly dirty = new Set<string>();
  /** The watcher reported something it could not name: sweep. */
  private sweepNeeded = true;
  private persistTimer: NodeJS.Timeout | null = null;
  private persisting: Promise<void> | null = null;
  private changedSincePersist = false;
  /** One refresh at a time; concurrent callers share it. */
  private refreshing: Promise<void> | null = null;
  private closed = false;
  /** The entry each handed-out record came from, so derived data lands on (and is read from) that entry only. */
  private readonly entryOf = new WeakMap<WorkflowRecord, Entry>();

  constructor(
    readonly directory: string,
    private readonly scan: ScanFolder,
    private readonly readWorkflow: ReadWorkflow,
  ) {}

  /** The records of every workflow in the folder, current as of this call, in no particular order. */
  async records(): Promise<CatalogueRecord[]> {
    await this.refresh();
    return Array.from(this.entries.values(), (e) => e.read);
  }

  /** What was derived from `record` (as returned by records()), while its entry is current. */
  derivedOf(record: WorkflowRecord): WorkflowDerivation | undefined {
    return this.entryOf.get(record)?.derived;
  }

  /** Keeps `derived` with `record`'s entry (and in the catalogue file); ignored once the entry was replaced. */
  rememberDerived(record: WorkflowRecord, derived: WorkflowDerivation): void {
    const entry = this.entryOf.get(record);
    if (!entry || entry.derived || this.entries.get(record.name) !== entry) return;
    entry.derived = freezeDerived(structuredClone(derived));
    if (!entry.racy) this.changed();
  }

  /** This process changed `name` (saved or deleted it): read it again before the next listing. */
  noteWrite(name: string): void {
    this.dirty.add(name);
  }

  /** Stops the watcher and writes the catalogue file if it changed. The catalogue stays usable (it sweeps). */
  async close(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    this.watcher = null;
    if (this.persistTimer) clearTimeout(this.persistTimer);
    this.persistTimer = null;
    await this.persisting;
    if (this.changedSincePersist && this.loaded) await this.persist();
  }

  private refresh(): Promise<void> {
    this.refreshing ??= this.doRefresh().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async doRefresh(): Promise<void> {
    if (!this.loaded) {
      this.startWatcher();
      await this.load();
      this.loaded = true;
    }
    const observedAt = Date.now();
    let dir: Stats;
    try {
      dir = await stat(this.directory);
    } catch (err) {
      if (!isErrno(err, "ENOENT")) throw err;
      this.replaceAll(new Map());
      return;
    }
    const dirStamp = stampOf(dir);
    const folderChanged = this.dirStamp === null || this.dirRacy || !sameStamp(this.dirStamp, dirStamp);
    if (folderChanged || this.sweepNeeded || !this.watcher) {
      this.dirty.clear();
      this.sweepNeeded = false;
      await this.sweep(observedAt);
      this.dirStamp = dirStamp;
      this.dirRacy = isRacy(dirStamp, observedAt);
      return;
    }
    // Only files edited in place (or written by us) since the last call, plus stamps too fresh to trust.
    const names = new Set(this.dirty);
    this.dirty.clear();
    for (const [name, e] of this.entries) if (e.racy) names.add(name);
    for (const name of names) {
      if (!this.entries.has(name)) {
        // A name we do not hold, with an unchanged folder: cheap to settle with a sweep.
        await this.sweep(observedAt);
        return;
      }
      await this.reread(name, observedAt);
    }
  }

  /** One stat per file; files whose stamp changed (or was racy) are read again, vanished ones dropped. */
  private async sweep(observedAt: number): Promise<void> {
    const present = await this.scan();
    const next = new Map<string, Entry>();
    const names = [...present.keys()];
    let i = 0;
    const worker = async () => {
      while (i < names.length) {
        const name = names[i++]!;
        const file = present.get(name)!;
        const old = this.entries.get(name);
        if (old && !old.racy && old.file === file) {
          let st: Stats | null = null;
          try {
            st = await stat(path.join(this.directory, file));
          } catch (err) {
            // Unreadable (ELOOP, EACCES...): readEntry below leaves it out; problems() names it.
            if (!isErrno(err, "ENOENT", "ENOTDIR") && unreadableReason(err) === null) throw err;
          }
          if (st && sameStamp(old.stamp, stampOf(st))) {
            next.set(name, old);
            continue;
          }
        }
        const fresh = await this.readEntry(name, observedAt);
        if (fresh) next.set(name, fresh);
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_STATS, names.length) }, worker));
    this.replaceAll(next);
  }

  private async reread(name: string, observedAt: number): Promise<void> {
    const fresh = await this.readEntry(name, observedAt);
    if (fresh) this.entries.set(name, fresh);
    else this.entries.delete(name);
    this.changed();
  }

  /** Null when there is no such workflow, or its file cannot be read: one bad file never fails the listing of the others. */
  private async readEntry(name: string, observedAt: number): Promise<Entry | null> {
    let got: Awaited<ReturnType<ReadWorkflow>>;
    try {
      got = await this.readWorkflow(name);
    } catch (err) {
      if (unreadableReason(err) === null) throw err;
      return null;
    }
    if (!got) return null;
    const entry: Entry = { file: got.file, stamp: got.stamp, read: freezeRead(got.read), racy: isRacy(got.stamp, observedAt) };
    this.entryOf.set(entry.read.record, entry);
    return entry;
  }

  private replaceAll(next: Map<string, Entry>): void {
    let same = next.size === this.entries.size;
    if (same) for (const [name, e] of next) if (this.entries.get(name) !== e) same = false;
    this.entries = next;
    if (!same) this.changed();
  }

  private changed(): void {
    this.changedSincePersist = true;
    if (this.persistTimer || this.closed) return;
    this.persistTimer = setTimeout(() => {
      this.persistTimer = null;
      this.persisting = this.persist().finally(() => (this.persisting = null));
    }, PERSIST_DELAY_MS);
    this.persistTimer.unref();
  }

  /** Writes the entries whose stamps are trustworthy; a failure only costs the next process a full read. */
  private async persist(): Promise<void> {
    this.changedSincePersist = false;
    const entries = [...this.entries].filter(([, e]) => !e.racy).map(([name, e]) => ({ name, file: e.file, stamp: e.stamp, ...e.read, ...(e.derived ? { derived: e.derived } : {}) }));
    try {
      // A cache of this folder: if the folder was removed meanwhile (its owner deleted the store),
      // do not make it again. The non-recursive mkdir of the temp folder fails when it is gone.
      const tempDir = path.join(this.directory, ".tmp");
      await mkdir(tempDir).catch((err: unknown) => {
        if (!isErrno(err, "EEXIST")) throw err;
      });
      await writeFileAtomic(path.join(this.directory, CATALOGUE_FILE), JSON.stringify({ version: CATALOGUE_VERSION, entries }), { tempDir });
    } catch {
      // A cache: the files remain the truth.
    }
  }

  /** Entries from the catalogue file, to be validated by the first sweep; anything unreadable is ignored. */
  private async load(): Promise<void> {
    // Made now, before the folder's stamp is first recorded, so the first save of the catalogue does not look like a change.
    await mkdir(path.join(this.directory, path.dirname(CATALOGUE_FILE)), { recursive: true }).catch(() => undefined);
    let text: string;
    try {
      text = await readFile(path.join(this.directory, CATALOGUE_FILE), "utf8");
    } catch {
      return;
    }
    const entries = parseCatalogue(text);
    if (!entries) {
      this.changedSincePersist = true; // rewrite the broken file after the first sweep
      return;
    }
    // Loaded entries are never racy: their stamps are compared with the files' on the first sweep.
    for (const e of entries) {
      const entry: Entry = { file: e.file, stamp: e.stamp, read: freezeRead(e.read), racy: false };
      if (e.derived) entry.derived = freezeDerived(e.derived);
      this.entryOf.set(entry.read.record, entry);
      this.entries.set(e.name, entry);
    }
  }

  private startWatcher(): void {
    if (this.watcher || this.watchFailed || this.closed) return;
    try {
      const w = watch(this.directory, { persistent: false }, (_event, filename) => {
        const m = typeof filename === "string" ? /^(.*)\.(py|ts|js)$/.exec(filename) : null;
        if (m) this.dirty.add(m[1]!);
        else if (filename === null || filename === undefined) this.sweepNeeded = true;
      });
      w.on("error", () => {
        // From now on every listing sweeps.
        w.close();
        if (this.watcher === w) this.watcher = null;
        this.watchFailed = true;
      });
      this.watcher = w;
    } catch {
      this.watchFailed = true;
    }
  }
}

/** The catalogue file's entries, or null when it is not one this version wrote completely. */
interface LoadedEntry {
  name: string;
  file: string;
  stamp: FileStamp;
  read: CatalogueRecord;
  derived?: WorkflowDerivation;
}

function parseCatalogue(text: string): LoadedEntry[] | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(value) || value["version"] !== CATALOGUE_VERSION || !Array.isArray(value["entries"])) return null;
  const out: LoadedEntry[] = [];
  for (const e of value["entries"] as unknown[]) {
    if (!isObject(e) || typeof e["name"] !== "string" || typeof e["file"] !== "string" || !isStamp(e["stamp"])) return null;
    const record = e["record"];
    if (!isRecord(record) || record.name !== e["name"] || (e["problem"] !== undefined && typeof e["problem"] !== "string")) return null;
    const derived = e["derived"];
    if (derived !== undefined && !isDerivation(derived)) return null;
    out.push({
      name: e["name"],
      file: e["file"],
      stamp: e["stamp"],
      read: { record, ...(typeof e["problem"] === "string" ? { problem: e["problem"] } : {}) },
      ...(derived ? { derived } : {}),
    });
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isStamp(v: unknown): v is FileStamp {
  return isObject(v) && ["ino", "size", "mtimeMs", "ctimeMs"].every((k) => typeof v[k] === "number");
}

/** Enough of a record's shape to hand out: what the file store itself produces. */
function isRecord(v: unknown): v is WorkflowRecord {
  return (
    isObject(v) &&
    typeof v["name"] === "string" &&
    typeof v["source"] === "string" &&
    typeof v["description"] === "string" &&
    typeof v["createdAt"] === "string" &&
    typeof v["updatedAt"] === "string" &&
    (v["params"] === undefined || Array.isArray(v["params"])) &&
    (v["provenance"] === undefined || isObject(v["provenance"]))
  );
}

/** The shape extractSignature produces; params as strictly as the rest of the code relies on them. */
function isDerivation(v: unknown): v is WorkflowDerivation {
  if (!isObject(v)) return false;
  const e = v["syntaxError"];
  return (
    (v["description"] === null || typeof v["description"] === "string") &&
    typeof v["closedParams"] === "boolean" &&
    typeof v["hasRun"] === "boolean" &&
    Array.isArray(v["params"]) &&
    v["params"].every(
      (p: unknown) =>
        isObject(p) &&
        typeof p["name"] === "string" &&
        typeof p["type"] === "string" &&
        typeof p["required"] === "boolean" &&
        (p["description"] === undefined || typeof p["description"] === "string") &&
        (p["defaultExpression"] === undefined || typeof p["defaultExpression"] === "string"),
    ) &&
    (e === null || (isObject(e) && typeof e["message"] === "string" && typeof e["line"] === "number" && typeof e["column"] === "number"))
  );
}

function freezeDerived(d: WorkflowDerivation): WorkflowDerivation {
  for (const p of d.params) Object.freeze(p);
  Object.freeze(d.params);
  Object.freeze(d.syntaxError);
  return Object.freeze(d);
}

/**
 * Records are shared by every listing until their file changes, so nobody may change one: a
 * caller's edit would otherwise show up in the next caller's listing.
 */
function freezeRead(read: CatalogueRecord): CatalogueRecord {
  const r = read.record;
  if (r.params) for (const p of r.params) Object.freeze(p);
  Object.freeze(r.params);
  Object.freeze(r.provenance);
  Object.freeze(r);
  return Object.freeze(read);
}
