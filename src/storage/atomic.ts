/**
 * Atomic file replacement and the small fs helpers the file stores share. A write goes to a temp
 * file in the target's own folder and is renamed over the target: rename within one filesystem is
 * atomic, so a reader sees the old bytes or the new bytes, never a prefix. We do not fsync — the
 * guarantee is "no torn reads", not durability across power loss — which keeps saves cheap.
 */
import { randomBytes } from "node:crypto";
import type { Stats } from "node:fs";
import { mkdir, readFile, rename, rmdir, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { InvalidNameError, NotFoundError, StorageError, ValidationError } from "../errors.js";

/** Temp files start with "." so no store ever lists them, and end with this suffix. */
export const TEMP_SUFFIX = ".tmp";

/** A fresh temp path next to `target` (same folder, hence same filesystem, hence atomic rename). */
export function tempPathFor(target: string): string {
  return path.join(path.dirname(target), `.${randomBytes(8).toString("hex")}${TEMP_SUFFIX}`);
}

/**
 * Writes `data` to `target` atomically, creating missing parent folders. A concurrent delete may
 * remove an emptied parent folder at any moment between our mkdir and our rename (recursive mkdir
 * itself can fail with ENOENT that way), so every ENOENT restarts the attempt.
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(target);
  for (let attempt = 1; ; attempt++) {
    const tmp = tempPathFor(target);
    let wroteTemp = false;
    try {
      await mkdir(dir, { recursive: true });
      await writeFile(tmp, data, { flag: "wx" });
      wroteTemp = true;
      await rename(tmp, target);
      return;
    } catch (err) {
      if (wroteTemp) await unlink(tmp).catch(() => undefined);
      if (!isErrno(err, "ENOENT") || attempt >= MAX_WRITE_ATTEMPTS) throw err;
    }
  }
}

const MAX_WRITE_ATTEMPTS = 50;

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

/** The file's bytes, or null when there is no file there (missing, or a folder). */
export async function readFileIfExists(target: string): Promise<Buffer | null> {
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
