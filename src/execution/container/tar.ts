/**
 * A minimal ustar writer for putting a few files into a container (dockerode `putArchive`):
 * regular files and folders only, owner and mode set by the caller, names up to 255 bytes
 * (prefix + name). Written here rather than taken from a package: it is 40 lines, and the paths
 * are already checked (relative, no "..") by the skill library before they get here.
 */
import { ValidationError } from "../../errors.js";

export interface TarEntry {
  path: string;
  /** Absent: a folder. */
  bytes?: Uint8Array;
  mode: number;
}

export function tarOf(entries: readonly TarEntry[], owner: { uid: number; gid: number }): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const isDir = e.bytes === undefined;
    const full = Buffer.from(isDir && !e.path.endsWith("/") ? `${e.path}/` : e.path, "utf8");
    let name = full;
    let prefix = Buffer.alloc(0);
    if (full.length > 100) {
      // Split at a "/" so the name part fits 100 bytes and the prefix 155.
      const cut = full.lastIndexOf("/", full.length - 2 < 155 ? full.length - 2 : 155);
      if (cut <= 0 || full.length - cut - 1 > 100) throw new ValidationError(`a file path is too long to copy into the container (at most 255 bytes): ${e.path}`);
      prefix = full.subarray(0, cut);
      name = full.subarray(cut + 1);
    }
    const size = e.bytes?.length ?? 0;
    const h = Buffer.alloc(512);
    name.copy(h, 0);
    const octal = (n: number, width: number, at: number) => h.write(`${n.toString(8).padStart(width - 1, "0")}\0`, at, "ascii");
    octal(e.mode, 8, 100);
    octal(owner.uid, 8, 108);
    octal(owner.gid, 8, 116);
    octal(size, 12, 124);
    octal(0, 12, 136);
    h.write(isDir ? "5" : "0", 156, "ascii");
    h.write("ustar\0", 257, "ascii");
    h.write("00", 263, "ascii");
    prefix.copy(h, 345);
    h.write("        ", 148, "ascii");
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
    blocks.push(h);
    if (e.bytes && size > 0) {
      blocks.push(Buffer.from(e.bytes.buffer, e.bytes.byteOffset, e.bytes.byteLength));
      if (size % 512) blocks.push(Buffer.alloc(512 - (size % 512)));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}
