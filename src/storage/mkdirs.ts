/**
 * `mkdir -p` that always ends. Node's `mkdir(dir, { recursive: true })` loops forever when a
 * parent exists but the child cannot be made there and the kernel says ENOENT rather than EACCES
 * (`/proc/foo`, some FUSE and network mounts): libuv takes ENOENT as "make the parent first",
 * finds the parent there, and tries the child again — 100% CPU, and with mkdirSync a frozen process.
 * This walks up to the first folder that exists and makes each missing one below it once.
 */
import { mkdirSync, statSync } from "node:fs";
import path from "node:path";

export function makeDirsSync(dir: string): void {
  const missing: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const info = statSync(at, { throwIfNoEntry: false });
    if (info !== undefined) {
      if (!info.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${at}'`), { code: "ENOTDIR", path: at });
      break;
    }
    missing.push(at);
    if (path.dirname(at) === at) break;
  }
  for (const at of missing.reverse()) {
    try {
      mkdirSync(at);
    } catch (err) {
      // Made by someone else meanwhile is fine; anything else (ENOENT in /proc included) is final.
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || !statSync(at, { throwIfNoEntry: false })?.isDirectory()) throw err;
    }
  }
}
