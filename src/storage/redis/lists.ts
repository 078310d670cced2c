/**
 * A named list of strings in Redis (`<base>:<name>`), replaced as a whole in one transaction. The
 * deps layer keeps its configured package list here, so every process on one Redis (and prefix /
 * workspace) shares it. Storage only stores the strings; what they mean is the caller's business.
 */
import type { RedisConnection } from "./connection.js";

export class RedisListStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly key: string,
  ) {}

  async list(): Promise<string[]> {
    return this.conn.run(`read ${this.key}`, (c) => c.lrange(this.key, 0, -1));
  }

  async write(items: string[]): Promise<void> {
    await this.conn.run(`write ${this.key}`, async (c) => {
      const tx = c.multi().del(this.key);
      if (items.length) tx.rpush(this.key, ...items);
      const results = await tx.exec();
      const failed = results?.find(([err]) => err);
      if (failed?.[0]) throw failed[0];
    });
  }
}
