/**
 * A fleet on real parts (issue 33 item 8): two `serve` processes (the built CLI) on one Redis
 * (a real redis-server) behind a real haproxy running examples/fleet/haproxy.cfg, its addresses
 * replaced by loopback ports. Sessions are routed by their id (learned from X-Session-Id). One
 * server is killed mid-run: its sessions get SessionLostError (with the output already streamed),
 * the other server's sessions go on, new sessions land on the survivor, and nothing stored is lost.
 * Every wait is on a readiness signal (a log line, /health, output received), never a sleep.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RemoteExecutor } from "../../src/execution/remote/executor.js";
import { Session } from "../../src/session.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";
import { waitFor } from "../helpers/processes.js";
import { deleteKeys, freePort, startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";
import { cleanup, ensureBuilt, REPO, startServe, tempDir, TOKEN, type ServeProcess } from "./harness.js";

let redis: RedisServer;
let dir: string;
let proxy: ChildProcess | undefined;
let proxyUrl: string;
let proxyLog = "";
const prefix = uniquePrefix("haproxy");
const servers: ServeProcess[] = [];
const sessions: Session[] = [];
const storages: RedisStorage[] = [];

/** The example's haproxy.cfg with its listening address and servers on loopback ports. */
async function fleetConfig(listen: number, backends: readonly number[]): Promise<string> {
  const example = await readFile(path.join(REPO, "examples", "fleet", "haproxy.cfg"), "utf8");
  const config = example
    .replace(/^(\s*)bind :8787$/m, `$1bind 127.0.0.1:${listen}`)
    .replace(/^(\s*)server a serve-a:8787 check$/m, `$1server a 127.0.0.1:${backends[0]} check`)
    .replace(/^(\s*)server b serve-b:8787 check$/m, `$1server b 127.0.0.1:${backends[1]} check`);
  // The example must still hold these lines: the test runs that file, not a copy of its own.
  expect(config).toContain(`bind 127.0.0.1:${listen}`);
  expect(config).toContain(`server b 127.0.0.1:${backends[1]}`);
  return config;
}

beforeAll(async () => {
  await ensureBuilt();
  redis = await startRedis();
  dir = await tempDir();
  // in-process: the code runs inside the serve process, so `process.pid` says which server holds a session.
  for (let i = 0; i < 2; i++) {
    servers.push(await startServe(["--token", TOKEN, "--redis", redis.url, "--prefix", prefix, "--tools", EXAMPLE_TOOLS_PATH, "--executor", "in-process"]));
  }
  const listen = await freePort();
  const cfg = path.join(dir, "haproxy.cfg");
  await writeFile(cfg, await fleetConfig(listen, servers.map((s) => Number(new URL(s.url).port))));
  proxy = spawn("haproxy", ["-f", cfg, "-db"], { stdio: ["ignore", "pipe", "pipe"] });
  proxy.stdout?.setEncoding("utf8").on("data", (d: string) => (proxyLog += d));
  proxy.stderr?.setEncoding("utf8").on("data", (d: string) => (proxyLog += d));
  proxyUrl = `http://127.0.0.1:${listen}`;
  // Ready when the proxy answers /health from a server (no token needed there).
  await waitFor(
    async () => {
      if (proxy?.exitCode !== null) throw new Error(`haproxy exited:\n${proxyLog}`);
      return fetch(`${proxyUrl}/health`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false);
    },
    "haproxy to answer /health",
    30_000,
    50,
  );
}, 180_000);

afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  await Promise.all(storages.map((s) => s.close()));
  if (proxy && proxy.exitCode === null) {
    const exited = new Promise((r) => proxy!.once("exit", r));
    proxy.kill("SIGKILL");
    await exited;
  }
  await Promise.all(servers.map((s) => s.stop()));
  await deleteKeys(redis.url, prefix).catch(() => undefined);
  await redis.close();
  await cleanup(dir);
});

function sessionViaProxy(): Session {
  const storage = new RedisStorage({ url: redis.url, prefix });
  storages.push(storage);
  const session = new Session({ storage, executor: new RemoteExecutor({ url: proxyUrl, token: TOKEN }) });
  sessions.push(session);
  return session;
}

/** The pid of the serve process that runs this session's code. */
async function serverOf(session: Session): Promise<number> {
  const r = await session.run("process.pid");
  expect(r.error).toBeNull();
  return r.value as number;
}

it("sticky by session id; killing one server loses only its sessions (with their streamed output), new sessions land on the other, and nothing stored is lost", async () => {
  const [a, b] = servers as [ServeProcess, ServeProcess];
  // Round robin: sessions alternate between the servers; a few are enough to have one on each.
  const byServer = new Map<number, Session>();
  for (let i = 0; i < 6 && byServer.size < 2; i++) {
    const s = sessionViaProxy();
    byServer.set(await serverOf(s), s);
  }
  const onA = byServer.get(a.child.pid!);
  const onB = byServer.get(b.child.pid!);
  expect(onA && onB, "one session on each server").toBeTruthy();

  // Every later request of a session reaches its own server (variables live there).
  for (const [pid, s] of byServer) {
    expect((await s.run(`const mark = ${pid}; await artifacts.save('fleet/from-' + mark + '.txt', 'saved on ' + mark); mark`)).value).toBe(pid);
    expect(await serverOf(s)).toBe(pid);
  }
  expect((await onA!.run("await workflows.create({ name: 'fivefold', source: 'export async function run({ n }: { n: number }) { return n * 5; }' }); 'ok'")).error).toBeNull();

  // Server a dies while one of its runs is streaming output.
  let killed = false;
  const lost = await onA!.run("console.log('streamed before the crash'); await new Promise((r) => setTimeout(r, 600_000))", {
    timeoutMs: 600_000,
    onOutput: (chunk) => {
      if (!killed && chunk.text.includes("streamed before the crash")) {
        killed = true;
        a.child.kill("SIGKILL");
      }
    },
  });
  expect(lost.error?.name).toBe("SessionLostError");
  expect(lost.stdout, JSON.stringify(lost)).toBe("streamed before the crash\n");
  // Later calls of that session say the same, at once.
  expect((await onA!.run("1")).error?.name).toBe("SessionLostError");

  // The other server's session keeps its variables.
  expect((await onB!.run("mark")).value).toBe(b.child.pid);

  // New sessions land on the survivor, and see everything the dead server's sessions stored.
  for (let i = 0; i < 3; i++) {
    const fresh = sessionViaProxy();
    expect(await serverOf(fresh)).toBe(b.child.pid);
    const seen = await fresh.run(`[await artifacts.load('fleet/from-${a.child.pid}.txt'), await workflows.fivefold({ n: 3 })]`);
    expect(seen.error).toBeNull();
    expect(seen.value).toEqual([`saved on ${a.child.pid}`, 15]);
  }
}, 180_000);
