/**
 * Workflows in Redis: one hash, workflow name → the whole record as JSON. A save is one HSET, so a
 * reader sees the old record or the new one, never new source with old params; a listing is one
 * HGETALL, however many workflows there are.
 */
import { compareNames, validateWorkflowName } from "../names.js";
import type { WorkflowRecord, WorkflowStore } from "../protocol.js";
import type { RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { checkWorkflowRecord, parseWorkflowJson } from "./records.js";

export interface ReplaceWorkflowsOptions {
  /** Remove every workflow not in `records`; the swap is atomic (readers see the old set or the new one). */
  clear?: boolean;
}

export class RedisWorkflowStore implements WorkflowStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly keys: RedisKeys,
  ) {}

  async save(record: WorkflowRecord): Promise<void> {
    const name = validateWorkflowName((record as Partial<WorkflowRecord> | null | undefined)?.name);
    const json = JSON.stringify(checkWorkflowRecord(name, record));
    await this.conn.run(`save workflow "${name}"`, (c) => c.hset(this.keys.workflows, name, json));
  }

  async get(name: string): Promise<WorkflowRecord | null> {
    validateWorkflowName(name);
    const json = await this.conn.run(`read workflow "${name}"`, (c) => c.hget(this.keys.workflows, name));
    return json === null ? null : parseWorkflowJson(json, this.where(name));
  }

  async list(): Promise<WorkflowRecord[]> {
    // HVALS, not HGETALL: each record carries its name, and half the reply is half the parsing.
    const all = await this.conn.run("list workflows", (c) => c.hvals(this.keys.workflows));
    return all.map((json, i) => parseWorkflowJson(json, `${this.keys.workflows} (entry ${i + 1} of ${all.length})`)).sort((a, b) => compareNames(a.name, b.name));
  }

  async delete(name: string): Promise<boolean> {
    validateWorkflowName(name);
    return (await this.conn.run(`delete workflow "${name}"`, (c) => c.hdel(this.keys.workflows, name))) === 1;
  }

  /**
   * Saves many records in one transaction (what `ts-code-mode store bootstrap` uses): every record
   * is checked first, so a bad one changes nothing.
   */
  async saveMany(records: readonly WorkflowRecord[], options: ReplaceWorkflowsOptions = {}): Promise<void> {
    const fields: string[] = [];
    for (const record of records) {
      const name = validateWorkflowName((record as Partial<WorkflowRecord> | null | undefined)?.name);
      fields.push(name, JSON.stringify(checkWorkflowRecord(name, record)));
    }
    if (fields.length === 0 && !options.clear) return;
    await this.conn.run(`save ${records.length} workflows`, async (c) => {
      const tx = c.multi();
      if (options.clear) tx.del(this.keys.workflows);
      if (fields.length) tx.hset(this.keys.workflows, ...fields);
      const results = await tx.exec();
      const failed = results?.find(([err]) => err !== null)?.[0];
      if (failed) throw failed;
      if (results === null) throw new Error("the transaction was aborted");
    });
  }

  private where(name: string): string {
    return `${this.keys.workflows} field ${JSON.stringify(name)}`;
  }
}
