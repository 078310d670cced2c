/**
 * Atomic file replacement and the small fs helpers the file stores share. A write goes to a temp
 * file on the target's filesystem and is renamed over the target: rename within one filesystem is
 * atomic, so a reader sees the old bytes or the new bytes, never a prefix. The rename is the single
 * commit point of a write. We do not fsync — the guarantee is "no torn or mixed reads", not
 * durability across power loss — which keeps saves cheap.
 *
 * Temp files never outlive a save: a failed write (ENOSPC halfway, say) removes its temp file before
 * the error reaches the caller, and a temp file left by a killed process is swept by the next
 * FileStorage opened on the folder (`sweepTempFiles`), once it is older than a threshold and its
 * writer (whose pid is in the name) is no longer alive.
 */
import { randomBytes } from "node:crypto";
import type { Stats } from "node:fs";
import { mkdir, open, readFile, readdir, rename, rmdir, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { InvalidNameError, NotFoundError, StorageError, ValidationError } from "../errors.js";
import { faultPoint, hasFaultHook } from "./faults.js";

/** Temp files start with "." so no store ever lists them, and end with this suffix. */
export const TEMP_SUFFIX = ".tmp";
/** `.<pid>-<16 hex>.tmp`: the pid says whose it is, so a sweep never removes a live writer's file. */
const TEMP_NAME = /^\.(\d+)-[0-9a-f]{16}\.tmp$/;
/** Temp files of an older version: `.<16 hex>.tmp` next to their target, no pid. */
const LEGACY_TEMP_NAME = /^\.[0-9a-f]{16}\.tmp$/;

/** A fresh temp path in `dir` (the target's folder by default: same filesystem, so rename is atomic). */
export function tempPathFor(target: string, dir = path.dirname(target)): string {
  return path.join(dir, `.${process.pid}-${randomBytes(8).toString("hex")}${TEMP_SUFFIX}`);
}

export interface AtomicWriteOptions {
  /**
   * Folder for the temp file (must be on the target's filesystem). A store keeps one such folder
   * that is never removed, so a concurrent delete emptying the target's folder cannot pull it away
   * mid-write, and a sweep finds every leftover in one readdir.
   */
  tempDir?: string;
  /** Called right before the rename that commits the write; throwing stops it (the temp file goes). */
  beforeCommit?: () => void;
}

/**
 * Writes `data` (one buffer, or several written back to back) to `target` atomically, creating
 * missing parent folders. A concurrent delete may remove an emptied parent folder between our
 * mkdir and our rename, so an ENOENT from the rename makes the same temp file try again.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array | readonly Uint8Array[],
  options: AtomicWriteOptions = {},
): Promise<void> {
  const dir = path.dirname(target);
  const tempDir = options.tempDir ?? dir;
  const chunks = typeof data === "string" ? [Buffer.from(data, "utf8")] : data instanceof Uint8Array ? [data] : data;
  for (let attempt = 1; ; attempt++) {
    const tmp = tempPathFor(target, tempDir);
    try {
      await mkdir(tempDir, { recursive: true });
      await writeTemp(tmp, chunks, target);
      faultPoint("temp-written", target);
      options.beforeCommit?.();
      await renameInto(tmp, target, tempDir !== dir);
      break;
    } catch (err) {
      // Whatever failed (a full disk halfway through the write included), the temp file goes.
      await unlink(tmp).catch(() => undefined);
      // Next to the target, a concurrent delete may have removed the folder: start again.
      if (!isErrno(err, "ENOENT") || attempt >= MAX_WRITE_ATTEMPTS || tempDir !== dir) throw err;
    }
  }
  faultPoint("committed", target);
}

/** Renames the finished temp file over `target`; with a separate temp folder, recreates a target folder removed meanwhile. */
async function renameInto(tmp: string, target: string, separateTempDir: boolean): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (separateTempDir) await mkdir(path.dirname(target), { recursive: true });
      await rename(tmp, target);
      return;
    } catch (err) {
      // A recursive mkdir racing a concurrent rmdir of a parent can also report ENOTDIR (libuv
      // stats the path after EEXIST and finds it gone or half-gone); both are "try again".
      // A real file in the way keeps failing and is thrown after MAX_WRITE_ATTEMPTS.
      if (!separateTempDir || !(isErrno(err, "ENOENT") || isErrno(err, "ENOTDIR")) || attempt >= MAX_WRITE_ATTEMPTS) throw err;
    }
  }
}

const MAX_WRITE_ATTEMPTS = 50;

async function writeTemp(tmp: string, chunks: readonly Uint8Array[], target: string): Promise<void> {
  const fh = await open(tmp, "wx", 0o644);
  try {
    if (hasFaultHook()) {
      // Tests stop the process halfway through the bytes: write in two parts around the point.
      const all = Buffer.concat(chunks);
      await fh.write(all.subarray(0, all.byteLength >> 1));
      faultPoint("temp-partial", target);
      await fh.write(all.subarray(all.byteLength >> 1));
    } else if (chunks.length === 1) {
      await fh.writeFile(chunks[0]!);
    } else {
      // writev may write less than asked (a full disk gives a short write, not an error): finish
      // with plain writes, which fail with ENOSPC instead of leaving a short file to be renamed.
      const total = chunks.reduce((n, c) => n + c.byteLength, 0);
      const { bytesWritten } = await fh.writev(chunks as Uint8Array[]);
      if (bytesWritten < total) await fh.writeFile(Buffer.concat(chunks).subarray(bytesWritten));
    }
  } finally {
    await fh.close();
  }
}

/** Default age after which a dead writer's temp file is swept. */
export const DEFAULT_TEMP_MAX_AGE_MS = 60_000;

/**
 * Removes temp files in `dir` (not recursive) that are older than `maxAgeMs` and whose writer is
 * not a live process on this host. Older-format temp files (no pid) go once they are older than
 * the threshold. Returns how many were removed; never throws (a sweep is housekeeping).
 */
export async function sweepTempFiles(dir: string, maxAgeMs: number): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  const now = Date.now();
  for (const entry of entries) {
    const m = TEMP_NAME.exec(entry);
    if (!m && !LEGACY_TEMP_NAME.test(entry)) continue;
    const file = path.join(dir, entry);
    try {
      const st = await stat(file);
      if (!st.isFile() || now - st.mtimeMs < maxAgeMs) continue;
      if (m && isAlive(Number(m[1]))) continue;
      await unlink(file);
      removed++;
    } catch {
      // gone already, or not ours to remove: leave it
    }
  }
  return removed;
}

/** Whether `name` is a temp file name of ours (either format). */
export function isTempName(name: string): boolean {
  return TEMP_NAME.test(name) || LEGACY_TEMP_NAME.test(name);
}

/** Whether a process with this id runs on this host (a temp file's writer). */
export function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return isErrno(err, "EPERM"); // exists, but not ours to signal
  }
}

/** Removes `dir` and its parents while they are empty, stopping at (and keeping) `stopAt`. */
export async function removeEmptyParents(dir: string, stopAt: string): Promise<void> {
  let current = path.resolve(dir);
  const stop = path.resolve(stopAt);
  while (current !== stop && current.startsWith(stop + path.sep)) {
    try {
      await rmdir(current);
    } catch {
      return; // not empty (or already gone, or re-filled by a concurrent save): leave it
    }
    current = path.dirname(current);
  }
}

export function isErrno(err: unknown, ...codes: string[]): boolean {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === "string" && codes.includes((err as NodeJS.ErrnoException).code!);
}

/**
 * Runs an fs operation; our own typed errors pass through, anything unexpected becomes a
 * StorageError that names the operation and the path.
 */
export async function guardFs<T>(op: string, target: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toStorageError(op, target, err);
  }
}

export function toStorageError(op: string, target: string, err: unknown): Error {
  if (
    err instanceof StorageError ||
    err instanceof InvalidNameError ||
    err instanceof ValidationError ||
    err instanceof NotFoundError
  ) {
    return err;
  }
  const code = err instanceof Error ? ((err as NodeJS.ErrnoException).code ?? err.name) : "error";
  const detail = err instanceof Error ? err.message : String(err);
  return new StorageError(`Could not ${op} ${target} (${code}): ${detail}`, { cause: err });
}

/**
 * An fs error reading one entry of a listing (EACCES, ELOOP, EIO...), as the reason a listing
 * gives for leaving that entry out; null for anything else (a bug, or our own typed errors), which
 * must still fail the call.
 */
export function unreadableReason(err: unknown): string | null {
  if (!(err instanceof Error)) return null;
  const code = (err as NodeJS.ErrnoException).code;
  if (typeof code !== "string" || !/^E[A-Z0-9]+$/.test(code)) return null;
  const detail = code === "ELOOP" ? "a symlink that points (through other links) back at itself" : code === "EACCES" || code === "EPERM" ? "permission denied" : err.message;
  return `cannot be read (${code}): ${detail}`;
}

/** The file's bytes, or null when there is no file there (missing, or a folder). */
export async function readFileIfExists(target: string): Promise<Buffer | null> {
  faultPoint("read", target);
  try {
    return await readFile(target);
  } catch (err) {
    if (isErrno(err, "ENOENT", "ENOTDIR", "EISDIR")) return null;
    throw err;
  }
}

/** Stats of a regular file (symlinks followed), or null when there is none at `target`. */
export async function statFile(target: string): Promise<Stats | null> {
  try {
    const st = await stat(target);
    return st.isFile() ? st : null;
  } catch (err) {
    if (isErrno(err, "ENOENT", "ENOTDIR")) return null;
    throw err;
  }
}

/** Deletes a file; false when there was none. */
export async function unlinkIfExists(target: string): Promise<boolean> {
  try {
    await unlink(target);
    return true;
  } catch (err) {
    if (isErrno(err, "ENOENT", "ENOTDIR")) return false;
    throw err;
  }
}

/** When a file was created, as far as the filesystem knows (birthtime is 0 where unsupported). */
export function createdTime(st: Stats): string {
  return (st.birthtimeMs > 0 ? st.birthtime : st.mtime).toISOString();
}
