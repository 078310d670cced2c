/**
 * One Redis connection as the stores use it: connect on demand, fail fast and clearly when the
 * server is not there, and never put a password into a message.
 *
 * A client we create ourselves does not reconnect in the background (`retryStrategy` returns
 * null) and does not queue commands while offline. Instead every operation first makes sure the
 * connection is ready, connecting again if it was lost. So while the server is down each call fails
 * at once with a StorageError naming host:port, a command-line run never hangs in a retry loop, and
 * once the server is back the same RedisStorage simply works again.
 *
 * A client the caller passes in is used as configured (its retry and queue settings are theirs);
 * we only translate its errors, and never quit it.
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import type { Redis } from "ioredis";
import { InvalidNameError, NotFoundError, StorageError, ValidationError } from "../../errors.js";

export const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;
export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;

export interface ConnectionTimeouts {
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
}

/** A parsed `redis://` / `rediss://` URL: what we connect to and what messages may show. */
export interface RedisUrl {
  url: string;
  /** `host:port`, safe to print. */
  where: string;
  password?: string;
}

/** Checks a Redis URL without ever echoing its password. Throws ValidationError. */
export function parseRedisUrl(url: unknown): RedisUrl {
  if (typeof url !== "string" || url.trim() === "") {
    throw new ValidationError('Invalid Redis URL: expected a string like "redis://localhost:6379" or "rediss://user:password@host:6380/0".');
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValidationError(`Invalid Redis URL ${JSON.stringify(redact(url))}: not a URL. Expected redis://[user:password@]host[:port][/db].`);
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw new ValidationError(
      `Invalid Redis URL ${JSON.stringify(redact(url))}: the scheme must be redis:// or rediss:// (TLS), not ${parsed.protocol}//.`,
    );
  }
  if (parsed.hostname === "") throw new ValidationError(`Invalid Redis URL ${JSON.stringify(redact(url))}: it names no host.`);
  const db = parsed.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d{1,5}$/.test(db)) {
    throw new ValidationError(`Invalid Redis URL ${JSON.stringify(redact(url))}: the path must be a database number (e.g. /0), got "/${db}".`);
  }
  const password = parsed.password ? decodeURIComponent(parsed.password) : undefined;
  return { url, where: `${parsed.hostname}:${parsed.port || "6379"}`, ...(password ? { password } : {}) };
}

/** `redis://user:secret@host` → `redis://***@host`, for anything that might be shown. */
export function redact(text: string, password?: string): string {
  let out = text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^@/\s]*@/gi, "$1***@");
  // Only long enough passwords: replacing a one-letter password would garble the message.
  if (password && password.length >= 4) out = out.split(password).join("***");
  return out;
}

/** A Lua script run by SHA (sent once per server; a restarted server gets it again via EVAL). */
export class LuaScript {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash("sha1").update(source).digest("hex");
  }
}

type Args = Array<string | Buffer | number>;

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"]);
const CONNECTION_MESSAGES = /Connection is closed|Stream isn't writeable|Command timed out|MaxRetriesPerRequest|connect ETIMEDOUT|Socket closed/i;

export class RedisConnection {
  private closed = false;
  private connecting: Promise<void> | undefined;
  private lastError: Error | undefined;

  private constructor(
    readonly client: Redis,
    /** `host:port` (or the socket path) for messages. */
    readonly where: string,
    /** True when we created the client: we connect it on demand and quit it on close. */
    readonly owned: boolean,
    private readonly password: string | undefined,
  ) {
    if (owned) client.on("error", (err: Error) => (this.lastError = err));
  }

  static fromUrl(url: RedisUrl, timeouts: ConnectionTimeouts = {}): RedisConnection {
    const RedisClient = loadIoredis();
    const client = new RedisClient(url.url, {
      lazyConnect: true,
      connectTimeout: timeouts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      commandTimeout: timeouts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      // RESP2: no HELLO round trip, and works with servers older than Redis 6.
      protocol: 2,
      disableClientInfo: true,
    });
    return new RedisConnection(client, url.where, true, url.password);
  }

  static fromClient(client: Redis): RedisConnection {
    const o = client.options;
    const where = o.path ? o.path : `${o.host ?? "localhost"}:${o.port ?? 6379}`;
    return new RedisConnection(client, where, false, o.password);
  }

  /** Runs `fn` on a ready connection; every failure comes out as one of our typed errors. */
  async run<T>(op: string, fn: (client: Redis) => Promise<T>): Promise<T> {
    if (this.closed) throw new StorageError(`Cannot ${op}: this RedisStorage (${this.where}) is closed.`);
    try {
      if (this.owned && this.client.status !== "ready") await this.ready();
      return await fn(this.client);
    } catch (err) {
      throw this.toStorageError(op, err);
    }
  }

  /** EVALSHA, falling back to EVAL when the server does not know the script yet. */
  async script(client: Redis, script: LuaScript, keys: string[], args: Args, binary = false): Promise<unknown> {
    const call = binary ? client.callBuffer.bind(client) : client.call.bind(client);
    try {
      return await call("EVALSHA", script.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
      return call("EVAL", script.source, keys.length, ...keys, ...args);
    }
  }

  /** Idempotent. A client we were given is left open for its owner. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.owned) return;
    await this.connecting?.catch(() => undefined);
    if (this.client.status === "ready") {
      await this.client.quit().catch(() => this.client.disconnect());
    } else {
      this.client.disconnect();
    }
  }

  /** Connects (or reconnects) once, shared by every operation waiting for it. */
  private ready(): Promise<void> {
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const c = this.client;
    this.lastError = undefined;
    try {
      if (c.status === "connecting" || c.status === "connect") await waitForReady(c);
      else if (c.status !== "ready") await c.connect();
    } catch (err) {
      // Leave a clean "end" state for the next attempt. (Not when already ended: disconnect() would
      // set ioredis's manuallyClosing flag, which hides the next attempt's error event.)
      if (c.status !== "end") c.disconnect();
      const cause = this.lastError ?? err;
      throw new StorageError(`Cannot connect to Redis at ${this.where}: ${this.detail(cause)}. Is the server running and the URL right?`, {
        cause,
      });
    }
  }

  private toStorageError(op: string, err: unknown): Error {
    if (err instanceof StorageError || err instanceof ValidationError || err instanceof InvalidNameError || err instanceof NotFoundError) {
      return err;
    }
    if (isConnectionError(err)) {
      const cause = this.lastError ?? err;
      return new StorageError(
        `Cannot ${op}: lost the connection to Redis at ${this.where} (${this.detail(cause)}). The next call reconnects.`,
        { cause },
      );
    }
    return new StorageError(`Redis at ${this.where} failed to ${op}: ${this.detail(err)}`, { cause: err });
  }

  private detail(err: unknown): string {
    const code = err instanceof Error ? (err as NodeJS.ErrnoException).code : undefined;
    const message = err instanceof Error ? err.message : String(err);
    const text = code && !message.includes(code) ? `${code}: ${message}` : message;
    return redact(text, this.password);
  }
}

function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as NodeJS.ErrnoException).code;
  return (code !== undefined && CONNECTION_CODES.has(code)) || CONNECTION_MESSAGES.test(err.message);
}

function waitForReady(client: Redis): Promise<void> {
  return new Promise((resolve, reject) => {
    const onReady = () => {
      client.off("end", onEnd);
      resolve();
    };
    const onEnd = () => {
      client.off("ready", onReady);
      reject(new Error("Connection is closed."));
    };
    client.once("ready", onReady);
    client.once("end", onEnd);
  });
}

/** ioredis is loaded when a RedisStorage is first built, not when ts-code-mode is imported (it costs ~100 ms). */
const requireCjs = createRequire(import.meta.url);
let ioredis: typeof Redis | undefined;
function loadIoredis(): typeof Redis {
  ioredis ??= (requireCjs("ioredis") as { Redis: typeof Redis }).Redis;
  return ioredis;
}
