/**
 * A VectorCache on a storage's shared byte store (Redis: `<prefix>:vectors:<space>:<scope>:<sha256>`,
 * raw float32 bytes), so every process on one Redis embeds each text once.
 */
import type { BlobStore } from "../storage/protocol.js";
import { VECTOR_KEY, type VectorCache } from "./vector-cache.js";

export class BlobVectorCache implements VectorCache {
  constructor(
    private readonly blobs: BlobStore,
    /** e.g. "vectors:use-lite-512d:workflows" */
    private readonly namespace: string,
    readonly dimensions: number,
  ) {}

  async getMany(keys: readonly string[]): Promise<Map<string, Float32Array>> {
    const found = new Map<string, Float32Array>();
    const bytes = await this.blobs.getMany(this.namespace, keys.filter((k) => VECTOR_KEY.test(k)));
    for (const [k, b] of bytes) {
      if (b.byteLength !== this.dimensions * 4) continue; // damaged or another space: embed again
      const v = new Float32Array(this.dimensions);
      new Uint8Array(v.buffer).set(b);
      found.set(k, v);
    }
    return found;
  }

  async setMany(entries: ReadonlyMap<string, Float32Array>): Promise<void> {
    const out = new Map<string, Uint8Array>();
    for (const [k, v] of entries) if (VECTOR_KEY.test(k) && v.length === this.dimensions) out.set(k, new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    await this.blobs.setMany(this.namespace, out);
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    await this.blobs.deleteMany(this.namespace, keys.filter((k) => VECTOR_KEY.test(k)));
  }

  async keys(): Promise<string[]> {
    return (await this.blobs.keys(this.namespace)).filter((k) => VECTOR_KEY.test(k));
  }
}
