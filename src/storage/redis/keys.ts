/**
 * Where RedisStorage keeps things. One place so docs/storage.md, the stores and the `store` command
 * agree on the layout:
 *
 *   <base>:workflows               HASH    workflow name → JSON record (source, description, params, times, author, provenance)
 *   <base>:workflows:version       STRING  a fresh token per workflow write, so a listing re-reads the hash only when it changed
 *   <base>:artifacts:meta          HASH    artifact name → JSON metadata (kind, size, sha256, description, metadata, times)
 *   <base>:artifacts:index         ZSET    every artifact name, score 0 (bytewise order finds "folder" conflicts)
 *   <base>:artifacts:data:<name>   STRING  the payload, exactly the bytes saved
 *   <base>:artifacts:bytes         STRING  the store's artifact bytes, for the store quota
 *   <base>:fence:<token>           STRING  (1 day TTL) a write whose outcome was unknown, cancelled (see connection.ts)
 *   <base>:skills:index            SET     every skill name (skills.ts)
 *   <base>:skills:files:<name>     HASH    file path → bytes, the whole skill folder (SKILL.md, scripts/..., .provenance.json)
 *   <base>:skills:bytes            STRING  the store's skill bytes, for the store quota
 *   <base>:deps                    LIST    the deps layer's package list
 *   <base>:deps:python             LIST    the Python sessions' package list (pip specs)
 *   <base>:runs:...                the run ledger (runs.ts)
 *   <base>:vectors:...             STRING  the search layer's vectors (blobs.ts)
 *   <prefix>:tools                 HASH    tool file stem → YAML text (`ts-code-mode store bootstrap --type tools`)
 *
 * `<base>` is `<prefix>`, or `<prefix>:ws:<workspaceId>` for a workspace. Listing reads the hashes
 * (HGETALL), never KEYS or SCAN, and every key of a store is known up front, so removing a store
 * is a handful of DELs.
 *
 * The grammar is unambiguous, so two tenants can never address the same key: the words above
 * (ws, workflows, artifacts, ...) are reserved and may not be a ":"-separated segment of a prefix,
 * and a workspace id contains no ":". A key's prefix is therefore everything before its first
 * reserved segment, and the workspace id (if any) is the one segment after "ws". Without these
 * rules prefix "app" + workspace "t1" and prefix "app:ws:t1" would share every key, and workspace
 * "t1:artifacts:data" would write into workspace "t1"'s payload keys.
 */
import { ValidationError } from "../../errors.js";

export const MAX_PREFIX_BYTES = 256;

/** Segments with a meaning in the layout above; never part of a prefix. */
export const RESERVED_SEGMENTS: readonly string[] = ["ws", "workflows", "artifacts", "tools", "deps", "fence", "vectors", "skills", "runs"];
/** Namespaces a BlobStore may use: each must start with one of these reserved segments. */
export const BLOB_NAMESPACE_ROOTS: readonly string[] = ["vectors"];

export interface RedisKeys {
  /** `<prefix>` or `<prefix>:ws:<id>`. */
  readonly base: string;
  readonly workflows: string;
  readonly artifactMeta: string;
  readonly artifactIndex: string;
  readonly artifactBytes: string;
  /** Tools are deployment configuration, shared by every workspace of a prefix. */
  readonly tools: string;
  artifactData(name: string): string;
  fence(token: string): string;
}

export function redisKeys(prefix: string, workspaceId?: string): RedisKeys {
  const base = workspaceId === undefined ? prefix : `${prefix}:ws:${workspaceId}`;
  const dataPrefix = `${base}:artifacts:data:`;
  return {
    base,
    workflows: `${base}:workflows`,
    artifactMeta: `${base}:artifacts:meta`,
    artifactIndex: `${base}:artifacts:index`,
    artifactBytes: `${base}:artifacts:bytes`,
    tools: `${prefix}:tools`,
    artifactData: (name) => dataPrefix + name,
    fence: (token) => `${base}:fence:${token}`,
  };
}

/**
 * A prefix is printable text up to 256 bytes (`myapp`, `team:prod`) none of whose ":"-separated
 * segments is a reserved word. Control characters are refused because they make keys unreadable
 * in redis-cli and logs.
 */
export function validatePrefix(prefix: unknown): string {
  let problem: string | null = null;
  if (typeof prefix !== "string") problem = `expected a string, got ${prefix === null ? "null" : typeof prefix}`;
  else if (prefix.length === 0) problem = "it is empty";
  // eslint-disable-next-line no-control-regex
  else if (/[\u0000-\u001f\u007f-\u009f]/.test(prefix)) problem = "it contains a control character";
  else if (/[\ud800-\udfff]/u.test(prefix)) problem = "it contains an unpaired surrogate";
  else if (Buffer.byteLength(prefix, "utf8") > MAX_PREFIX_BYTES) problem = `it is longer than ${MAX_PREFIX_BYTES} bytes`;
  else {
    const reserved = prefix.split(":").find((seg) => RESERVED_SEGMENTS.includes(seg));
    if (reserved !== undefined) {
      problem =
        `its segment "${reserved}" is reserved for the key layout (a prefix like "app:ws:t1" would share keys with ` +
        'prefix "app" and workspace "t1"; use workspaceId for tenants)';
    }
  }
  if (problem) {
    throw new ValidationError(
      `Invalid Redis key prefix: ${problem}. Accepted: printable text up to ${MAX_PREFIX_BYTES} bytes, e.g. "myapp" or "team:prod", ` +
        `with no ":"-separated segment equal to ${RESERVED_SEGMENTS.map((w) => `"${w}"`).join(", ")}.`,
    );
  }
  return prefix as string;
}

/** A blob namespace must start with a reserved root segment, so its keys cannot be read as another prefix's. */
export function validateBlobNamespace(namespace: string): string {
  const root = namespace.split(":")[0] ?? "";
  if (!BLOB_NAMESPACE_ROOTS.includes(root)) {
    throw new ValidationError(
      `Invalid blob namespace "${namespace}": it must start with one of ${BLOB_NAMESPACE_ROOTS.map((w) => `"${w}:"`).join(", ")} (reserved in the key layout).`,
    );
  }
  return namespace;
}
