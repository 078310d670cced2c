/**
 * Workflows on disk: `workflows/<name>.ts` holds the source exactly as given, so people can read and
 * edit it; `workflows/.meta/<name>.json` keeps what the source alone cannot tell (an explicit
 * description, author, timestamps, and the params derived at save time).
 *
 * Hand-written files are first-class: a `<name>.ts` (or `.js`) with no sidecar is listed with an
 * empty description and no params, and the workflows layer derives both from the source. The
 * sidecar stores a hash of the source it describes; once someone edits the file, the derived parts
 * (params, and a description that came from the JSDoc) are dropped so the layer derives them afresh,
 * while a description the author gave explicitly is kept.
 */
import path from "node:path";
import { readdir } from "node:fs/promises";
import { z } from "zod";
import { ValidationError } from "../../errors.js";
import { createdTime, guardFs, isErrno, readFileIfExists, statFile, unlinkIfExists, writeFileAtomic } from "../atomic.js";
import { sha256Hex } from "../codec.js";
import { MAX_WORKFLOW_NAME_LENGTH, WORKFLOW_NAME_PATTERN, compareNames, validateWorkflowName } from "../names.js";
import type { WorkflowRecord, WorkflowStore } from "../protocol.js";
import { laterOf } from "../timestamps.js";

const META_DIR = ".meta";
/** Saved workflows are always `.ts`; `.js` is accepted for hand-written files. */
const EXTENSIONS = [".ts", ".js"] as const;
const FILE_PATTERN = /^([A-Za-z_][A-Za-z0-9_]*)\.(ts|js)$/;

const paramSchema = z.object({
  name: z.string(),
  type: z.string(),
  description: z.string().optional(),
  required: z.boolean(),
  default: z.json().optional(),
  defaultExpression: z.string().optional(),
});

/** Who saved a workflow (see WorkflowRecord.provenance). */
const provenanceSchema = z.object({ trust: z.enum(["trusted", "untrusted"]), executor: z.string(), savedAt: z.string() });

const recordSchema = z.object({
  name: z.string(),
  source: z.string(),
  description: z.string(),
  params: z.array(paramSchema).optional(),
  createdAt: z.string().min(1),
  updatedAt: z.string().min(1),
  author: z.string().optional(),
  provenance: provenanceSchema.optional(),
  descriptionExplicit: z.boolean().optional(),
});

const sidecarSchema = z.object({
  version: z.literal(1),
  sourceHash: z.string(),
  description: z.string(),
  descriptionExplicit: z.boolean().optional(),
  params: z.array(paramSchema).optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  author: z.string().optional(),
  provenance: provenanceSchema.optional(),
});
type Sidecar = z.infer<typeof sidecarSchema>;

const LONE_SURROGATE = /[\ud800-\udfff]/u;
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

export class FileWorkflowStore implements WorkflowStore {
  private readonly metaRoot: string;

  /** `directory` is the `workflows/` folder; it must exist. */
  constructor(readonly directory: string) {
    this.metaRoot = path.join(directory, META_DIR);
  }

  async save(record: WorkflowRecord): Promise<void> {
    const name = validateWorkflowName((record as Partial<WorkflowRecord> | null | undefined)?.name);
    const parsed = recordSchema.safeParse(record);
    if (!parsed.success) throw new ValidationError(`Invalid workflow record "${name}": ${z.prettifyError(parsed.error)}`);
    const r = parsed.data;
    if (LONE_SURROGATE.test(r.source)) {
      throw new ValidationError(`Workflow "${name}" source contains an unpaired surrogate, which UTF-8 cannot store.`);
    }
    const sourcePath = path.join(this.directory, `${name}.ts`);
    await guardFs("save workflow", sourcePath, async () => {
      const sidecar: Sidecar = {
        version: 1,
        sourceHash: sha256Hex(Buffer.from(r.source, "utf8")),
        description: r.description,
        ...(r.descriptionExplicit !== undefined ? { descriptionExplicit: r.descriptionExplicit } : {}),
        ...(r.params !== undefined ? { params: r.params } : {}),
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
        ...(r.author !== undefined ? { author: r.author } : {}),
        ...(r.provenance !== undefined ? { provenance: r.provenance } : {}),
      };
      // Source first: a reader in between sees the new source with the old sidecar, whose hash no
      // longer matches, so it re-derives instead of pairing new code with stale params.
      await writeFileAtomic(sourcePath, r.source);
      await writeFileAtomic(this.sidecarPath(name), JSON.stringify(sidecar, null, 2));
      // A hand-written `<name>.js` would otherwise shadow nothing but linger as a confusing twin.
      await unlinkIfExists(path.join(this.directory, `${name}.js`));
    });
  }

  async get(name: string): Promise<WorkflowRecord | null> {
    validateWorkflowName(name);
    return guardFs("read workflow", path.join(this.directory, `${name}.ts`), () => this.read(name));
  }

  async list(): Promise<WorkflowRecord[]> {
    return guardFs("list workflows in", this.directory, async () => {
      let entries: string[];
      try {
        entries = await readdir(this.directory);
      } catch (err) {
        if (isErrno(err, "ENOENT")) return [];
        throw err;
      }
      const names = new Set<string>();
      for (const entry of entries) {
        const m = FILE_PATTERN.exec(entry);
        if (m?.[1] && m[1].length <= MAX_WORKFLOW_NAME_LENGTH && WORKFLOW_NAME_PATTERN.test(m[1])) names.add(m[1]);
      }
      const records = await Promise.all([...names].map((n) => this.read(n)));
      return records.filter((r): r is WorkflowRecord => r !== null).sort((a, b) => compareNames(a.name, b.name));
    });
  }

  async delete(name: string): Promise<boolean> {
    validateWorkflowName(name);
    return guardFs("delete workflow", path.join(this.directory, `${name}.ts`), async () => {
      let existed = false;
      for (const ext of EXTENSIONS) {
        const file = path.join(this.directory, `${name}${ext}`);
        if ((await statFile(file)) && (await unlinkIfExists(file))) existed = true;
      }
      await unlinkIfExists(this.sidecarPath(name));
      return existed;
    });
  }

  private sidecarPath(name: string): string {
    return path.join(this.metaRoot, `${name}.json`);
  }

  private async read(name: string): Promise<WorkflowRecord | null> {
    for (const ext of EXTENSIONS) {
      const file = path.join(this.directory, `${name}${ext}`);
      const st = await statFile(file);
      if (!st) continue;
      const bytes = await readFileIfExists(file);
      if (!bytes) continue; // deleted between stat and read
      const source = utf8.decode(bytes);
      const sidecar = await this.readSidecar(name);
      if (!sidecar) {
        return { name, source, description: "", createdAt: createdTime(st), updatedAt: st.mtime.toISOString() };
      }
      // Provenance survives a hand edit: who saved the code is not undone by someone changing it (approve re-records it).
      const base = {
        createdAt: sidecar.createdAt,
        ...(sidecar.author !== undefined ? { author: sidecar.author } : {}),
        ...(sidecar.provenance !== undefined ? { provenance: sidecar.provenance } : {}),
      };
      if (sidecar.sourceHash === sha256Hex(bytes)) {
        return {
          name,
          source,
          description: sidecar.description,
          ...(sidecar.descriptionExplicit !== undefined ? { descriptionExplicit: sidecar.descriptionExplicit } : {}),
          ...(sidecar.params !== undefined ? { params: sidecar.params } : {}),
          ...base,
          updatedAt: sidecar.updatedAt,
        };
      }
      // Edited since the sidecar was written: keep only what does not come from the source.
      const explicit = sidecar.descriptionExplicit ?? sidecar.description !== "";
      return {
        name,
        source,
        description: explicit ? sidecar.description : "",
        ...(explicit ? { descriptionExplicit: true } : {}),
        ...base,
        updatedAt: laterOf(st.mtime.toISOString(), sidecar.updatedAt),
      };
    }
    return null;
  }

  private async readSidecar(name: string): Promise<Sidecar | null> {
    const raw = await readFileIfExists(this.sidecarPath(name));
    if (!raw) return null;
    try {
      const parsed = sidecarSchema.safeParse(JSON.parse(raw.toString("utf8")));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }
}
