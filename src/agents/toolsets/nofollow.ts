/**
 * Opening a path under a root without a time-of-check/time-of-use race. Checking a path and then
 * opening it by name lets another process swap a folder for a symlink in between, and the open
 * follows it out. Instead, every folder on the way is opened one component at a time with
 * O_DIRECTORY|O_NOFOLLOW relative to the folder opened before it, and the last name is opened (or
 * created, renamed onto) relative to its folder's descriptor. Node has no openat, so "relative to a
 * descriptor" is `/proc/self/fd/<fd>/<name>`: the kernel resolves the fd to the opened folder
 * itself, whatever its path has become since. A symlink anywhere on the way is refused (ELOOP /
 * ENOTDIR), never followed.
 */
import { randomBytes } from "node:crypto";
import { constants, existsSync } from "node:fs";
import { lstat, mkdir, open, rename, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../../errors.js";

const PROC_FD = "/proc/self/fd";
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

function refuse(tool: string, message: string): ToolError {
  return new ToolError({ tool, callable: null, code: "PERMISSION", message });
}

/** `name` inside the folder open as `dir`, as a path the kernel resolves through the descriptor. */
export function at(dir: FileHandle, name: string): string {
  return `${PROC_FD}/${dir.fd}/${name}`;
}

/** The components of `rel` under `realRoot`, refused when they leave it. */
export function components(realRoot: string, rel: string, tool: string, shown: string): string[] {
  const back = path.relative(realRoot, path.resolve(realRoot, rel));
  if (back === ".." || back.startsWith(`..${path.sep}`) || path.isAbsolute(back)) throw refuse(tool, `${rel} is outside the allowed folder ${shown}`);
  return back === "" ? [] : back.split(path.sep);
}

/**
 * The folder `parts` names under `realRoot`, opened without following any symlink (the caller closes
 * it). `create`: missing folders are made on the way, each inside the descriptor of its parent.
 */
export async function openDir(realRoot: string, parts: readonly string[], tool: string, rel: string, create = false): Promise<FileHandle> {
  if (!existsSync(PROC_FD)) throw refuse(tool, `${tool} needs ${PROC_FD} (Linux) to open files without following symbolic links; it is not available here`);
  let dir = await open(realRoot, DIR_FLAGS);
  try {
    for (const part of parts) {
      let next: FileHandle;
      try {
        next = await open(at(dir, part), DIR_FLAGS);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOENT" && create) {
          await mkdir(at(dir, part)).catch((e: NodeJS.ErrnoException) => {
            if (e.code !== "EEXIST") throw e;
          });
          next = await open(at(dir, part), DIR_FLAGS).catch((e: NodeJS.ErrnoException) => {
            throw e.code === "ELOOP" || e.code === "ENOTDIR" ? linkRefusal(tool, rel) : e;
          });
        } else if (code === "ELOOP" || code === "ENOTDIR") {
          throw linkRefusal(tool, rel);
        } else throw err;
      }
      await dir.close();
      dir = next;
    }
    return dir;
  } catch (err) {
    await dir.close().catch(() => undefined);
    throw err;
  }
}

function linkRefusal(tool: string, rel: string): ToolError {
  return refuse(tool, `${rel} goes through a symbolic link or a file where a folder should be; symbolic links are not followed`);
}

/** Opens the file `rel` for reading without following a symlink anywhere (O_NONBLOCK: a FIFO cannot block the open). */
export async function openFileForRead(realRoot: string, rel: string, tool: string, shown: string): Promise<FileHandle> {
  const parts = components(realRoot, rel, tool, shown);
  const name = parts.pop();
  if (name === undefined) throw refuse(tool, `${rel} is a folder`);
  const dir = await openDir(realRoot, parts, tool, rel);
  try {
    return await open(at(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((e: NodeJS.ErrnoException) => {
      throw e.code === "ELOOP" ? refuse(tool, `${rel} is a symbolic link; symbolic links are not followed`) : e;
    });
  } finally {
    await dir.close();
  }
}

/**
 * Writes `content` to `rel` atomically (a temp file in the same folder, renamed over the target),
 * every step relative to the folder's descriptor: a swap of any folder on the way for a symlink
 * cannot move the write outside. A symlink or folder at the target is refused.
 */
export async function writeFileNoFollow(realRoot: string, rel: string, content: string, tool: string, shown: string): Promise<string> {
  const parts = components(realRoot, rel, tool, shown);
  const name = parts.pop();
  if (name === undefined) throw refuse(tool, `${rel} is a folder`);
  const dir = await openDir(realRoot, parts, tool, rel, true);
  try {
    const existing = await lstat(at(dir, name)).catch(() => null);
    if (existing?.isSymbolicLink()) throw refuse(tool, `${rel} is a symbolic link; write to the file itself`);
    if (existing?.isDirectory()) throw refuse(tool, `${rel} is a folder`);
    const tmp = `.${process.pid}-${randomBytes(8).toString("hex")}.tmp`;
    const handle = await open(at(dir, tmp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      await handle.writeFile(content, "utf8");
    } finally {
      await handle.close();
    }
    // rename never follows a symlink at either end: a link swapped in at the target is replaced, in this folder.
    await rename(at(dir, tmp), at(dir, name)).catch(async (e: unknown) => {
      await unlink(at(dir, tmp)).catch(() => undefined);
      throw e;
    });
    return [...parts, name].join("/");
  } finally {
    await dir.close();
  }
}
