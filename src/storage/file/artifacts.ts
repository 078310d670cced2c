/**
 * Artifacts on disk. The payload lives at `artifacts/<name>` exactly as saved, so people can open it
 * with any tool; its metadata lives in a per-artifact sidecar at `artifacts/.meta/<name>`. One
 * sidecar per artifact (instead of one shared index file) means two processes saving different
 * artifacts never overwrite each other's entries.
 *
 * Every write is data first, then sidecar, each atomic. The sidecar records the payload's size and
 * SHA-256, so a reader that catches the gap between the two renames (or a file edited by hand)
 * notices the mismatch, waits briefly for the writer, and otherwise falls back to inferring the kind
 * from the bytes. A reader therefore never gets a partial payload.
 */
import path from "node:path";
import type { Stats } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { z } from "zod";
import { ValidationError } from "../../errors.js";
import {
  createdTime,
  guardFs,
  isErrno,
  readFileIfExists,
  removeEmptyParents,
  statFile,
  unlinkIfExists,
  writeFileAtomic,
} from "../atomic.js";
import { assertJsonObject, decodeArtifact, encodeArtifact, inferKind, sha256Hex } from "../codec.js";
import { artifactNameProblem, compareNames, validateArtifactName } from "../names.js";
import type { ArtifactData, ArtifactInfo, ArtifactKind, ArtifactStore, JsonValue, SaveArtifactOptions } from "../protocol.js";
import { laterOf, nextTimestamp } from "../timestamps.js";

const META_DIR = ".meta";
/** Under META_DIR: sidecars of saves in progress (see save()). */
const PENDING_DIR = ".pending";

const sidecarSchema = z.object({
  version: z.literal(1),
  kind: z.enum(["text", "bytes", "json"]),
  size: z.number().int().nonnegative(),
  sha256: z.string(),
  description: z.string(),
  metadata: z.record(z.string(), z.json()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
type Sidecar = z.infer<typeof sidecarSchema>;

const optionsSchema = z
  .object({ description: z.string().optional(), metadata: z.unknown().optional() })
  .strict()
  .optional();

/** How long a reader waits for a writer that is between its data and sidecar renames. */
const RETRY_DELAYS_MS = [5, 15];
/** A data file without a sidecar younger than this may be a save in progress. */
const FRESH_MS = 2_000;

interface Snapshot {
  info: ArtifactInfo;
  bytes?: Uint8Array;
}

export class FileArtifactStore implements ArtifactStore {
  private readonly metaRoot: string;

  /** `directory` is the `artifacts/` folder; it must exist. */
  constructor(readonly directory: string) {
    this.metaRoot = path.join(directory, META_DIR);
  }

  async save(name: string, data: ArtifactData, options?: SaveArtifactOptions): Promise<ArtifactInfo> {
    const segments = validateArtifactName(name);
    const { description, metadata } = parseOptions(options);
    const { kind, bytes } = encodeArtifact(data);
    const dataPath = this.dataPath(segments);
    return guardFs("save artifact", dataPath, async () => {
      const previous = await this.previousTimes(segments);
      const updatedAt = nextTimestamp(previous?.updatedAt);
      const sidecar: Sidecar = {
        version: 1,
        kind,
        size: bytes.byteLength,
        sha256: sha256Hex(bytes),
        description,
        metadata,
        createdAt: previous?.createdAt ?? updatedAt,
        updatedAt,
      };
      const sidecarText = JSON.stringify(sidecar, null, 2);
      // Intent first: a process killed between the data and sidecar renames leaves new data and the
      // old sidecar; readers then find the new sidecar here (its hash matches the data), so they see
      // the new value whole, never new bytes with old metadata.
      await this.writeOrExplainConflict(name, segments, this.pendingPath(segments), sidecarText);
      await this.writeOrExplainConflict(name, segments, dataPath, bytes);
      await this.writeOrExplainConflict(name, segments, this.metaPath(segments), sidecarText);
      await this.clearPending(segments);
      return toInfo(name, sidecar);
    });
  }

  async load(name: string): Promise<ArtifactData | undefined> {
    const segments = validateArtifactName(name);
    return guardFs("load artifact", this.dataPath(segments), async () => {
      const snap = await this.snapshot(name, segments, true);
      return snap?.bytes ? decodeArtifact(snap.info.kind, snap.bytes) : undefined;
    });
  }

  async get(name: string): Promise<ArtifactInfo | null> {
    const segments = validateArtifactName(name);
    return guardFs("read artifact", this.dataPath(segments), async () => {
      return (await this.snapshot(name, segments, false))?.info ?? null;
    });
  }

  async list(): Promise<ArtifactInfo[]> {
    return guardFs("list artifacts in", this.directory, async () => {
      const names: string[] = [];
      await walk(this.directory, "", names);
      const infos = await mapLimit(names, 16, (n) => this.snapshot(n, n.split("/"), false));
      return infos
        .filter((s): s is Snapshot => s !== null)
        .map((s) => s.info)
        .sort((a, b) => compareNames(a.name, b.name));
    });
  }

  async exists(name: string): Promise<boolean> {
    const segments = validateArtifactName(name);
    const dataPath = this.dataPath(segments);
    return guardFs("check artifact", dataPath, async () => (await statFile(dataPath)) !== null);
  }

  async delete(name: string): Promise<boolean> {
    const segments = validateArtifactName(name);
    const dataPath = this.dataPath(segments);
    const metaPath = this.metaPath(segments);
    return guardFs("delete artifact", dataPath, async () => {
      // A folder of artifacts is not an artifact: never unlink (or report deleting) a directory.
      const existed = (await statFile(dataPath)) !== null && (await unlinkIfExists(dataPath));
      if ((await statFile(metaPath)) !== null) await unlinkIfExists(metaPath);
      await this.clearPending(segments);
      await removeEmptyParents(path.dirname(dataPath), this.directory);
      await removeEmptyParents(path.dirname(metaPath), this.metaRoot);
      return existed;
    });
  }

  private dataPath(segments: string[]): string {
    return path.join(this.directory, ...segments);
  }

  private metaPath(segments: string[]): string {
    return path.join(this.metaRoot, ...segments);
  }

  /** The sidecar a save in progress is about to write. Name segments never start with ".", so this cannot collide. */
  private pendingPath(segments: string[]): string {
    return path.join(this.metaRoot, PENDING_DIR, ...segments);
  }

  private async clearPending(segments: string[]): Promise<void> {
    const pending = this.pendingPath(segments);
    if (await unlinkIfExists(pending)) await removeEmptyParents(path.dirname(pending), this.metaRoot);
  }

  private async readSidecar(segments: string[], pending = false): Promise<Sidecar | null> {
    const raw = await readFileIfExists(pending ? this.pendingPath(segments) : this.metaPath(segments));
    if (!raw) return null;
    try {
      const parsed = sidecarSchema.safeParse(JSON.parse(raw.toString("utf8")));
      return parsed.success ? parsed.data : null;
    } catch {
      return null; // a sidecar broken by hand is treated like a missing one
    }
  }

  /** createdAt/updatedAt of whatever is stored under the name now, to carry createdAt over. */
  private async previousTimes(segments: string[]): Promise<{ createdAt: string; updatedAt: string } | undefined> {
    const sidecar = await this.readSidecar(segments);
    if (sidecar) return { createdAt: sidecar.createdAt, updatedAt: sidecar.updatedAt };
    const st = await statFile(this.dataPath(segments));
    return st ? { createdAt: createdTime(st), updatedAt: st.mtime.toISOString() } : undefined;
  }

  /**
   * A consistent view of one artifact: its info (and bytes when asked). Trusts the sidecar when it
   * matches the data (hash for loads, size otherwise); retries briefly while a writer may be between
   * its two renames; then describes the data as it is, keeping what the sidecar still knows.
   */
  private async snapshot(name: string, segments: string[], withBytes: boolean): Promise<Snapshot | null> {
    const dataPath = this.dataPath(segments);
    let sidecar: Sidecar | null = null;
    let st: Stats | null = null;
    let bytes: Buffer | null = null;
    for (let attempt = 0; ; attempt++) {
      sidecar = await this.readSidecar(segments);
      st = await statFile(dataPath);
      if (!st) return null;
      if (withBytes) {
        bytes = await readFileIfExists(dataPath);
        if (!bytes) return null;
      }
      const hash = bytes ? sha256Hex(bytes) : null;
      const size = st.size;
      const matches = (sc: Sidecar | null): boolean =>
        sc !== null && (bytes ? sc.size === bytes.byteLength && sc.sha256 === hash : sc.size === size);
      if (sidecar && matches(sidecar)) return { info: toInfo(name, sidecar), ...(bytes ? { bytes } : {}) };
      const pending = await this.readSidecar(segments, true);
      if (pending && matches(pending)) return { info: toInfo(name, pending), ...(bytes ? { bytes } : {}) };
      const maybeInFlight = sidecar !== null || Date.now() - st.mtimeMs < FRESH_MS;
      const delay = RETRY_DELAYS_MS[attempt];
      if (!maybeInFlight || delay === undefined) break;
      await sleep(delay);
    }
    bytes ??= await readFileIfExists(dataPath);
    if (!bytes) return null;
    const kind: ArtifactKind = inferKind(bytes, sidecar?.kind, name);
    const info: ArtifactInfo = {
      name,
      kind,
      size: bytes.byteLength,
      description: sidecar?.description ?? "",
      metadata: (sidecar?.metadata ?? {}) as Record<string, JsonValue>,
      createdAt: sidecar?.createdAt ?? createdTime(st),
      updatedAt: sidecar ? laterOf(st.mtime.toISOString(), sidecar.updatedAt) : st.mtime.toISOString(),
    };
    return { info, ...(withBytes ? { bytes } : {}) };
  }

  /** An artifact cannot also be a folder: turn the resulting fs error into a clear message. */
  private async writeOrExplainConflict(name: string, segments: string[], target: string, data: string | Uint8Array): Promise<void> {
    try {
      await writeFileAtomic(target, data);
    } catch (err) {
      if (!isErrno(err, "EISDIR", "ENOTDIR", "EEXIST", "EPERM")) throw err;
      const base = target === this.dataPath(segments) ? this.directory : this.metaRoot;
      const isFolder = await stat(target).then((s) => s.isDirectory(), () => false);
      if (isFolder) {
        throw new ValidationError(
          `Cannot save artifact "${name}": a folder of artifacts with that name exists (e.g. "${name}/..."); ` +
            "an artifact name cannot also be a folder. Choose another name or delete the artifacts inside it.",
        );
      }
      for (let i = 1; i < segments.length; i++) {
        const prefix = segments.slice(0, i);
        if (await statFile(path.join(base, ...prefix))) {
          throw new ValidationError(
            `Cannot save artifact "${name}": "${prefix.join("/")}" is an artifact, not a folder. ` +
              "Choose another name or delete that artifact first.",
          );
        }
      }
      throw err;
    }
  }
}

function parseOptions(options: unknown): { description: string; metadata: Record<string, JsonValue> } {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ValidationError(`Invalid artifact options: ${z.prettifyError(parsed.error)}. Accepted: { description?: string, metadata?: object }.`);
  }
  const metadata = parsed.data?.metadata ?? {};
  assertJsonObject(metadata, "Artifact metadata");
  // A copy, so later changes to the caller's object do not leak into what we report or store.
  return { description: parsed.data?.description ?? "", metadata: structuredClone(metadata) };
}

function toInfo(name: string, s: Sidecar): ArtifactInfo {
  return {
    name,
    kind: s.kind,
    size: s.size,
    description: s.description,
    metadata: structuredClone(s.metadata) as Record<string, JsonValue>,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

/** Collects addressable artifact names under `dir`; dot-entries (sidecars, temp files) are skipped. */
async function walk(dir: string, prefix: string, out: string[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (isErrno(err, "ENOENT", "ENOTDIR")) return; // removed by a concurrent delete
    throw err;
  }
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      await walk(path.join(dir, entry.name), rel, out);
    } else if ((entry.isFile() || entry.isSymbolicLink()) && artifactNameProblem(rel) === null) {
      // Symlinks count only when they point at a file (checked by the snapshot's stat); we never
      // descend through a linked folder, which could loop.
      out.push(rel);
    }
  }
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
