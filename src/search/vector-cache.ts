/**
 * Where embedded vectors are kept so that an unchanged workflow is never embedded twice.
 *
 * A `VectorCache` is one folder-like namespace for one vector space (embedder id + dimensions) and
 * one scope (a storage's workflows, one tools folder). Keys are the sha256 hex of the exact text
 * that was embedded, so a changed text simply misses and an identical text written by another
 * process is shared. Implementations:
 *   - FileVectorCache (file-vector-cache.ts): `<base>/vectors/<space>/<scope>/<sha256>.f32`.
 *   - BlobVectorCache (blob-vector-cache.ts) on a storage's shared byte store; for Redis that is
 *     `<prefix>:vectors:<space>:<scope>:<sha256>` holding raw float32 bytes (MGET/MSET/DEL/SCAN).
 * `VectorLru` sits in front of any of them, in memory.
 */

export interface VectorCache {
  /** The vectors found; keys without one are absent from the map. */
  getMany(keys: readonly string[]): Promise<Map<string, Float32Array>>;
  setMany(entries: ReadonlyMap<string, Float32Array>): Promise<void>;
  deleteMany(keys: readonly string[]): Promise<void>;
  /** Every key held (for garbage collection). */
  keys(): Promise<string[]>;
}

/** A sha256 hex digest: the only key shape caches accept. */
export const VECTOR_KEY = /^[0-9a-f]{64}$/;

/** Bounded in-memory map in least-recently-used order (a JS Map iterates in insertion order). */
export class VectorLru {
  private readonly map = new Map<string, Float32Array>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.map.size;
  }

  get(key: string): Float32Array | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: string, value: Float32Array): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.capacity) {
      const oldest = this.map.keys().next().value;
      if (oldest === undefined) break;
      this.map.delete(oldest);
    }
  }

  delete(key: string): void {
    this.map.delete(key);
  }
}
