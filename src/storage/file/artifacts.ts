/**
 * Artifacts on disk: one file per artifact, `artifacts/<name>`, holding a one-line header (kind,
 * description, metadata, times) and then the payload exactly as saved. One file means one commit
 * point: a save writes header and payload to a temp file and renames it into place, so a reader
 * (which reads the file once) sees exactly one save's bytes together with that save's kind,
 * description and metadata, whatever writers, readers and crashes interleave. No retries, no
 * guessing. `tail -n +2 artifacts/<name>` prints the payload.
 *
 * Files without the header are first-class too: a file dropped in by hand is listed with its kind
 * inferred from the bytes (a `*.json` file that parses loads as JSON), and so is a store written by
 * an older version (payload file + `.meta/<name>` sidecar, whose description and metadata are used
 * while it still matches the payload; the next save rewrites the artifact in the one-file format).
 * A saved file edited by hand keeps its description and metadata; if the payload's size changed,
 * its kind is inferred again (a JSON artifact that no longer parses loads as text).
 */
import path from "node:path";
import { constants, type Stats } from "node:fs";
import { open, readdir, stat } from "node:fs/promises";
import { z } from "zod";
import { lazy } from "../../lazy.js";
import { ValidationError } from "../../errors.js";
import {
  createdTime,
  guardFs,
  isErrno,
  readFileIfExists,
  removeEmptyParents,
  statFile,
  unlinkIfExists,
  unreadableReason,
  writeFileAtomic,
} from "../atomic.js";
import { assertJsonObject, decodeArtifact, encodeArtifact, inferKind, sha256Hex } from "../codec.js";
import { artifactNameProblem, compareNames, validateArtifactName } from "../names.js";
import type { ArtifactData, ArtifactInfo, ArtifactKind, ArtifactProblem, ArtifactStore, JsonValue, SaveArtifactOptions } from "../protocol.js";
import { artifactTooLarge, quotaSize, resolveQuota, storeFull, type Quota, type QuotaOptions } from "../quota.js";
import { laterOf, nextTimestamp } from "../timestamps.js";
import { checkFileCommit } from "../write-deadline.js";

/** Folder (under `artifacts/`) of the temp files of saves in progress; never removed. */
export const ARTIFACT_TEMP_DIR = ".tmp";
/** Older versions kept metadata here; read (and cleaned up) for compatibility. */
const LEGACY_META_DIR = ".meta";
const LEGACY_PENDING_DIR = ".pending";

/** First bytes of every file we write. The rest of the line is the header's JSON. */
const MAGIC = "#ts-code-mode artifact v2 ";
const MAGIC_BYTES = Buffer.from(MAGIC, "utf8");
/** get()/list() read this much of a file first; a longer header (large metadata) is read in full. */
const HEAD_CHUNK = 16 * 1024;

const headerSchema = lazy(() => z.object({
  kind: z.enum(["text", "bytes", "json"]),
  size: z.number().int().nonnegative(),
  description: z.string(),
  metadata: z.record(z.string(), z.json()),
  createdAt: z.string(),
  updatedAt: z.string(),
}));
type Header = z.infer<typeof headerSchema>;

const legacySidecarSchema = lazy(() => z.object({
  version: z.literal(1),
  kind: z.enum(["text", "bytes", "json"]),
  size: z.number().int().nonnegative(),
  sha256: z.string(),
  description: z.string(),
  metadata: z.record(z.string(), z.json()),
  createdAt: z.string(),
  updatedAt: z.string(),
}));

const optionsSchema = lazy(() => z
  .object({ description: z.string().optional(), metadata: z.unknown().optional() })
  .strict()
  .optional());

/** How long a measured store size is trusted before the next save measures it again. */
const USAGE_TTL_MS = 5_000;

/** What a file holds: the header (null for a file without one) and where the payload starts. */
interface Parsed {
  header: Header | null;
  payloadOffset: number;
}

export class FileArtifactStore implements ArtifactStore {
  private readonly tempDir: string;
  private readonly quota: Quota;
  /**
   * This process's count of the store's bytes on disk: measured by walking the folder, then kept
   * up to date by every save and delete that lands. Saves in flight are not in it but in `reserved`.
   */
  private usage: { bytes: number; measuredAt: number } | undefined;
  /** Bytes reserved by saves in flight (checked against the quota with `usage`), and how many there are. */
  private reserved = 0;
  private saving = 0;
  /** The walk under way; every save waits for it instead of starting its own. */
  private measuring: Promise<void> | null = null;

  /** `directory` is the `artifacts/` folder; it must exist. */
  constructor(
    readonly directory: string,
    quota: QuotaOptions = {},
  ) {
    this.tempDir = path.join(directory, ARTIFACT_TEMP_DIR);
    this.quota = resolveQuota(quota);
  }

  async save(name: string, data: ArtifactData, options?: SaveArtifactOptions): Promise<ArtifactInfo> {
    const segments = validateArtifactName(name);
    const { description, metadata } = parseOptions(options);
    const { kind, bytes } = encodeArtifact(data);
    const size = quotaSize(bytes.byteLength, description, JSON.stringify(metadata));
    if (size > this.quota.maxArtifactBytes) throw artifactTooLarge(name, size, this.quota.maxArtifactBytes);
    const dataPath = this.dataPath(segments);
    return guardFs("save artifact", dataPath, async () => {
      const previous = await this.readHead(dataPath);
      // A file without our header (hand-dropped, or an older version's) may still have known times.
      const times = previous && !previous.header ? ((await this.info(name, segments)) ?? previous.times) : previous?.times;
      const updatedAt = nextTimestamp(times?.updatedAt);
      const header: Header = {
        kind,
        size: bytes.byteLength,
        description,
        metadata,
        createdAt: times?.createdAt ?? updatedAt,
        updatedAt,
      };
      const headLine = Buffer.from(`${MAGIC}${JSON.stringify(header)}\n`, "utf8");
      const onDisk = headLine.byteLength + bytes.byteLength;
      const delta = onDisk - (previous?.fileSize ?? 0);
      await this.reserve(name, onDisk, delta);
      let landed = false;
      try {
        await this.writeOrExplainConflict(name, segments, dataPath, [headLine, bytes]);
        landed = true;
      } finally {
        this.settle(delta, landed);
      }
      // Metadata of an older version of the store would only confuse a reader of the old format.
      if (previous?.legacy) await this.removeLegacy(segments);
      return toInfo(name, header);
    });
  }

  async load(name: string): Promise<ArtifactData | undefined> {
    const segments = validateArtifactName(name);
    const dataPath = this.dataPath(segments);
    return guardFs("load artifact", dataPath, async () => {
      const raw = await readFileIfExists(dataPath); // a folder (EISDIR) is no artifact: null
      if (!raw) return undefined;
      const { header, payloadOffset } = parseFile(raw);
      const payload = raw.subarray(payloadOffset);
      if (header) return decodeEdited(header.size === payload.byteLength ? header.kind : inferKind(payload, header.kind), payload);
      const legacy = await this.readLegacy(segments, payload, true);
      return decodeEdited(legacy?.kind ?? inferKind(payload, undefined, name), payload);
    });
  }

  async get(name: string): Promise<ArtifactInfo | null> {
    const segments = validateArtifactName(name);
    return guardFs("read artifact", this.dataPath(segments), () => this.info(name, segments));
  }

  async list(): Promise<ArtifactInfo[]> {
    return guardFs("list artifacts in", this.directory, async () => {
      const names: string[] = [];
      await walk(this.directory, "", names);
      // One unreadable file (EACCES, a symlink loop) is left out, not fatal; problems() names it.
      const infos = await mapLimit(names, 16, async (n) => {
        try {
          return await this.info(n, n.split("/"));
        } catch (err) {
          if (unreadableReason(err) === null) throw err;
          return null;
        }
      });
      return infos.filter((i): i is ArtifactInfo => i !== null).sort((a, b) => compareNames(a.name, b.name));
    });
  }

  async problems(): Promise<ArtifactProblem[]> {
    return guardFs("check artifacts in", this.directory, async () => {
      const names: string[] = [];
      await walk(this.directory, "", names);
      const found = await mapLimit(names, 16, async (name): Promise<ArtifactProblem | null> => {
        try {
          await this.info(name, name.split("/"));
          return null;
        } catch (err) {
          const reason = unreadableReason(err);
          if (reason === null) throw err;
          return { name, problem: `${reason}; it is left out of the listing` };
        }
      });
      return found.filter((p): p is ArtifactProblem => p !== null).sort((a, b) => compareNames(a.name, b.name));
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
    return guardFs("delete artifact", dataPath, async () => {
      // A folder of artifacts is not an artifact: never unlink (or report deleting) a directory.
      const st = await statFile(dataPath);
      if (st) checkFileCommit(`delete artifact "${name}"`);
      const existed = st !== null && (await unlinkIfExists(dataPath));
      if (existed && this.usage) this.usage.bytes -= st.size;
      await this.removeLegacy(segments);
      await removeEmptyParents(path.dirname(dataPath), this.directory);
      return existed;
    });
  }

  private dataPath(segments: string[]): string {
    return path.join(this.directory, ...segments);
  }

  /**
   * Checks the store quota and reserves `delta` bytes for a save of `onDisk` bytes. The measured
   * size is this process's view (refreshed every few seconds, and always before refusing), so
   * writers in other processes can overshoot the quota by what they save within that window.
   */
  private async reserve(name: string, onDisk: number, delta: number): Promise<void> {
    const limit = this.quota.maxStoreBytes;
    // The folder is walked again only while no save of ours is in flight: a walk cannot tell a file
    // being written from one that landed, so with saves in flight the count kept here is the truth
    // (re-measuring then is what let 40 parallel saves all pass a quota that fits 10).
    while (this.measuring) await this.measuring;
    if (!this.usage || Date.now() - this.usage.measuredAt > USAGE_TTL_MS) await this.measure();
    if (this.usage!.bytes + this.reserved + delta > limit && Date.now() - this.usage!.measuredAt > 0) await this.measure();
    // From here to the reservation nothing awaits: the check and the reservation are one step.
    const used = this.usage!.bytes + this.reserved;
    if (used + delta > limit) throw storeFull(name, onDisk, Math.max(0, used + delta - onDisk), limit);
    this.reserved += delta;
    this.saving++;
  }

  /** A reserved save ended: its bytes move into the count when it landed, and are given back when not. */
  private settle(delta: number, landed: boolean): void {
    this.reserved -= delta;
    this.saving--;
    if (landed && this.usage) this.usage.bytes += delta;
  }

  /** Walk the folder for its size, unless saves are in flight; callers arriving meanwhile share the walk. */
  private async measure(): Promise<void> {
    while (this.measuring) await this.measuring;
    if (this.saving > 0 && this.usage) return;
    const run = (async () => {
      const names: string[] = [];
      const measuredAt = Date.now();
      await walk(this.directory, "", names);
      const sizes = await mapLimit(names, 16, async (n) => (await statFile(this.dataPath(n.split("/"))))?.size ?? 0);
      this.usage = { bytes: sizes.reduce((a, b) => a + b, 0), measuredAt };
    })();
    this.measuring = run;
    try {
      await run;
    } finally {
      if (this.measuring === run) this.measuring = null;
    }
  }

  /** The info of one artifact from its header (read without the payload), or null when there is none. */
  private async info(name: string, segments: string[]): Promise<ArtifactInfo | null> {
    const dataPath = this.dataPath(segments);
    const head = await this.readHead(dataPath);
    if (!head) return null;
    const payloadSize = head.fileSize - head.payloadOffset;
    if (head.header && head.header.size === payloadSize) return toInfo(name, head.header);
    if (head.header) {
      // Edited by hand since it was saved: the payload decides the kind, the header the rest.
      const payload = (await readFileIfExists(dataPath))?.subarray(head.payloadOffset) ?? new Uint8Array();
      return {
        ...toInfo(name, head.header),
        kind: inferKind(payload, head.header.kind),
        size: payload.byteLength,
        updatedAt: laterOf(head.stats.mtime.toISOString(), head.header.updatedAt),
      };
    }
    // No header: hand-dropped, or written by an older version.
    const payload = await readFileIfExists(dataPath);
    if (!payload) return null;
    const legacy = await this.readLegacy(segments, payload, false);
    if (legacy) return toInfo(name, legacy);
    return {
      name,
      kind: inferKind(payload, undefined, name),
      size: payload.byteLength,
      description: "",
      metadata: {},
      createdAt: createdTime(head.stats),
      updatedAt: head.stats.mtime.toISOString(),
    };
  }

  /** Header, payload offset and size of the file at `dataPath` (reading only the header), or null. */
  private async readHead(
    dataPath: string,
  ): Promise<(Parsed & { fileSize: number; stats: Stats; legacy: boolean; times: { createdAt: string; updatedAt: string } }) | null> {
    let fh;
    try {
      // Non-blocking: opening a FIFO (a symlink to one) for reading would otherwise wait for a writer forever.
      fh = await open(dataPath, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (err) {
      if (isErrno(err, "ENOENT", "ENOTDIR", "EISDIR")) return null;
      throw err;
    }
    try {
      const stats = await fh.stat();
      if (!stats.isFile()) return null;
      let buf = Buffer.alloc(Math.min(HEAD_CHUNK, stats.size));
      let { bytesRead } = await fh.read(buf, 0, buf.byteLength, 0);
      buf = buf.subarray(0, bytesRead);
      if (startsWithMagic(buf) && !buf.includes(0x0a) && bytesRead < stats.size) {
        // A header longer than the first chunk (large metadata): read the whole file once.
        buf = await fh.readFile();
        bytesRead = buf.byteLength;
      }
      const parsed = parseFile(buf);
      const times = parsed.header
        ? { createdAt: parsed.header.createdAt, updatedAt: parsed.header.updatedAt }
        : { createdAt: createdTime(stats), updatedAt: stats.mtime.toISOString() };
      return { ...parsed, fileSize: stats.size, stats, legacy: parsed.header === null, times };
    } finally {
      await fh.close();
    }
  }

  /** An older version's sidecar for this artifact, when it still describes `payload`. */
  private async readLegacy(segments: string[], payload: Uint8Array, checkHash: boolean): Promise<Header | null> {
    const raw = await readFileIfExists(path.join(this.directory, LEGACY_META_DIR, ...segments));
    if (!raw) return null;
    try {
      const parsed = legacySidecarSchema.safeParse(JSON.parse(raw.toString("utf8")));
      if (!parsed.success || parsed.data.size !== payload.byteLength) return null;
      if (checkHash && parsed.data.sha256 !== sha256Hex(payload)) return null;
      const { kind, size, description, metadata, createdAt, updatedAt } = parsed.data;
      return { kind, size, description, metadata, createdAt, updatedAt };
    } catch {
      return null;
    }
  }

  private async removeLegacy(segments: string[]): Promise<void> {
    const metaRoot = path.join(this.directory, LEGACY_META_DIR);
    for (const file of [path.join(metaRoot, ...segments), path.join(metaRoot, LEGACY_PENDING_DIR, ...segments)]) {
      if ((await statFile(file)) !== null && (await unlinkIfExists(file))) await removeEmptyParents(path.dirname(file), this.directory);
    }
  }

/** An artifact cannot also be a folder: turn the resulting fs error into a clear message. */
  private async writeOrExplainConflict(name: string, segments: string[], target: string, data: readonly Uint8Array[]): Promise<void> {
    try {
      await writeFileAtomic(target, data, { tempDir: this.tempDir, beforeCommit: () => checkFileCommit(`save artifact "${name}"`) });
    } catch (err) {
      if (!isErrno(err, "EISDIR", "ENOTDIR", "EEXIST", "EPERM")) throw err;
      const base = this.directory;
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

function toInfo(name: string, h: Header): ArtifactInfo {
  return {
    name,
    kind: h.kind,
    size: h.size,
    description: h.description,
    metadata: structuredClone(h.metadata) as Record<string, JsonValue>,
    createdAt: h.createdAt,
    updatedAt: h.updatedAt,
  };
}

/** Decodes; JSON broken by a hand edit that kept the size comes back as text rather than failing. */
function decodeEdited(kind: ArtifactKind, payload: Uint8Array): ArtifactData {
  if (kind !== "json") return decodeArtifact(kind, payload);
  try {
    return decodeArtifact(kind, payload);
  } catch {
    return decodeArtifact(inferKind(payload, "text"), payload);
  }
}

function startsWithMagic(buf: Uint8Array): boolean {
  return buf.byteLength >= MAGIC_BYTES.byteLength && Buffer.from(buf.buffer, buf.byteOffset, MAGIC_BYTES.byteLength).equals(MAGIC_BYTES);
}

/** Splits a file's bytes into header and payload; a file without a (valid) header is all payload. */
function parseFile(buf: Buffer): Parsed {
  if (!startsWithMagic(buf)) return { header: null, payloadOffset: 0 };
  const end = buf.indexOf(0x0a);
  if (end < 0) return { header: null, payloadOffset: 0 };
  try {
    const parsed = headerSchema.safeParse(JSON.parse(buf.toString("utf8", MAGIC_BYTES.byteLength, end)));
    return parsed.success ? { header: parsed.data, payloadOffset: end + 1 } : { header: null, payloadOffset: 0 };
  } catch {
    return { header: null, payloadOffset: 0 };
  }
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
    if (entry.name.startsWith(".")) continue; // our temp folder, legacy sidecars, hidden files
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
