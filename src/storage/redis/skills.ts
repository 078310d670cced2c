/**
 * Skills in Redis: one hash per skill, `<base>:skills:files:<name>` (file path → bytes), and a set
 * `<base>:skills:index` of the names. A save replaces the hash and adds the name in one Lua script
 * (the skill's one commit point): a reader sees the old files or the new ones, never a mix. Bytes
 * go in and come out as Buffers, so binary assets survive.
 */
import { compareNames } from "../names.js";
import type { SkillFile, SkillStore } from "../protocol.js";
import { checkSkillFiles, MAX_SKILL_FILE_BYTES, PROVENANCE_FILE, SKILL_FILE, validateSkillName, validateSkillPath } from "../skill-names.js";
import { LuaScript, newToken, type RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";

/** KEYS: index, files, fence. ARGV: name, then path/bytes pairs. */
const SAVE = new LuaScript(`
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
redis.call('DEL', KEYS[2])
local i = 2
while i <= #ARGV do
  local last = math.min(i + 999, #ARGV)
  redis.call('HSET', KEYS[2], unpack(ARGV, i, last))
  i = last + 1
end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
`);

/** KEYS: index, files, fence. ARGV: name. */
const DELETE = new LuaScript(`
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
local n = redis.call('SREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
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
  ) {
    this.index = `${keys.base}:skills:index`;
  }

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
    const args: Array<string | Buffer> = [name];
    for (const f of files) args.push(f.path, Buffer.from(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength));
    const fence = this.keys.fence(newToken());
    await this.conn.write(`save skill "${name}"`, fence, (c) => this.conn.script(c, SAVE, [this.index, this.filesKey(name), fence], args));
  }

  async delete(name: string): Promise<boolean> {
    validateSkillName(name);
    const fence = this.keys.fence(newToken());
    return (await this.conn.write(`delete skill "${name}"`, fence, (c) => this.conn.script(c, DELETE, [this.index, this.filesKey(name), fence], [name]))) === 1;
  }
}
