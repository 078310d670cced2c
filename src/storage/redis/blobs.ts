/**
 * Named byte values in Redis, grouped by namespace: `<base>:<namespace>:<key>` (base is the
 * prefix, or `<prefix>:ws:<id>`). The search layer keeps embedding vectors here
 * (`<prefix>:vectors:<space>:<scope>:<sha256>`), so every process on one Redis shares them.
 * Storage only stores bytes; what they mean is the caller's business.
 */
import type { BlobStore } from "../protocol.js";
import type { RedisConnection } from "./connection.js";
import { validateBlobNamespace } from "./keys.js";

const SCAN_COUNT = 1000;

export class RedisBlobStore implements BlobStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly base: string,
  ) {}

  async getMany(namespace: string, keys: readonly string[]): Promise<Map<string, Uint8Array>> {
    const found = new Map<string, Uint8Array>();
    if (keys.length === 0) return found;
    const values = await this.conn.run(`read ${keys.length} values of ${namespace}`, (c) => c.mgetBuffer(...keys.map((k) => this.key(namespace, k))));
    values.forEach((v, i) => {
      if (v) found.set(keys[i]!, new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    });
    return found;
  }

  async setMany(namespace: string, entries: ReadonlyMap<string, Uint8Array>): Promise<void> {
    if (entries.size === 0) return;
    const map = new Map<string, Buffer>();
    for (const [k, v] of entries) map.set(this.key(namespace, k), Buffer.from(v.buffer, v.byteOffset, v.byteLength));
    await this.conn.run(`write ${entries.size} values of ${namespace}`, (c) => c.mset(map));
  }

  async deleteMany(namespace: string, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.conn.run(`delete ${keys.length} values of ${namespace}`, (c) => c.del(...keys.map((k) => this.key(namespace, k))));
  }

  /** Every key of the namespace, by SCAN (never KEYS). */
  async keys(namespace: string): Promise<string[]> {
    const prefix = this.key(namespace, "");
    const pattern = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
    const out: string[] = [];
    await this.conn.run(`list values of ${namespace}`, async (c) => {
      let cursor = "0";
      do {
        const [next, batch] = await c.scan(cursor, "MATCH", pattern, "COUNT", SCAN_COUNT);
        for (const k of batch) out.push(k.slice(prefix.length));
        cursor = next;
      } while (cursor !== "0");
    });
    return out;
  }

  private key(namespace: string, key: string): string {
    return `${this.base}:${validateBlobNamespace(namespace)}:${key}`;
  }
}
