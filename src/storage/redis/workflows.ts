/**
 * Workflows in Redis: one hash, workflow name → the whole record as JSON. A save is one HSET, so a
 * reader sees the old record or the new one, never new source with old params; a listing is one
 * HVALS, however many workflows there are.
 *
 * Every write also sets `<base>:workflows:version` to a fresh token, in the same script. A listing
 * sends the version it holds and gets the hash back only when the version moved, so listing an
 * unchanged library of 10,000 workflows is one small round trip, not 5 MB of JSON to parse. A
 * missing version (a store written before it existed, or the key deleted) is created by the
 * listing, so a deleted key can never bring back an old token. Editing the hash by hand
 * (redis-cli HSET) bypasses the version: DEL the version key afterwards to make listings re-read.
 */
import { StorageError } from "../../errors.js";
import { compareNames, validateWorkflowName } from "../names.js";
import type { WorkflowFileProblem, WorkflowRecord, WorkflowStore } from "../protocol.js";
import { FENCED_LUA, LuaScript, newToken, type RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { checkWorkflowRecord, parseWorkflowJson } from "./records.js";

/** KEYS: workflows, fence, version. ARGV: name, record JSON, a fresh version token. Does nothing for a late copy of a fenced write. */
const SAVE = new LuaScript(`${FENCED_LUA}
if fenced(KEYS[2]) then return -1 end
redis.call('SET', KEYS[3], ARGV[3])
return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
`);

/** KEYS: workflows, fence, version. ARGV: name, a fresh version token. Replies 1 when something was deleted. */
const DELETE = new LuaScript(`${FENCED_LUA}
if fenced(KEYS[2]) then return -1 end
redis.call('SET', KEYS[3], ARGV[2])
return redis.call('HDEL', KEYS[1], ARGV[1])
`);

/** KEYS: workflows, version. ARGV: the version the caller holds ("" for none), a fresh token. Replies {version} or {version, values}. */
const LIST = new LuaScript(`
local v = redis.call('GET', KEYS[2])
if not v then
  v = ARGV[2]
  redis.call('SET', KEYS[2], v)
end
if v == ARGV[1] then return {v} end
return {v, redis.call('HVALS', KEYS[1])}
`);

/** KEYS: workflows, fence, version. ARGV: "clear" or "", a fresh version token, then name, JSON pairs. HSET in slices: Lua's unpack has a limit. */
const SAVE_MANY = new LuaScript(`${FENCED_LUA}
if fenced(KEYS[2]) then return -1 end
redis.call('SET', KEYS[3], ARGV[2])
if ARGV[1] == 'clear' then redis.call('DEL', KEYS[1]) end
local i = 3
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
  /** The last listing and the version it was read at; records are frozen because later listings share them. */
  private cached: { version: string; records: WorkflowRecord[] } | null = null;
  private readonly versionKey: string;

  constructor(
    private readonly conn: RedisConnection,
    private readonly keys: RedisKeys,
  ) {
    this.versionKey = `${keys.workflows}:version`;
  }

  async save(record: WorkflowRecord): Promise<void> {
    const name = validateWorkflowName((record as Partial<WorkflowRecord> | null | undefined)?.name);
    const json = JSON.stringify(checkWorkflowRecord(name, record));
    await this.conn.write(`save workflow "${name}"`, this.keys, (c, fence) =>
      this.conn.script(c, SAVE, [this.keys.workflows, fence, this.versionKey], [name, json, newToken()]),
    );
  }

  async get(name: string): Promise<WorkflowRecord | null> {
    validateWorkflowName(name);
    const json = await this.conn.run(`read workflow "${name}"`, (c) => c.hget(this.keys.workflows, name));
    return json === null ? null : parseWorkflowJson(json, this.where(name));
  }

  async list(): Promise<WorkflowRecord[]> {
    // HVALS, not HGETALL: each record carries its name, and half the reply is half the parsing.
    const held = this.cached;
    const reply = (await this.conn.run("list workflows", (c) =>
      this.conn.script(c, LIST, [this.keys.workflows, this.versionKey], [held?.version ?? "", newToken()]),
    )) as [string, string[]?];
    const [version, all] = reply;
    if (held && version === held.version && all === undefined) return [...held.records];
    const values = all ?? [];
    // A corrupt entry (edited by hand) is left out, never fails the listing; problems() names it.
    const records: WorkflowRecord[] = [];
    for (const json of values) {
      const record = tryParse(json, this.keys.workflows);
      if (record) records.push(freezeRecord(record));
    }
    records.sort((a, b) => compareNames(a.name, b.name));
    this.cached = { version, records };
    return [...records];
  }

  async problems(): Promise<WorkflowFileProblem[]> {
    const all = await this.conn.run("check workflows", (c) => c.hgetall(this.keys.workflows));
    const problems: WorkflowFileProblem[] = [];
    for (const [field, json] of Object.entries(all)) {
      try {
        const record = parseWorkflowJson(json, this.where(field));
        if (record.name !== field) problems.push({ file: field, problem: `the entry holds workflow "${record.name}"; it is listed under that name` });
      } catch (err) {
        if (!(err instanceof StorageError)) throw err;
        problems.push({ file: field, problem: `${err.message}; it is left out of the listing` });
      }
    }
    return problems.sort((a, b) => compareNames(a.file, b.file));
  }

  async delete(name: string): Promise<boolean> {
    validateWorkflowName(name);
    return (
      (await this.conn.write(`delete workflow "${name}"`, this.keys, (c, fence) =>
        this.conn.script(c, DELETE, [this.keys.workflows, fence, this.versionKey], [name, newToken()]),
      )) === 1
    );
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
    await this.conn.write(`save ${records.length} workflows`, this.keys, (c, fence) =>
      this.conn.script(c, SAVE_MANY, [this.keys.workflows, fence, this.versionKey], [options.clear ? "clear" : "", newToken(), ...fields]),
    );
  }

  private where(name: string): string {
    return `${this.keys.workflows} field ${JSON.stringify(name)}`;
  }
}

/** The record of one listed entry, or null when it is corrupt. */
function tryParse(json: string, where: string): WorkflowRecord | null {
  try {
    return parseWorkflowJson(json, where);
  } catch (err) {
    if (err instanceof StorageError) return null;
    throw err;
  }
}

/** Listings share records until the version moves, so nobody may change one. */
function freezeRecord(r: WorkflowRecord): WorkflowRecord {
  if (r.params) for (const p of r.params) Object.freeze(p);
  Object.freeze(r.params);
  Object.freeze(r.provenance);
  return Object.freeze(r);
}
