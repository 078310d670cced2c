/**
 * FileVectorCache: one file per vector, `<dir>/<sha256 of the text>.f32`, holding the raw float32
 * values in the machine's byte order (little-endian on every platform Node ships for: x64, arm64),
 * dims × 4 bytes and nothing else, so the file size checks the format.
 *
 * Safe to share between processes: files are written with the atomic temp-file-and-rename of
 * storage/atomic.ts, and a key names its content, so two processes writing the same key write the
 * same bytes. A file of the wrong size (another model, a torn copy from elsewhere) reads as missing
 * and is overwritten by the next embedding.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { guardFs, isErrno, readFileIfExists, unlinkIfExists, writeFileAtomic } from "../storage/atomic.js";
import { VECTOR_KEY, type VectorCache } from "./vector-cache.js";

const SUFFIX = ".f32";
/** Files read or written at once: enough to hide latency, few enough not to exhaust descriptors. */
const PARALLEL = 64;

export class FileVectorCache implements VectorCache {
  constructor(
    readonly dir: string,
    readonly dimensions: number,
  ) {}

  async getMany(keys: readonly string[]): Promise<Map<string, Float32Array>> {
    const found = new Map<string, Float32Array>();
    await eachLimited(keys.filter((k) => VECTOR_KEY.test(k)), async (key) => {
      const bytes = await guardFs("read vector", this.file(key), () => readFileIfExists(this.file(key)));
      if (bytes && bytes.byteLength === this.dimensions * 4) {
        // Copy into a fresh, aligned buffer: a Buffer may sit at any offset of a shared pool.
        const v = new Float32Array(this.dimensions);
        new Uint8Array(v.buffer).set(bytes);
        found.set(key, v);
      }
    });
    return found;
  }

  async setMany(entries: ReadonlyMap<string, Float32Array>): Promise<void> {
    const list = [...entries].filter(([k, v]) => VECTOR_KEY.test(k) && v.length === this.dimensions);
    await eachLimited(list, ([key, v]) =>
      guardFs("write vector", this.file(key), () => writeFileAtomic(this.file(key), new Uint8Array(v.buffer, v.byteOffset, v.byteLength))),
    );
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    await eachLimited(keys.filter((k) => VECTOR_KEY.test(k)), async (key) => {
      await guardFs("delete vector", this.file(key), () => unlinkIfExists(this.file(key)));
    });
  }

  async keys(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if (isErrno(err, "ENOENT", "ENOTDIR")) return [];
      return guardFs("list vectors", this.dir, () => Promise.reject(err));
    }
    return names.filter((n) => n.endsWith(SUFFIX)).map((n) => n.slice(0, -SUFFIX.length)).filter((k) => VECTOR_KEY.test(k));
  }

  private file(key: string): string {
    return path.join(this.dir, `${key}${SUFFIX}`);
  }
}

async function eachLimited<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, worker));
}
