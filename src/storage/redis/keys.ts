/**
 * Where RedisStorage keeps things. One place so the README, the stores and the `store` command
 * agree on the layout:
 *
 *   <base>:workflows               HASH    workflow name → JSON record (source, description, params, times, author)
 *   <base>:artifacts:meta          HASH    artifact name → JSON metadata (kind, size, sha256, description, metadata, times)
 *   <base>:artifacts:index         ZSET    every artifact name, score 0 (bytewise order finds "folder" conflicts)
 *   <base>:artifacts:data:<name>   STRING  the payload, exactly the bytes saved
 *   <prefix>:tools                 HASH    tool file stem → YAML text (`ts-code-mode store bootstrap --type tools`)
 *
 * `<base>` is `<prefix>`, or `<prefix>:ws:<workspaceId>` for a workspace. Listing reads the hashes
 * (HGETALL), never KEYS or SCAN, and every key of a store is known up front, so removing a store
 * is a handful of DELs.
 */
import { ValidationError } from "../../errors.js";

export const MAX_PREFIX_BYTES = 256;

export interface RedisKeys {
  /** `<prefix>` or `<prefix>:ws:<id>`. */
  readonly base: string;
  readonly workflows: string;
  readonly artifactMeta: string;
  readonly artifactIndex: string;
  /** Tools are deployment configuration, shared by every workspace of a prefix. */
  readonly tools: string;
  artifactData(name: string): string;
}

export function redisKeys(prefix: string, workspaceId?: string): RedisKeys {
  const base = workspaceId === undefined ? prefix : `${prefix}:ws:${workspaceId}`;
  const dataPrefix = `${base}:artifacts:data:`;
  return {
    base,
    workflows: `${base}:workflows`,
    artifactMeta: `${base}:artifacts:meta`,
    artifactIndex: `${base}:artifacts:index`,
    tools: `${prefix}:tools`,
    artifactData: (name) => dataPrefix + name,
  };
}

/**
 * A prefix is any printable text up to 256 bytes (`myapp`, `team:prod`). Control characters are
 * refused because they make keys unreadable in redis-cli and logs.
 */
export function validatePrefix(prefix: unknown): string {
  let problem: string | null = null;
  if (typeof prefix !== "string") problem = `expected a string, got ${prefix === null ? "null" : typeof prefix}`;
  else if (prefix.length === 0) problem = "it is empty";
  // eslint-disable-next-line no-control-regex
  else if (/[\u0000-\u001f\u007f-\u009f]/.test(prefix)) problem = "it contains a control character";
  else if (/[\ud800-\udfff]/u.test(prefix)) problem = "it contains an unpaired surrogate";
  else if (Buffer.byteLength(prefix, "utf8") > MAX_PREFIX_BYTES) problem = `it is longer than ${MAX_PREFIX_BYTES} bytes`;
  if (problem) {
    throw new ValidationError(`Invalid Redis key prefix: ${problem}. Accepted: printable text up to ${MAX_PREFIX_BYTES} bytes, e.g. "myapp".`);
  }
  return prefix as string;
}
