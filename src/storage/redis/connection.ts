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
 *
 * No ghost writes. A write that gets no reply in time (the server hung, the connection dropped
 * after the command left) may still be applied later, when the server reads it. Such a write is
 * never reported as failed: it fails with StorageError code "OUTCOME_UNKNOWN", and every write
 * script first checks a per-write fence key. Before its next command, the storage sets the fence
 * of each write whose outcome was unknown (`<base>:fence:<token>`), so a late copy of that write
 * finds its fence and does nothing. After that point the write has either happened (before the
 * fence) or never will: a retry of the same call simply leaves the retry's value. Only a reply
 * from the server, or a failure before anything was sent, is reported as a plain failure.
 *
 * A write made inside a run (storage/write-deadline.ts) has a second fence: its fence key names the
 * run's deadline on the server's clock (`<base>:fence:<token>@<ms>`), and the script does nothing
 * once the server's TIME has reached it. The unknown-outcome fence above is set by the *next* call,
 * which a frozen server reads after the late copy waiting in the old socket; the deadline needs no
 * later call, so a run that reported TimeoutError never has its write land afterwards, however long
 * the server was frozen. The server's clock is compared with ours on every (re)connect (one TIME,
 * its uncertainty the round trip): the deadline sent is ours, shifted by the offset and moved
 * earlier by the uncertainty, so "before it on the server's clock" means "before it on ours".
 * Such a write fails with StorageError code "DEADLINE" and was not applied.
 *
 * Every error is a fresh object for its own call: callers sharing one connection attempt never
 * share (or mutate) one error.
 */
import { createHash, randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import type { Redis } from "ioredis";
import { INTEGRATION_PACKAGES, requirePeer } from "../../adapters/peer.js";
import { InvalidNameError, NotFoundError, StorageError, ValidationError } from "../../errors.js";
import { deadlinePassed, writeDeadline } from "../write-deadline.js";

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
  private digest: string | undefined;
  constructor(readonly source: string) {}

  /** The script's SHA-1 for EVALSHA, computed at first use: the scripts are made when the module loads, which every `import "ts-code-mode"` pays. */
  get sha(): string {
    return (this.digest ??= createHash("sha1").update(this.source).digest("hex"));
  }
}

type Args = Array<string | Buffer | number>;

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"]);
const CONNECTION_MESSAGES = /Connection is closed|Stream isn't writeable|Command timed out|MaxRetriesPerRequest|connect ETIMEDOUT|Socket closed/i;

/** This process's random part of every fence token; a counter makes each token unique. */
const TOKEN_BASE = randomBytes(12).toString("hex");
let tokenCounter = 0;

/** A token naming one write's fence, unique across processes (random base) and writes (counter). */
export function newToken(): string {
  return `${TOKEN_BASE}-${(tokenCounter++).toString(36)}`;
}

/** How long a fence outlives the write it cancels: far longer than any copy of it can wait in a socket. */
export const FENCE_TTL_SECONDS = 86_400;

/**
 * Lua every write script starts with: `fenced(key)` is true for a write that must do nothing, because
 * its fence was set (a late copy of a write whose outcome was unknown) or its deadline has passed
 * on the server's clock (see the top of this file). Scripts reply -1 or {'fenced'} then.
 */
export const FENCED_LUA = `
local function fenced(key)
  if redis.call('EXISTS', key) == 1 then return true end
  local by = string.match(key, '@(%d+)$')
  if not by then return false end
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) >= tonumber(by)
end
`;

/** Our clock against the server's: server ≈ ours + offsetMs, give or take uncertaintyMs. */
interface ClockOffset {
  offsetMs: number;
  uncertaintyMs: number;
}

export class RedisConnection {
  private closed = false;
  private connecting: Promise<void> | undefined;
  private lastError: Error | undefined;
  /** Fence keys of writes whose outcome is unknown; set before the next command. */
  private readonly unsettled = new Set<string>();
  /** Measured once per connection, on the first write with a deadline. */
  private clock: ClockOffset | undefined;

  /**
   * @internal This member and the others typed with ioredis's types are left out of the published
   * declarations: ioredis is an optional peer dependency, so its types may not be installed.
   */
  readonly client: Redis;

  private constructor(
    client: Redis,
    /** `host:port` (or the socket path) for messages. */
    readonly where: string,
    /** True when we created the client: we connect it on demand and quit it on close. */
    readonly owned: boolean,
    private readonly password: string | undefined,
    private readonly connectTimeoutMs: number = DEFAULT_CONNECT_TIMEOUT_MS,
  ) {
    this.client = client;
    if (owned) client.on("error", (err: Error) => (this.lastError = err));
  }

  /** @internal */
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
    return new RedisConnection(client, url.where, true, url.password, timeouts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
  }

  /** @internal */
  static fromClient(client: Redis): RedisConnection {
    const o = client.options;
    const where = o.path ? o.path : `${o.host ?? "localhost"}:${o.port ?? 6379}`;
    return new RedisConnection(client, where, false, o.password);
  }

  /** Runs `fn` on a ready connection; every failure comes out as one of our typed errors. @internal */
  async run<T>(op: string, fn: (client: Redis) => Promise<T>): Promise<T> {
    await this.prepare(op);
    try {
      return await fn(this.client);
    } catch (err) {
      throw this.toStorageError(op, err);
    }
  }

  /**
   * Runs a write whose script starts with `fenced(fenceKey)` (FENCED_LUA) and does nothing when it
   * holds. A reply from the server is the outcome; no reply (timeout, connection lost after
   * sending) is OUTCOME_UNKNOWN, and the fence is set before this storage sends anything else. A
   * write started inside a run gets a fence key that also falls at the run's deadline.
   * @internal
   */
  async write<T>(op: string, keys: { fence(token: string): string }, fn: (client: Redis, fenceKey: string) => Promise<T>): Promise<T> {
    const deadline = writeDeadline();
    await this.prepare(op);
    let fenceKey = keys.fence(newToken());
    if (deadline !== undefined) {
      const clock = (this.clock ??= await this.run(`${op} (reading the server's clock)`, () => this.measureClock()));
      fenceKey += `@${Math.floor(deadline + clock.offsetMs - clock.uncertaintyMs)}`;
    }
    try {
      const reply = await fn(this.client, fenceKey);
      if (deadline !== undefined && isFencedReply(reply)) throw deadlinePassed(op, `Redis at ${this.where}`);
      return reply;
    } catch (err) {
      if (err instanceof StorageError && err.code === "DEADLINE") throw err;
      if (isServerReply(err) || neverSent(err) || err instanceof ValidationError || err instanceof InvalidNameError) {
        throw this.toStorageError(op, err);
      }
      this.unsettled.add(fenceKey);
      // Drop the socket: a command still queued on it must not be answered to a later caller.
      if (this.owned) await disconnectAndWait(this.client);
      throw new StorageError(
        `Cannot be sure Redis at ${this.where} applied "${op}": ${this.detail(err)}. It may or may not have been applied; ` +
          "the next call on this storage settles it (a late copy is cancelled), so retrying the same call is safe.",
        { code: "OUTCOME_UNKNOWN", cause: err },
      );
    }
  }

  /** Ready to send: open (connecting if we own the client) and every earlier unknown write fenced. */
  private async prepare(op: string): Promise<void> {
    if (this.closed) throw new StorageError(`Cannot ${op}: this RedisStorage (${this.where}) is closed.`);
    try {
      if (this.owned && this.client.status !== "ready") await this.ready();
      if (this.unsettled.size > 0) await this.settle();
    } catch (err) {
      // The shared connect attempt failed for every waiter: each call gets its own error object.
      if (err instanceof StorageError) throw new StorageError(`Cannot ${op}: ${err.message}`, { cause: err });
      throw this.toStorageError(op, err);
    }
  }

  /** One TIME round trip: the server's clock against ours (see the top of this file). */
  private async measureClock(): Promise<ClockOffset> {
    const before = Date.now();
    const [seconds, micros] = await this.client.time();
    const after = Date.now();
    const server = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    // +1: Date.now() and TIME both truncate to the millisecond.
    return { offsetMs: server - (before + after) / 2, uncertaintyMs: (after - before) / 2 + 1 };
  }

  /** Sets the fence of every write whose outcome was unknown; a late copy of it then does nothing. */
  private async settle(): Promise<void> {
    for (const key of [...this.unsettled]) {
      await this.client.set(key, "cancelled", "EX", FENCE_TTL_SECONDS);
      this.unsettled.delete(key);
    }
  }

  /** EVALSHA, falling back to EVAL when the server does not know the script yet. @internal */
  async script(client: Redis, script: LuaScript, keys: string[], args: Args, binary = false): Promise<unknown> {
    // Arguments as one array, never spread: a bulk save passes hundreds of thousands of them, more
    // than a JavaScript call's argument list can hold ("Maximum call stack size exceeded").
    const call = (command: string, argv: Args) => (binary ? client.callBuffer(command, argv) : client.call(command, argv));
    try {
      return await call("EVALSHA", [script.sha, keys.length, ...keys, ...args]);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
      return call("EVAL", [script.source, keys.length, ...keys, ...args]);
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
    this.clock = undefined; // another server may answer now (a failover): measure again
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    try {
      // ioredis's connectTimeout covers only the TCP handshake: a hung server (SIGSTOP) accepts the
      // connection and then never answers the ready check. The whole attempt gets the timeout.
      const attempt = c.status === "connecting" || c.status === "connect" ? waitForReady(c) : c.status !== "ready" ? c.connect() : Promise.resolve();
      attempt.catch(() => undefined);
      await Promise.race([
        attempt,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            timedOut = true;
            reject(new Error(`no answer within ${this.connectTimeoutMs} ms (connectTimeoutMs)`));
          }, this.connectTimeoutMs);
        }),
      ]);
    } catch (err) {
      // Leave a clean "end" state for the next attempt. (Not when already ended: disconnect() would
      // set ioredis's manuallyClosing flag, which hides the next attempt's error event.)
      if (c.status !== "end") await disconnectAndWait(c);
      const cause = timedOut ? err : (this.lastError ?? err);
      throw new StorageError(`Cannot connect to Redis at ${this.where}: ${this.detail(cause)}. Is the server running and the URL right?`, {
        cause,
      });
    } finally {
      clearTimeout(timer);
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

/** What a write script replies when `fenced()` held (see FENCED_LUA). */
function isFencedReply(reply: unknown): boolean {
  return reply === -1 || (Array.isArray(reply) && reply[0] === "fenced");
}

/** ioredis refused to send: the connection was not writable, so the command never left. */
function neverSent(err: unknown): boolean {
  return err instanceof Error && /Stream isn't writeable/i.test(err.message);
}

/**
 * Closes the socket and waits until the client says so ("end"), so the next operation does not
 * see a stale "ready" from a reply that was already on its way.
 */
async function disconnectAndWait(client: Redis): Promise<void> {
  if (client.status === "end") return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, 1_000);
    function done(): void {
      clearTimeout(timer);
      client.off("end", done);
      resolve();
    }
    client.once("end", done);
    client.disconnect();
    // disconnect() half-closes (FIN) and waits for the server's close, which a hung server never
    // sends: destroy the socket so "end" comes now.
    (client.stream as { destroy?: () => void } | undefined)?.destroy?.();
  });
}

/** The server answered with an error (the command ran, or was refused, on the server). */
function isServerReply(err: unknown): boolean {
  return err instanceof Error && err.name === "ReplyError";
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

/**
 * ioredis is loaded when a RedisStorage is first built from a URL, not when ts-code-mode is imported
 * (it costs ~100 ms). It is an optional peer dependency (issue 41, a light core): without it, this
 * throws MissingPeerError naming the install line.
 */
const requireCjs = createRequire(import.meta.url);
let ioredis: typeof Redis | undefined;
function loadIoredis(): typeof Redis {
  ioredis ??= requirePeer<{ Redis: typeof Redis }>(INTEGRATION_PACKAGES.ioredis, requireCjs).Redis;
  return ioredis;
}
