/**
 * Workflows in Redis: one hash, workflow name → the whole record as JSON. A save is one HSET, so a
 * reader sees the old record or the new one, never new source with old params; a listing is one
 * HGETALL, however many workflows there are.
 */
import { compareNames, validateWorkflowName } from "../names.js";
import type { WorkflowRecord, WorkflowStore } from "../protocol.js";
import { LuaScript, newToken, type RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { checkWorkflowRecord, parseWorkflowJson } from "./records.js";

/** KEYS: workflows, fence. ARGV: name, record JSON. Does nothing for a late copy of a fenced write. */
const SAVE = new LuaScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
`);

/** KEYS: workflows, fence. ARGV: name. Replies 1 when something was deleted. */
const DELETE = new LuaScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
return redis.call('HDEL', KEYS[1], ARGV[1])
`);

/** KEYS: workflows, fence. ARGV: "clear" or "", then name, JSON pairs. HSET in slices: Lua's unpack has a limit. */
const SAVE_MANY = new LuaScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
if ARGV[1] == 'clear' then redis.call('DEL', KEYS[1]) end
local i = 2
while i <= #ARGV do
  local last = math.min(i + 999, #ARGV)
  redis.call('HSET', KEYS[1], unpack(ARGV, i, last))
  i = last + 1
end
return 1
`);

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
    const fence = this.keys.fence(newToken());
    await this.conn.write(`save workflow "${name}"`, fence, (c) => this.conn.script(c, SAVE, [this.keys.workflows, fence], [name, json]));
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
    const fence = this.keys.fence(newToken());
    return (await this.conn.write(`delete workflow "${name}"`, fence, (c) => this.conn.script(c, DELETE, [this.keys.workflows, fence], [name]))) === 1;
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
    const fence = this.keys.fence(newToken());
    await this.conn.write(`save ${records.length} workflows`, fence, (c) =>
      this.conn.script(c, SAVE_MANY, [this.keys.workflows, fence], [options.clear ? "clear" : "", ...fields]),
    );
  }

  private where(name: string): string {
    return `${this.keys.workflows} field ${JSON.stringify(name)}`;
  }
}
