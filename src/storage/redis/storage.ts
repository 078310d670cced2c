/**
 * RedisStorage: workflows and artifacts in Redis, for several processes, containers or hosts that
 * share one store. Same behaviour as FileStorage (the conformance suite runs against both); the
 * key layout is in keys.ts.
 *
 *   new RedisStorage({ url: "redis://localhost:6379", prefix: "myapp" })
 *   new RedisStorage({ client, prefix: "myapp", workspaceId: "team-a" })   // an ioredis client you own
 */
import type { Redis } from "ioredis";
import { z } from "zod";
import { lazy } from "../../lazy.js";
import { StorageError, ValidationError } from "../../errors.js";
import { validateWorkspaceId } from "../names.js";
import { quotaOptionSchema } from "../quota.js";
import type { StorageBackend, StorageDescriptor } from "../protocol.js";
import { RedisArtifactStore } from "./artifacts.js";
import { parseRedisUrl, RedisConnection } from "./connection.js";
import { redisKeys, validatePrefix, type RedisKeys } from "./keys.js";
import { RedisBlobStore } from "./blobs.js";
import { RedisListStore } from "./lists.js";
import { RedisRunStore } from "./runs.js";
import { RedisSkillStore } from "./skills.js";
import { RedisToolStore } from "./tools.js";
import { RedisWorkflowStore } from "./workflows.js";

interface CommonOptions {
  /**
   * Every key starts with `<prefix>:`; several applications can share one server. No ":"-separated
   * segment may be a word of the key layout (ws, workflows, artifacts, tools, deps, fence, vectors).
   */
  prefix: string;
  /** Isolates one tenant's workflows and artifacts under `<prefix>:ws:<workspaceId>:` (no ":" in the id). */
  workspaceId?: string;
  /** Largest artifact in bytes (payload + description + metadata). Default 64 MiB. */
  maxArtifactBytes?: number;
  /** Largest total of this store's (workspace's) artifacts in bytes, enforced atomically by the server. Default 1 GiB. */
  maxStoreBytes?: number;
}

export interface RedisUrlOptions extends CommonOptions {
  /** `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS. */
  url: string;
  /** Give up connecting after this long (default 2000 ms). */
  connectTimeoutMs?: number;
  /** Fail a command that gets no reply within this long (default 30000 ms). */
  commandTimeoutMs?: number;
}

/**
 * An ioredis client (`new Redis(...)`), as far as RedisStorage checks it when given one. Declared
 * by shape: ioredis is an optional peer dependency, so its types may not be installed; an ioredis
 * `Redis` fits. (Methods, not function properties, so ioredis's overloaded methods fit.)
 */
export interface IoredisClient {
  readonly options: {
    host?: string;
    port?: number;
    path?: string;
    username?: string;
    password?: string;
    db?: number;
    tls?: object;
    sentinels?: readonly object[] | null;
  };
  readonly isCluster: boolean;
  call(command: string, ...args: string[]): Promise<unknown>;
  callBuffer(command: string, ...args: string[]): Promise<unknown>;
  multi(): unknown;
  hgetall(key: string): Promise<Record<string, string>>;
}

export interface RedisClientOptions extends CommonOptions {
  /** An ioredis client you own: used as configured, never quit by `close()`. */
  client: IoredisClient;
}

export type RedisStorageOptions = RedisUrlOptions | RedisClientOptions;

const timeout = lazy(() => z.number().int().min(1).max(3_600_000).optional());
const urlOptionsSchema = lazy(() => z.strictObject({
  url: z.string(),
  prefix: z.string(),
  workspaceId: z.string().optional(),
  connectTimeoutMs: timeout,
  commandTimeoutMs: timeout,
  maxArtifactBytes: quotaOptionSchema,
  maxStoreBytes: quotaOptionSchema,
}));
const clientOptionsSchema = lazy(() => z.strictObject({
  client: z.custom<IoredisClient>(isRedisClient, { message: "expected an ioredis client (new Redis(...))" }),
  prefix: z.string(),
  workspaceId: z.string().optional(),
  maxArtifactBytes: quotaOptionSchema,
  maxStoreBytes: quotaOptionSchema,
}));

export class RedisStorage implements StorageBackend {
  readonly prefix: string;
  readonly workspaceId?: string;
  readonly keys: RedisKeys;
  readonly workflows: RedisWorkflowStore;
  readonly artifacts: RedisArtifactStore;
  /** Agent Skills under `<base>:skills:*`. */
  readonly skills: RedisSkillStore;
  /** Tool YAML documents under `<prefix>:tools` (shared by all workspaces of the prefix). */
  readonly tools: RedisToolStore;
  /** The deps layer's package list (`<base>:deps`), shared by every process on this prefix/workspace. */
  readonly depsList: RedisListStore;
  /** Python sessions' package list (`<base>:deps:python`); each machine installs it into its own venv. */
  readonly pythonDepsList: RedisListStore;
  /** Named byte values under `<base>:<namespace>:*` (the search layer's vectors). */
  readonly blobs: RedisBlobStore;
  /** The run ledger under `<base>:runs:*` (runs.ts). */
  readonly runs: RedisRunStore;
  private readonly conn: RedisConnection;
  /** The URL we were given (password included: a descriptor must be able to reconnect). */
  private readonly url: string | undefined;

  constructor(options: RedisStorageOptions) {
    const isClientForm = typeof options === "object" && options !== null && "client" in options;
    const parsed = (isClientForm ? clientOptionsSchema : urlOptionsSchema).safeParse(options);
    if (!parsed.success) {
      throw new ValidationError(
        `Invalid RedisStorage options: ${z.prettifyError(parsed.error)}. Expected { url: "redis://host:6379", prefix, workspaceId? } ` +
          "or { client: <ioredis client>, prefix, workspaceId? }.",
      );
    }
    const o = parsed.data;
    this.prefix = validatePrefix(o.prefix);
    if (o.workspaceId !== undefined) this.workspaceId = validateWorkspaceId(o.workspaceId);
    if ("client" in o) {
      if (o.client.isCluster) throw new ValidationError("RedisStorage needs a standalone Redis client; Redis Cluster is not supported.");
      // Checked by shape (isRedisClient): an ioredis client, used with ioredis's types from here on.
      this.conn = RedisConnection.fromClient(o.client as unknown as Redis);
    } else {
      const url = parseRedisUrl(o.url);
      this.url = url.url;
      this.conn = RedisConnection.fromUrl(url, {
        ...(o.connectTimeoutMs !== undefined ? { connectTimeoutMs: o.connectTimeoutMs } : {}),
        ...(o.commandTimeoutMs !== undefined ? { commandTimeoutMs: o.commandTimeoutMs } : {}),
      });
    }
    this.keys = redisKeys(this.prefix, this.workspaceId);
    this.workflows = new RedisWorkflowStore(this.conn, this.keys);
    this.artifacts = new RedisArtifactStore(this.conn, this.keys, {
      ...(o.maxArtifactBytes !== undefined ? { maxArtifactBytes: o.maxArtifactBytes } : {}),
      ...(o.maxStoreBytes !== undefined ? { maxStoreBytes: o.maxStoreBytes } : {}),
    });
    this.skills = new RedisSkillStore(this.conn, this.keys, o.maxStoreBytes);
    this.tools = new RedisToolStore(this.conn, this.keys);
    this.depsList = new RedisListStore(this.conn, `${this.keys.base}:deps`);
    this.pythonDepsList = new RedisListStore(this.conn, `${this.keys.base}:deps:python`);
    this.blobs = new RedisBlobStore(this.conn, this.keys.base);
    this.runs = new RedisRunStore(this.conn, this.keys.base);
  }

  /** `host:port` of the server, safe to show (no credentials). */
  get where(): string {
    return this.conn.where;
  }

  /** Connects now (otherwise the first operation does) and checks the server answers. Throws StorageError. */
  async connect(): Promise<void> {
    await this.conn.run("reach the server", (c) => c.ping());
  }

  /**
   * `{ type: "redis", url, prefix, workspaceId? }`. The url keeps its password so another process
   * can reconnect; treat a descriptor like a secret. A storage built on a client describes that
   * client's host, port, db, user and password.
   */
  toDescriptor(): StorageDescriptor {
    const url = this.url ?? urlOfClient(this.conn.client);
    return this.workspaceId === undefined
      ? { type: "redis", url, prefix: this.prefix }
      : { type: "redis", url, prefix: this.prefix, workspaceId: this.workspaceId };
  }

  /** Quits the connection we opened (a client passed in stays open). Safe to call any number of times. */
  async close(): Promise<void> {
    await this.conn.close();
  }
}

function isRedisClient(value: unknown): value is IoredisClient {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v["options"] === "object" && ["call", "callBuffer", "multi", "hgetall"].every((m) => typeof v[m] === "function");
}

/** Rebuilds a URL from a client's options, for descriptors. */
function urlOfClient(client: IoredisClient): string {
  const o = client.options;
  if (o.path || (o.sentinels && o.sentinels.length > 0)) {
    throw new StorageError(
      "This RedisStorage uses a Unix-socket or Sentinel client, which a descriptor cannot describe; " +
        "build it from { url } to use it from another process.",
    );
  }
  const host = o.host ?? "localhost";
  const user = o.username ? encodeURIComponent(o.username) : "";
  const auth = o.password ? `${user}:${encodeURIComponent(o.password)}@` : user ? `${user}@` : "";
  const db = o.db ? `/${o.db}` : "";
  return `${o.tls ? "rediss" : "redis"}://${auth}${host.includes(":") ? `[${host}]` : host}:${o.port ?? 6379}${db}`;
}
