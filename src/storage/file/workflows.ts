/**
 * Workflows on disk: one plain `workflows/<name>.ts` per workflow, which a person can open, run
 * through tsc, and edit. Its first line is a comment the store writes and reads back:
 *
 *   // ts-code-mode workflow {"sourceHash":"…","description":"…","params":[…],"provenance":{…},…}
 *   /** Triple a number. *\/
 *   export async function run({ n }: { n: number }) { … }
 *
 * The source below that line is exactly what was saved. Header and source are one file written by
 * one rename, so a reader sees exactly one save's source with that save's description, params and
 * provenance: the rename is the record's single commit point.
 *
 * Hand edits are defined by the header's hash of the source:
 * - source unchanged: the record is exactly as saved;
 * - source edited below the header: params and a description derived from the JSDoc are dropped
 *   (the workflows layer derives them again from the new code); an explicit description, the
 *   author and the provenance are kept, so editing never launders who saved the code;
 * - file rewritten without the header: a hand-written workflow, except that the provenance of an
 *   untrusted save sticks (`.provenance/<name>.json`, written before the file and removed only by
 *   a trusted save or a delete), so overwriting the file by hand does not make sandbox-saved code
 *   trusted; approving it (a trusted save) does.
 *
 * Python workflows are `<name>.py` files, whose first line is the same header as a Python comment:
 *
 *   # ts-code-mode workflow {"sourceHash":"…","language":"python",…}
 *   def run(n: int) -> int: …
 *
 * A `.py` file is a Python workflow with or without the header. An older store kept Python
 * workflows in `<name>.ts` below a header saying `"language":"python"`; those still read as Python,
 * and the next save writes `<name>.py`.
 *
 * One name, one file. When several files of a name exist, `.py` wins over `.ts`, which wins over
 * `.js`; the others are ignored (reported by `problems()`) and removed by the next save or delete of
 * that name. That precedence is what makes a change of file crash-safe: a save first renames its new
 * file into place, then removes the other extensions' files; a delete removes the files in the
 * opposite order of precedence, the winning one last.
 * - Python save over `<name>.ts` (migration, or a TypeScript workflow replaced by a Python one): the
 *   rename of `<name>.py` commits it (it wins at once); a crash before the `.ts` is removed leaves
 *   only an ignored leftover.
 * - TypeScript save over `<name>.py`: the new `.ts` is renamed into place, then the `.py` removed;
 *   that unlink is the commit point. A crash between leaves the old Python workflow, whole.
 * Removing the stale file first instead would leave a moment (or, after a crash, a store) with no
 * workflow of that name, or an older shadowed file showing through.
 *
 * That order holds only while one save or delete of a name runs at a time: a TypeScript save and a
 * Python save of one name in two processes would each rename its file in and then remove the
 * other's, leaving no file at all (issue 35.2). So saves and deletes of a name hold a lock that
 * every process on the host sees (name-lock.ts); with them serialized, at every moment at least one
 * whole file of the name exists. A reader stats `.py`, then `.ts`: a save that changes the language
 * between the two stats can still slip past both, so a reader that finds no file takes the name's
 * lock (waiting out the save in progress) and looks once more before it answers "no workflow".
 *
 * `.js` files and files without the header are first-class (hand-written). A store written by an
 * older version (`.meta/<name>.json` sidecars) is read with those sidecars; the next save of a
 * workflow rewrites it in the one-file format. Files whose name is not a workflow name are not
 * listed but reported by `problems()`.
 */
import path from "node:path";
import type { Stats } from "node:fs";
import { realpathSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { z } from "zod";
import { StorageError } from "../../errors.js";
import { lazy } from "../../lazy.js";
import { createdTime, guardFs, isErrno, readFileIfExists, statFile, unlinkIfExists, unreadableReason, writeFileAtomic } from "../atomic.js";
import { sha256Hex } from "../codec.js";
import { MAX_WORKFLOW_NAME_LENGTH, WORKFLOW_NAME_PATTERN, compareNames, validateWorkflowName } from "../names.js";
import type { WorkflowDerivation, WorkflowFileProblem, WorkflowRecord, WorkflowStore } from "../protocol.js";
import { laterOf } from "../timestamps.js";
import { checkWorkflowRecord, paramSchema, provenanceSchema } from "../workflow-record.js";
import { withNameLock } from "./name-lock.js";
import { stampOf, WorkflowCatalogue, type FileStamp } from "./workflow-catalogue.js";

/** Folder (under `workflows/`) of the temp files of saves in progress; never removed. */
export const WORKFLOW_TEMP_DIR = ".tmp";
const LEGACY_META_DIR = ".meta";
/** Sticky provenance of untrusted saves, read only for a file without the header. */
const PROVENANCE_DIR = ".provenance";
/**
 * In order of precedence. Saved workflows are `.ts` (TypeScript) or `.py` (Python); `.js` is
 * accepted for hand-written files.
 */
const EXTENSIONS = [".py", ".ts", ".js"] as const;
type Extension = (typeof EXTENSIONS)[number];
const FILE_PATTERN = /^(.*)\.(py|ts|js)$/;
export const WORKFLOW_HEADER = "// ts-code-mode workflow ";
/** The header line of a `.py` workflow: the same JSON after a Python comment. */
export const PYTHON_WORKFLOW_HEADER = "# ts-code-mode workflow ";

function headerPrefix(ext: Extension): string {
  return ext === ".py" ? PYTHON_WORKFLOW_HEADER : WORKFLOW_HEADER;
}

const headerSchema = lazy(() => z.object({
  sourceHash: z.string(),
  description: z.string(),
  descriptionExplicit: z.boolean().optional(),
  params: z.array(paramSchema).optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  author: z.string().optional(),
  provenance: provenanceSchema.optional(),
  // Absent: TypeScript/JavaScript (a `.py` file is Python without it). Older stores kept Python in `<name>.ts` with this set.
  language: z.literal("python").optional(),
}));
type Header = z.infer<typeof headerSchema>;

const legacySidecarSchema = lazy(() => headerSchema.extend({ version: z.literal(1) }));

const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

interface ReadFile {
  record: WorkflowRecord;
  /** Set when the first line looks like our header but cannot be read. */
  problem?: string;
}

/** How long a reader that found no file waits for a save of that name in progress before it answers "none". */
const READ_LOCK_TIMEOUT_MS = 5_000;

/** A store dropped without close() still stops its catalogue's watcher. */
const unclosed = new FinalizationRegistry<WorkflowCatalogue>((catalogue) => void catalogue.close());

export class FileWorkflowStore implements WorkflowStore {
  private readonly tempDir: string;
  /** Parsed records of every file, kept current (workflow-catalogue.ts); list() reads only what changed. */
  private readonly catalogue: WorkflowCatalogue;
  /** The folder's real path: the name locks of two spellings of one folder are the same lock. */
  private readonly lockFolder: string;

  /** `directory` is the `workflows/` folder; it must exist. */
  constructor(readonly directory: string) {
    this.tempDir = path.join(directory, WORKFLOW_TEMP_DIR);
    this.lockFolder = realFolder(directory);
    this.catalogue = new WorkflowCatalogue(
      directory,
      async () => {
        const { names, present } = await this.scan();
        return new Map([...names].map((n) => [n, `${n}${EXTENSIONS.find((ext) => present.has(`${n}${ext}`)) ?? ".js"}`]));
      },
      (name) => this.readSettled(name),
    );
    unclosed.register(this, this.catalogue, this);
  }

  /** Stops watching the folder and saves the catalogue; the store stays usable. */
  async close(): Promise<void> {
    unclosed.unregister(this);
    await this.catalogue.close();
  }

  async save(record: WorkflowRecord): Promise<void> {
    const name = validateWorkflowName((record as Partial<WorkflowRecord> | null | undefined)?.name);
    const r = checkWorkflowRecord(name, record);
    const ext: Extension = r.language === "python" ? ".py" : ".ts";
    const sourcePath = path.join(this.directory, `${name}${ext}`);
    await guardFs("save workflow", sourcePath, () => withNameLock(this.lockFolder, name, { what: `save workflow "${name}"` }, async () => {
      const header: Header = {
        sourceHash: sha256Hex(Buffer.from(r.source, "utf8")),
        description: r.description,
        ...(r.descriptionExplicit !== undefined ? { descriptionExplicit: r.descriptionExplicit } : {}),
        ...(r.params !== undefined ? { params: r.params } : {}),
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
        ...(r.author !== undefined ? { author: r.author } : {}),
        ...(r.provenance !== undefined ? { provenance: r.provenance } : {}),
        ...(r.language !== undefined ? { language: r.language } : {}),
      };
      // Untrusted: the sticky copy goes first, so no moment exists where a header-less file of this
      // name could be read without it (the error, if any, is on the safe side: untrusted).
      if (r.provenance?.trust === "untrusted") {
        await writeFileAtomic(this.provenancePath(name), JSON.stringify(r.provenance), { tempDir: this.tempDir });
      }
      // JSON.stringify never emits a raw line break, so the header is exactly one line.
      await writeFileAtomic(sourcePath, [Buffer.from(`${headerPrefix(ext)}${JSON.stringify(header)}\n`, "utf8"), Buffer.from(r.source, "utf8")], {
        tempDir: this.tempDir,
      });
      // Only now the other extensions' files (the order is what makes it crash-safe; see the top of
      // this file): the old-layout `.ts` of a Python workflow, the other language's file, a hand-written `.js` twin.
      for (const other of EXTENSIONS) if (other !== ext) await unlinkIfExists(path.join(this.directory, `${name}${other}`));
      await unlinkIfExists(this.legacySidecarPath(name));
      if (r.provenance?.trust !== "untrusted") await unlinkIfExists(this.provenancePath(name));
    })).finally(() => this.catalogue.noteWrite(name));
  }

  async get(name: string): Promise<WorkflowRecord | null> {
    validateWorkflowName(name);
    return guardFs("read workflow", path.join(this.directory, name), async () => (await this.readSettled(name))?.read.record ?? null);
  }

  async list(): Promise<WorkflowRecord[]> {
    return guardFs("list workflows in", this.directory, async () => {
      // Records are shared with later listings (frozen); see workflow-catalogue.ts.
      return (await this.catalogue.records()).map((r) => r.record).sort((a, b) => compareNames(a.name, b.name));
    });
  }

  derivedOf(record: WorkflowRecord): WorkflowDerivation | undefined {
    return this.catalogue.derivedOf(record);
  }

  rememberDerived(record: WorkflowRecord, derived: WorkflowDerivation): void {
    this.catalogue.rememberDerived(record, derived);
  }

  async problems(): Promise<WorkflowFileProblem[]> {
    return guardFs("check workflows in", this.directory, async () => {
      const { names, problems, present } = await this.scan();
      for (const name of names) {
        try {
          const got = await this.read(name);
          if (got?.read.problem) problems.push({ file: got.file, problem: got.read.problem });
        } catch (err) {
          // list() leaves such a file out; here it is named with the reason.
          const reason = unreadableReason(err);
          if (reason === null) throw err;
          const file = `${name}${EXTENSIONS.find((ext) => present.has(`${name}${ext}`)) ?? ""}`;
          problems.push({ file, problem: `${reason}; it is left out of the listing` });
        }
      }
      return problems.sort((a, b) => compareNames(a.file, b.file));
    });
  }

  async delete(name: string): Promise<boolean> {
    validateWorkflowName(name);
    return guardFs("delete workflow", path.join(this.directory, name), () => withNameLock(this.lockFolder, name, { what: `delete workflow "${name}"` }, async () => {
      let existed = false;
      // The winning file last: a delete stopped half-way leaves that workflow whole, never an older shadowed file.
      for (const ext of [...EXTENSIONS].reverse()) {
        const file = path.join(this.directory, `${name}${ext}`);
        if ((await statFile(file)) && (await unlinkIfExists(file))) existed = true;
      }
      await unlinkIfExists(this.legacySidecarPath(name));
      await unlinkIfExists(this.provenancePath(name));
      return existed;
    })).finally(() => this.catalogue.noteWrite(name));
  }

  /** Workflow names present as files, and the `.ts`/`.js` files that cannot be workflows. */
  private async scan(): Promise<{ names: Set<string>; problems: WorkflowFileProblem[]; present: Set<string> }> {
    const names = new Set<string>();
    const problems: WorkflowFileProblem[] = [];
    let entries: string[];
    try {
      entries = await readdir(this.directory);
    } catch (err) {
      if (isErrno(err, "ENOENT")) return { names, problems, present: new Set() };
      throw err;
    }
    const present = new Set(entries);
    for (const entry of entries) {
      if (entry.startsWith(".")) continue; // temp folder, legacy sidecars, hidden files
      const m = FILE_PATTERN.exec(entry);
      if (!m) continue; // not a workflow file (README.md, notes): nothing to report
      const stem = m[1]!;
      if (stem.length > MAX_WORKFLOW_NAME_LENGTH || !WORKFLOW_NAME_PATTERN.test(stem)) {
        problems.push({
          file: entry,
          problem:
            `"${stem.length > 80 ? `${stem.slice(0, 80)}...` : stem}" is not a valid workflow name (a letter or underscore, then letters, ` +
            `digits or underscores, at most ${MAX_WORKFLOW_NAME_LENGTH} characters), so it cannot be called; rename the file, e.g. to ` +
            `${suggestName(stem)}.${m[2]}`,
        });
        continue;
      }
      const winner = EXTENSIONS.find((ext) => present.has(`${stem}${ext}`));
      if (winner !== undefined && `${stem}${winner}` !== entry) {
        problems.push({ file: entry, problem: `ignored: ${stem}${winner} defines the same workflow and takes precedence (the next save or delete of ${stem} removes this file)` });
        continue;
      }
      names.add(stem);
    }
    return { names, problems, present };
  }

  private provenancePath(name: string): string {
    return path.join(this.directory, PROVENANCE_DIR, `${name}.json`);
  }

  private async readStickyProvenance(name: string): Promise<WorkflowRecord["provenance"] | undefined> {
    const raw = await readFileIfExists(this.provenancePath(name));
    if (!raw) return undefined;
    try {
      const parsed = provenanceSchema.safeParse(JSON.parse(raw.toString("utf8")));
      if (parsed.success) return parsed.data;
    } catch {
      // fall through
    }
    // Unreadable: whoever broke it did not make the code trusted.
    return { trust: "untrusted", executor: "unknown", savedAt: "unknown" };
  }

  private legacySidecarPath(name: string): string {
    return path.join(this.directory, LEGACY_META_DIR, `${name}.json`);
  }

  /**
   * `read`, but "no file" is only answered once no save or delete of the name is in progress: a
   * save that changes the language can move the workflow from the file not yet looked at to the
   * one already looked at (see the top of this file). A lock still held after READ_LOCK_TIMEOUT_MS
   * (a stopped writer) answers with what the second look finds without it.
   */
  private async readSettled(name: string): Promise<{ read: ReadFile; file: string; stamp: FileStamp } | null> {
    const first = await this.read(name);
    if (first) return first;
    try {
      return await withNameLock(this.lockFolder, name, { what: `read workflow "${name}"`, timeoutMs: READ_LOCK_TIMEOUT_MS }, () => this.read(name));
    } catch (err) {
      if (err instanceof StorageError) return this.read(name);
      throw err;
    }
  }

  /** The workflow's record, from the file that holds it, with that file's stamp taken before reading it. */
  private async read(name: string): Promise<{ read: ReadFile; file: string; stamp: FileStamp } | null> {
    for (const ext of EXTENSIONS) {
      const file = path.join(this.directory, `${name}${ext}`);
      const st = await statFile(file);
      if (!st) continue;
      const bytes = await readFileIfExists(file);
      if (!bytes) continue; // deleted between stat and read
      const read = await this.parse(name, st, bytes, ext);
      return { read, file: `${name}${ext}`, stamp: stampOf(st) };
    }
    return null;
  }

  private async parse(name: string, st: Stats, bytes: Buffer, ext: Extension): Promise<ReadFile> {
    {
      const mtime = st.mtime.toISOString();
      const parsed = parseWorkflowFile(bytes, headerPrefix(ext));
      // A `.py` file is Python whatever its header says (or without one).
      const language = ext === ".py" ? { language: "python" as const } : {};
      const header = parsed.header ?? (parsed.problem ? null : await this.readLegacySidecar(name));
      const source = utf8.decode(parsed.source);
      if (!header) {
        const provenance = await this.readStickyProvenance(name);
        return {
          record: { name, source, description: "", createdAt: createdTime(st), updatedAt: mtime, ...language, ...(provenance ? { provenance } : {}) },
          ...(parsed.problem ? { problem: parsed.problem } : {}),
        };
      }
      const kept = {
        createdAt: header.createdAt,
        ...(header.author !== undefined ? { author: header.author } : {}),
        ...(header.provenance !== undefined ? { provenance: header.provenance } : {}),
        // The language is no property of the code's text: a hand edit keeps it.
        ...(header.language !== undefined ? { language: header.language } : {}),
        ...language,
      };
      if (header.sourceHash === sha256Hex(parsed.source)) {
        return {
          record: {
            name,
            source,
            description: header.description,
            ...(header.descriptionExplicit !== undefined ? { descriptionExplicit: header.descriptionExplicit } : {}),
            ...(header.params !== undefined ? { params: header.params } : {}),
            ...kept,
            updatedAt: header.updatedAt,
          },
        };
      }
      // Edited since it was saved: keep only what does not come from the source.
      const explicit = header.descriptionExplicit ?? header.description !== "";
      return {
        record: {
          name,
          source,
          description: explicit ? header.description : "",
          ...(explicit ? { descriptionExplicit: true } : {}),
          ...kept,
          updatedAt: laterOf(mtime, header.updatedAt),
        },
      };
    }
  }

  private async readLegacySidecar(name: string): Promise<Header | null> {
    const raw = await readFileIfExists(this.legacySidecarPath(name));
    if (!raw) return null;
    try {
      const parsed = legacySidecarSchema.safeParse(JSON.parse(raw.toString("utf8")));
      if (!parsed.success) return null;
      const { version: _version, ...header } = parsed.data;
      return header;
    } catch {
      return null;
    }
  }
}

/**
 * Splits a workflow file into our header (when its first line is one) and the source after it. A
 * first line that starts like our header but does not parse is kept as part of the source (it is a
 * comment) and reported.
 */
export function parseWorkflowFile(bytes: Buffer, prefix: string = WORKFLOW_HEADER): { header: Header | null; source: Buffer; problem?: string } {
  if (!bytes.subarray(0, prefix.length).equals(Buffer.from(prefix, "utf8"))) return { header: null, source: bytes };
  const end = bytes.indexOf(0x0a);
  const line = bytes.toString("utf8", prefix.length, end < 0 ? bytes.length : end);
  try {
    const parsed = headerSchema.safeParse(JSON.parse(line));
    if (parsed.success) return { header: parsed.data, source: end < 0 ? Buffer.alloc(0) : bytes.subarray(end + 1) };
  } catch {
    // fall through
  }
  return {
    header: null,
    source: bytes,
    problem: "its first line starts like the store's header but cannot be read; the file is treated as hand-written (no description, params or provenance)",
  };
}

function realFolder(directory: string): string {
  try {
    return realpathSync.native(directory);
  } catch {
    return path.resolve(directory);
  }
}

function suggestName(stem: string): string {
  const s = stem.replace(/[^A-Za-z0-9_]+/g, "_").slice(0, MAX_WORKFLOW_NAME_LENGTH);
  return /^[A-Za-z_]/.test(s) ? s : `_${s}`.slice(0, MAX_WORKFLOW_NAME_LENGTH);
}
