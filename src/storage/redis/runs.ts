/**
 * RedisStorage's run ledger:
 *
 *   <base>:runs:index            ZSET    run id, score = updatedAt (ms): newest-first listing and pruning
 *   <base>:runs:run:<id>         STRING  the header (JSON)
 *   <base>:runs:calls:<id>       HASH    seq → ledger entry (JSON)
 *   <base>:runs:claims:<id>      HASH    token → claim time; HSETNX claims a token once
 *
 * Each write is one MULTI transaction (its commit point): a header and its index score move
 * together; a call's entries land together. Listing reads the index, never KEYS or SCAN.
 */
import type { RedisConnection } from "./connection.js";
import { parseLedgerEntry, parseRunHeader, validateClaimToken, validateRunId, type LedgerEntry, type RunHeader, type RunListOptions, type RunStore } from "../runs.js";

export class RedisRunStore implements RunStore {
  private readonly index: string;

  constructor(
    private readonly conn: RedisConnection,
    private readonly base: string,
  ) {
    this.index = `${base}:runs:index`;
  }

  private runKey(id: string): string {
    return `${this.base}:runs:run:${validateRunId(id)}`;
  }
  private callsKey(id: string): string {
    return `${this.base}:runs:calls:${validateRunId(id)}`;
  }
  private claimsKey(id: string): string {
    return `${this.base}:runs:claims:${validateRunId(id)}`;
  }

  async putHeader(header: RunHeader): Promise<void> {
    const key = this.runKey(header.id);
    await this.conn.run(`write run ${header.id}`, async (c) => {
      const results = await c.multi().set(key, JSON.stringify(header)).zadd(this.index, Date.parse(header.updatedAt) || Date.now(), header.id).exec();
      throwFirst(results);
    });
  }

  async getHeader(id: string): Promise<RunHeader | null> {
    const key = this.runKey(id);
    const text = await this.conn.run(`read run ${id}`, (c) => c.get(key));
    return text === null ? null : parseRunHeader(text, key);
  }

  async putEntries(id: string, entries: readonly LedgerEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const key = this.callsKey(id);
    const fields: string[] = [];
    for (const e of entries) fields.push(String(e.seq), JSON.stringify(e));
    await this.conn.run(`write ledger of run ${id}`, async (c) => {
      await c.hset(key, ...fields);
    });
  }

  async entries(id: string): Promise<LedgerEntry[]> {
    const key = this.callsKey(id);
    const all = await this.conn.run(`read ledger of run ${id}`, (c) => c.hgetall(key));
    return Object.entries(all)
      .map(([seq, text]) => parseLedgerEntry(text, `${key} ${seq}`))
      .sort((a, b) => a.seq - b.seq);
  }

  async list(options: RunListOptions = {}): Promise<RunHeader[]> {
    const stop = options.limit === undefined ? -1 : Math.max(0, options.limit - 1);
    const ids = await this.conn.run("list runs", (c) => c.zrevrange(this.index, 0, stop));
    if (ids.length === 0) return [];
    const texts = await this.conn.run("read runs", (c) => c.mget(...ids.map((id) => this.runKey(id))));
    const out: RunHeader[] = [];
    texts.forEach((text, i) => {
      if (text !== null) out.push(parseRunHeader(text, this.runKey(ids[i]!)));
    });
    return out;
  }

  async delete(id: string): Promise<boolean> {
    const keys = [this.runKey(id), this.callsKey(id), this.claimsKey(id)];
    return this.conn.run(`delete run ${id}`, async (c) => {
      const results = await c.multi().del(...keys).zrem(this.index, id).exec();
      throwFirst(results);
      return Number(results?.[0]?.[1] ?? 0) > 0;
    });
  }

  async claim(id: string, token: string): Promise<boolean> {
    const key = this.claimsKey(id);
    validateClaimToken(token);
    const set = await this.conn.run(`claim run ${id}`, (c) => c.hsetnx(key, token, new Date().toISOString()));
    return set === 1;
  }
}

function throwFirst(results: Array<[Error | null, unknown]> | null): void {
  const failed = results?.find(([err]) => err);
  if (failed?.[0]) throw failed[0];
}
