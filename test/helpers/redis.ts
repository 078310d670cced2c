/**
 * A real, throw-away redis-server for tests: started as a child process on a free port with no
 * persistence, ready once it answers PING, stopped and cleaned up afterwards. Nothing is skipped
 * when redis-server is missing: the test fails and says how to get it, because a suite that quietly
 * skips its Redis half would report green while testing half the product.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";

export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` (with the password when one was set). */
  readonly url: string;
  /** Stops the server (SIGTERM, then SIGKILL), keeping the port number for `restart()`. */
  stop(): Promise<void>;
  /** Starts a fresh, empty server on the same port. */
  restart(): Promise<void>;
  /** Stops the server and removes its working folder. */
  close(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
}

export interface StartRedisOptions {
  /** `--requirepass`; the url then carries it. */
  password?: string;
}

const MISSING =
  "redis-server was not found on PATH. The Redis storage tests start their own server; install it with " +
  "`bash .ci/run` (which apt-get installs redis-server) or `apt-get install -y redis-server`.";

// A bound for a server that never answers, not a speed check: redis-server starts in milliseconds
// alone and in seconds on a loaded 2-core machine.
const READY_TIMEOUT_MS = 60_000;

/** A port that was free a moment ago (the server start retries if someone took it meanwhile). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-redis-"));
  let child: ChildProcess | undefined;
  let port = 0;

  const launch = async (wanted?: number): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      port = wanted ?? (await freePort());
      try {
        child = await spawnServer(port, dir, options.password);
        return;
      } catch (err) {
        // Another process grabbed the port between freePort() and the bind: try another one.
        if (wanted === undefined && attempt < 5 && /in use|bind/i.test(String(err))) continue;
        throw err;
      }
    }
  };

  const stop = async (): Promise<void> => {
    const c = child;
    child = undefined;
    c?.kill("SIGCONT"); // a paused server cannot act on SIGTERM
    if (c) await stopProcess(c);
  };

  await launch();
  const auth = options.password ? `:${encodeURIComponent(options.password)}@` : "";
  return {
    get port() {
      return port;
    },
    get url() {
      return `redis://${auth}127.0.0.1:${port}`;
    },
    stop,
    pause: () => void child?.kill("SIGSTOP"),
    resume: () => void child?.kill("SIGCONT"),
    restart: async () => {
      await stop();
      await launch(port);
    },
    close: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

async function spawnServer(port: number, dir: string, password?: string): Promise<ChildProcess> {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir];
  if (password) args.push("--requirepass", password);
  const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => (output += d));
  child.stderr?.setEncoding("utf8").on("data", (d: string) => (output += d));
  const exited = new Promise<never>((_, reject) => {
    child.once("error", (err: NodeJS.ErrnoException) => reject(err.code === "ENOENT" ? new Error(MISSING) : err));
    child.once("exit", (code, signal) => reject(new Error(`redis-server on port ${port} exited early (${code ?? signal}):\n${output.slice(-2000)}`)));
  });
  exited.catch(() => undefined); // observed below; avoid an unhandled rejection once ready
  try {
    await Promise.race([waitForPing(port, password), exited]);
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  return child;
}

/** Polls with a real client until the server answers PING (or gives up with what it said). */
async function waitForPing(port: number, password?: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last: unknown;
  while (Date.now() < deadline) {
    const client = new Redis({
      port,
      host: "127.0.0.1",
      ...(password ? { password } : {}),
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
    });
    client.on("error", (err) => (last = err));
    try {
      await client.connect();
      if ((await client.ping()) === "PONG") return;
    } catch (err) {
      last = err;
    } finally {
      client.disconnect();
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${READY_TIMEOUT_MS} ms: ${String(last)}`);
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.once("exit", () => {
      clearTimeout(force);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** A key prefix no other test uses, e.g. `tcm-test-3f9a…`. */
export function uniquePrefix(label = "t"): string {
  return `tcm-${label}-${randomBytes(6).toString("hex")}`;
}

/** Deletes every key starting with `prefix` (SCAN, never KEYS) and returns how many there were. */
export async function deleteKeys(url: string, prefix: string): Promise<number> {
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const keys = await scanKeys(client, prefix);
    if (keys.length) await client.del(...keys);
    return keys.length;
  } finally {
    client.disconnect();
  }
}

/** Every key starting with `prefix`, sorted. */
export async function listKeys(url: string, prefix: string): Promise<string[]> {
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return (await scanKeys(client, prefix)).sort();
  } finally {
    client.disconnect();
  }
}

async function scanKeys(client: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  // Glob-escape the prefix so a "*" or "[" in it is matched literally.
  const pattern = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
  do {
    const [next, batch] = await client.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== "0");
  return keys;
}
