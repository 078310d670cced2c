/**
 * Artifacts in Redis: the payload in its own binary-safe key, the metadata in one hash that is
 * also the listing, and a sorted set of names for the folder rules (see keys.ts).
 *
 * Every write touches the three together in one Lua script, and a load reads payload and metadata
 * in one script, so no reader ever sees data without its metadata or the reverse, and a client
 * killed mid-save leaves the old artifact or the new one. The save script also carries createdAt
 * over and advances updatedAt, which makes an overwrite one round trip with no read-modify-write
 * race between two writers.
 *
 * Names follow FileStorage's rules, including "an artifact cannot also be a folder", so the same
 * data can move between backends (`ts-code-mode store pull`) without a name that cannot exist on disk.
 */
import { StorageError, ValidationError } from "../../errors.js";
import { decodeArtifact, encodeArtifact, inferKind, sha256Hex } from "../codec.js";
import { compareNames, validateArtifactName } from "../names.js";
import type { ArtifactData, ArtifactInfo, ArtifactProblem, ArtifactStore, SaveArtifactOptions } from "../protocol.js";
import { artifactTooLarge, quotaSize, resolveQuota, storeFull, type Quota, type QuotaOptions } from "../quota.js";
import { FENCED_LUA, LuaScript, type RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { artifactInfo, parseArtifactMeta, parseArtifactOptions } from "./records.js";

/**
 * KEYS: index, meta, data, fence, bytes. ARGV: name, now (ms), metadata JSON without its first "{",
 * payload, quota size, store quota (-1: none), then the name's folders ("a", "a/b" for "a/b/c").
 * Replies {"ok", createdMs, updatedMs}; {"file", folder} when a folder of the name is an artifact;
 * {"folder"} when the name is one; {"quota", bytes used by the other artifacts}; {"fenced"} for a
 * late copy of a write whose outcome was reported unknown (see connection.ts).
 */
export const SAVE_ARTIFACT_SCRIPT = new LuaScript(`${FENCED_LUA}
if fenced(KEYS[4]) then return {'fenced'} end
local name = ARGV[1]
for i = 7, #ARGV do
  if redis.call('HEXISTS', KEYS[2], ARGV[i]) == 1 then return {'file', ARGV[i]} end
end
if redis.call('ZRANGEBYLEX', KEYS[1], '[' .. name .. '/', '(' .. name .. '0', 'LIMIT', 0, 1)[1] then return {'folder'} end
local function qsize(meta)
  return tonumber(string.match(meta, '^{"createdMs":%d+,"updatedMs":%d+,"q":(%d+),') or string.match(meta, '"size":(%d+)') or '0')
end
local used = tonumber(redis.call('GET', KEYS[5]) or '-1')
if used < 0 then
  used = 0
  for _, m in ipairs(redis.call('HVALS', KEYS[2])) do used = used + qsize(m) end
end
local now = tonumber(ARGV[2])
local created, updated = now, now
local prev = redis.call('HGET', KEYS[2], name)
local others = used
if prev then
  others = used - qsize(prev)
  local c, u = string.match(prev, '^{"createdMs":(%d+),"updatedMs":(%d+),')
  if c then
    created = tonumber(c)
    if tonumber(u) >= now then updated = tonumber(u) + 1 end
  end
end
local size = tonumber(ARGV[5])
local limit = tonumber(ARGV[6])
if limit >= 0 and others + size > limit then return {'quota', string.format('%d', others)} end
created = string.format('%d', created)
updated = string.format('%d', updated)
redis.call('SET', KEYS[3], ARGV[4])
redis.call('HSET', KEYS[2], name, '{"createdMs":' .. created .. ',"updatedMs":' .. updated .. ',"q":' .. ARGV[5] .. ',' .. ARGV[3])
redis.call('ZADD', KEYS[1], 0, name)
redis.call('SET', KEYS[5], string.format('%d', others + size))
return {'ok', created, updated}
`);

/** KEYS: meta, data. ARGV: name. Replies {metadata, payload} or nil. */
const LOAD = new LuaScript(`
local meta = redis.call('HGET', KEYS[1], ARGV[1])
if not meta then return false end
local data = redis.call('GET', KEYS[2])
if not data then return false end
return {meta, data}
`);

/** KEYS: index, meta, data, fence, bytes. ARGV: name. Replies 1 when something was deleted. */
const DELETE = new LuaScript(`${FENCED_LUA}
if fenced(KEYS[4]) then return -1 end
local prev = redis.call('HGET', KEYS[2], ARGV[1])
local n = redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[3])
local used = redis.call('GET', KEYS[5])
if prev and used then
  local q = tonumber(string.match(prev, '^{"createdMs":%d+,"updatedMs":%d+,"q":(%d+),') or string.match(prev, '"size":(%d+)') or '0')
  local left = tonumber(used) - q
  if left > 0 and redis.call('HLEN', KEYS[2]) > 0 then redis.call('SET', KEYS[5], string.format('%d', left)) else redis.call('DEL', KEYS[5]) end
end
return n
`);

export class RedisArtifactStore implements ArtifactStore {
  private readonly quota: Quota;

  constructor(
    private readonly conn: RedisConnection,
    private readonly keys: RedisKeys,
    quota: QuotaOptions = {},
  ) {
    this.quota = resolveQuota(quota);
  }

  async save(name: string, data: ArtifactData, options?: SaveArtifactOptions): Promise<ArtifactInfo> {
    const segments = validateArtifactName(name);
    const { description, metadata } = parseArtifactOptions(options);
    const { kind, bytes } = encodeArtifact(data);
    const metadataJson = JSON.stringify(metadata);
    const size = quotaSize(bytes.byteLength, description, metadataJson);
    if (size > this.quota.maxArtifactBytes) throw artifactTooLarge(name, size, this.quota.maxArtifactBytes);
    const tail = `"v":1,"kind":"${kind}","size":${bytes.byteLength},"sha256":"${sha256Hex(bytes)}","description":${JSON.stringify(description)},"metadata":${metadataJson}}`;
    const folders = segments.slice(0, -1).map((_, i) => segments.slice(0, i + 1).join("/"));
    const payload = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const reply = await this.conn.write(`save artifact "${name}"`, this.keys, (c, fence) =>
      this.conn.script(c, SAVE_ARTIFACT_SCRIPT, [this.keys.artifactIndex, this.keys.artifactMeta, this.keys.artifactData(name), fence, this.keys.artifactBytes], [
        name,
        Date.now(),
        tail,
        payload,
        size,
        Number.isFinite(this.quota.maxStoreBytes) ? this.quota.maxStoreBytes : -1,
        ...folders,
      ]),
    );
    const [status, a, b] = reply as string[];
    if (status === "quota") throw storeFull(name, size, Number(a), this.quota.maxStoreBytes);
    if (status === "file") {
      throw new ValidationError(`Cannot save artifact "${name}": "${a}" is an artifact, not a folder. Choose another name or delete that artifact first.`);
    }
    if (status === "folder") {
      throw new ValidationError(
        `Cannot save artifact "${name}": a folder of artifacts with that name exists (e.g. "${name}/..."); ` +
          "an artifact name cannot also be a folder. Choose another name or delete the artifacts inside it.",
      );
    }
    return {
      name,
      kind,
      size: bytes.byteLength,
      description,
      metadata: structuredClone(metadata),
      createdAt: new Date(Number(a)).toISOString(),
      updatedAt: new Date(Number(b)).toISOString(),
    };
  }

  async load(name: string): Promise<ArtifactData | undefined> {
    validateArtifactName(name);
    const reply = await this.conn.run(`load artifact "${name}"`, (c) =>
      this.conn.script(c, LOAD, [this.keys.artifactMeta, this.keys.artifactData(name)], [name], true),
    );
    if (!Array.isArray(reply)) return undefined;
    const [metaBytes, bytes] = reply as [Buffer, Buffer];
    const meta = parseArtifactMeta(metaBytes.toString("utf8"), this.where(name));
    // Only a payload replaced by hand (outside ts-code-mode) can disagree with its metadata.
    const kind = meta.size === bytes.byteLength ? meta.kind : inferKind(bytes, meta.kind, name);
    return decodeArtifact(kind, bytes);
  }

  async get(name: string): Promise<ArtifactInfo | null> {
    validateArtifactName(name);
    const meta = await this.conn.run(`read artifact "${name}"`, (c) => c.hget(this.keys.artifactMeta, name));
    return meta === null ? null : artifactInfo(name, parseArtifactMeta(meta, this.where(name)));
  }

  async list(): Promise<ArtifactInfo[]> {
    const all = await this.conn.run("list artifacts", (c) => c.hgetall(this.keys.artifactMeta));
    // A corrupt entry (edited by hand) is left out, never fails the listing; problems() names it.
    const infos: ArtifactInfo[] = [];
    for (const [name, meta] of Object.entries(all)) {
      try {
        infos.push(artifactInfo(name, parseArtifactMeta(meta, this.where(name))));
      } catch (err) {
        if (!(err instanceof StorageError)) throw err;
      }
    }
    return infos.sort((a, b) => compareNames(a.name, b.name));
  }

  async problems(): Promise<ArtifactProblem[]> {
    const all = await this.conn.run("check artifacts", (c) => c.hgetall(this.keys.artifactMeta));
    const problems: ArtifactProblem[] = [];
    for (const [name, meta] of Object.entries(all)) {
      try {
        parseArtifactMeta(meta, this.where(name));
      } catch (err) {
        if (!(err instanceof StorageError)) throw err;
        problems.push({ name, problem: `${err.message}; it is left out of the listing` });
      }
    }
    return problems.sort((a, b) => compareNames(a.name, b.name));
  }

  async exists(name: string): Promise<boolean> {
    validateArtifactName(name);
    return (await this.conn.run(`check artifact "${name}"`, (c) => c.hexists(this.keys.artifactMeta, name))) === 1;
  }

  async delete(name: string): Promise<boolean> {
    validateArtifactName(name);
    const n = await this.conn.write(`delete artifact "${name}"`, this.keys, (c, fence) =>
      this.conn.script(c, DELETE, [this.keys.artifactIndex, this.keys.artifactMeta, this.keys.artifactData(name), fence, this.keys.artifactBytes], [name]),
    );
    return n === 1;
  }

  private where(name: string): string {
    return `${this.keys.artifactMeta} field ${JSON.stringify(name)}`;
  }
}
