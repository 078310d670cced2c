/**
 * Skills in Redis: one hash per skill, `<base>:skills:files:<name>` (file path → bytes), and a set
 * `<base>:skills:index` of the names. A save replaces the hash and adds the name in one Lua script
 * (the skill's one commit point): a reader sees the old files or the new ones, never a mix. Bytes
 * go in and come out as Buffers, so binary assets survive.
 */
import { compareNames } from "../names.js";
import type { SkillFile, SkillStore } from "../protocol.js";
import { DEFAULT_MAX_STORE_BYTES } from "../quota.js";
import { checkSkillFiles, skillBytes, skillsFull, MAX_SKILL_FILE_BYTES, PROVENANCE_FILE, SKILL_FILE, validateSkillName, validateSkillPath } from "../skill-names.js";
import { FENCED_LUA, LuaScript, type RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";

/** Lua prelude: `old`, the bytes of the skill being replaced or deleted; `used`, the skills' total. */
const OLD_SIZE = `
local old = 0
for _, p in ipairs(redis.call('HKEYS', KEYS[2])) do old = old + redis.call('HSTRLEN', KEYS[2], p) end
local used = tonumber(redis.call('GET', KEYS[4]) or '0')
`;

/**
 * KEYS: index, files, fence, bytes (the skills' total). ARGV: name, limit, size, then path/bytes
 * pairs. Replies 1, -1 (fenced), or {-2, bytes used by the other skills} when over the quota.
 */
const SAVE = new LuaScript(FENCED_LUA + OLD_SIZE + `
if fenced(KEYS[3]) then return -1 end
local after = used - old + tonumber(ARGV[3])
if after > tonumber(ARGV[2]) then return {-2, used - old} end
redis.call('DEL', KEYS[2])
local i = 4
while i <= #ARGV do
  local last = math.min(i + 999, #ARGV)
  redis.call('HSET', KEYS[2], unpack(ARGV, i, last))
  i = last + 1
end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('SET', KEYS[4], after)
return 1
`);

/** KEYS: index, files, fence, bytes. ARGV: name. */
const DELETE = new LuaScript(FENCED_LUA + OLD_SIZE + `
if fenced(KEYS[3]) then return -1 end
local n = redis.call('SREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
if old > 0 then redis.call('SET', KEYS[4], math.max(0, used - old)) end
return n
`);

/** KEYS: files. Replies path, size, path, size, ... in one round trip. */
const SIZES = new LuaScript(`
local out = {}
for _, p in ipairs(redis.call('HKEYS', KEYS[1])) do
  out[#out + 1] = p
  out[#out + 1] = redis.call('HSTRLEN', KEYS[1], p)
end
return out
`);

export class RedisSkillStore implements SkillStore {
  private readonly index: string;
  constructor(
    private readonly conn: RedisConnection,
    private readonly keys: RedisKeys,
    private readonly maxStoreBytes: number = DEFAULT_MAX_STORE_BYTES,
  ) {
    this.index = `${keys.base}:skills:index`;
    this.bytesKey = `${keys.base}:skills:bytes`;
  }
  private readonly bytesKey: string;

  private filesKey(name: string): string {
    return `${this.keys.base}:skills:files:${name}`;
  }

  location(name: string): string {
    return `skill://${validateSkillName(name)}/${SKILL_FILE}`;
  }

  async names(): Promise<string[]> {
    const names = await this.conn.run("list skills", (c) => c.smembers(this.index));
    return names.sort(compareNames);
  }

  async files(name: string): Promise<Array<{ path: string; size: number }> | null> {
    validateSkillName(name);
    const reply = (await this.conn.run(`list files of skill "${name}"`, (c) => this.conn.script(c, SIZES, [this.filesKey(name)], []))) as Array<string | number>;
    const out: Array<{ path: string; size: number }> = [];
    for (let i = 0; i + 1 < reply.length; i += 2) {
      const p = String(reply[i]);
      if (p !== PROVENANCE_FILE) out.push({ path: p, size: Number(reply[i + 1]) });
    }
    if (!out.some((f) => f.path === SKILL_FILE)) return null;
    return out.sort((a, b) => compareNames(a.path, b.path));
  }

  async read(name: string, filePath: string): Promise<Uint8Array | null> {
    validateSkillName(name);
    validateSkillPath(filePath);
    const buf = await this.conn.run(`read ${filePath} of skill "${name}"`, (c) => c.hgetBuffer(this.filesKey(name), filePath));
    if (buf === null || buf.byteLength > MAX_SKILL_FILE_BYTES) return null;
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  async save(name: string, files: readonly SkillFile[]): Promise<void> {
    validateSkillName(name);
    checkSkillFiles(name, files);
    const size = skillBytes(files);
    const args: Array<string | Buffer> = [name, String(this.maxStoreBytes), String(size)];
    for (const f of files) args.push(f.path, Buffer.from(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength));
    const reply = await this.conn.write(`save skill "${name}"`, this.keys, (c, fence) => this.conn.script(c, SAVE, [this.index, this.filesKey(name), fence, this.bytesKey], args));
    if (Array.isArray(reply)) throw skillsFull(name, size, Number(reply[1]), this.maxStoreBytes);
  }

  async delete(name: string): Promise<boolean> {
    validateSkillName(name);
    return (await this.conn.write(`delete skill "${name}"`, this.keys, (c, fence) => this.conn.script(c, DELETE, [this.index, this.filesKey(name), fence, this.bytesKey], [name]))) === 1;
  }
}
