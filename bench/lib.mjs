/**
 * Benchmark plumbing shared by bench/run.mjs: one way to take samples, one way to summarise them,
 * one way to print them. Kept free of anything ts-code-mode specific so new executors and cases
 * only touch the tables in run.mjs.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

/** Wall time of one call of `fn`, in milliseconds. */
export async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/**
 * Take `iterations` samples of `sample(i)` after `warmup` discarded ones. `sample` resolves to a
 * duration in ms: usually `timed(...)`, but a case may time itself (inside the guest) or return a
 * difference of two timings.
 */
export async function measure(sample, { iterations, warmup }) {
  for (let i = 0; i < warmup; i++) await sample(i);
  const samples = new Array(iterations);
  for (let i = 0; i < iterations; i++) samples[i] = await sample(i);
  return samples;
}

/** Nearest-rank percentile of a sorted array; p in (0, 100]. */
function percentile(sorted, p) {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/** Median and p90 of `samples`, in ms, rounded to 0.1 µs. */
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median_ms: round(median), p90_ms: round(percentile(sorted, 90)) };
}

function round(ms) {
  return Math.round(ms * 10_000) / 10_000;
}

/**
 * One result row, in the shape the JSON lines promise. `budgetMs` is the target the figure should
 * meet; `floorMs`, when known, what the same work costs with nothing of ours in it (e.g. the bare
 * IPC round trip beside a subprocess run), so a figure reads as "so far above the floor".
 */
export function resultRow({ name, executor, iterations, samples, budgetMs, floorMs }) {
  const { median_ms, p90_ms } = summarize(samples);
  const budget_ms = budgetMs ?? null;
  return {
    case: name,
    executor,
    iterations,
    median_ms,
    p90_ms,
    budget_ms,
    within_budget: budget_ms === null ? null : median_ms <= budget_ms,
    floor_ms: floorMs ?? null,
  };
}

/** Machine-readable: one JSON object per line on stdout. */
export function printJsonLine(row) {
  process.stdout.write(`${JSON.stringify(row)}\n`);
}

/** Human-readable: an aligned table on stderr, budget misses marked. */
export function printTable(rows) {
  const header = ["case", "executor", "iters", "median ms", "p90 ms", "target ms", "median/target", "floor ms", "median/floor", "status"];
  const body = rows.map((r) => [
    r.case,
    r.executor,
    String(r.iterations),
    fmt(r.median_ms),
    fmt(r.p90_ms),
    r.budget_ms === null ? "-" : fmt(r.budget_ms),
    r.budget_ms === null ? "-" : `${(r.median_ms / r.budget_ms).toFixed(2)}x`,
    r.floor_ms == null ? "-" : fmt(r.floor_ms),
    r.floor_ms == null ? "-" : `${(r.median_ms / r.floor_ms).toFixed(2)}x`,
    r.within_budget === null ? "" : r.within_budget ? "ok" : "OVER TARGET",
  ]);
  const numeric = new Set([2, 3, 4, 5, 6, 7, 8]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => (numeric.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd();
  const out = [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)];
  process.stderr.write(`\n${out.join("\n")}\n`);
  const missed = rows.filter((r) => r.within_budget === false);
  if (missed.length) {
    process.stderr.write(`\n${missed.length} target(s) missed: ${missed.map((r) => `${r.case} [${r.executor}] ${fmt(r.median_ms)} ms > ${fmt(r.budget_ms)} ms`).join("; ")}\n`);
  } else {
    process.stderr.write("\nAll targets met.\n");
  }
}

function fmt(ms) {
  if (ms >= 100) return ms.toFixed(1);
  if (ms >= 1) return ms.toFixed(3);
  return ms.toFixed(4);
}

/** A temp folder for the duration of `fn`, removed afterwards whatever happens. */
export async function withTempDir(prefix, fn) {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * An in-process tool for measuring our own cost: `noop.ping` answers at once, `noop.sleep20`
 * after 20 ms (a tool waiting on I/O). Shared by every bench so they measure the same thing.
 */
export function noopAdapter() {
  const info = {
    name: "noop",
    type: "toolable",
    description: "Does nothing; used to measure the cost of a tool call",
    tags: ["bench"],
    callables: [
      { name: "ping", description: "Resolve to 'pong'", params: [], returns: "string" },
      { name: "sleep20", description: "Resolve to 'slept' after 20 ms (a tool that waits on I/O)", params: [], returns: "string" },
    ],
    direct: null,
  };
  const call = async (callable) => (callable === "sleep20" ? new Promise((r) => setTimeout(() => r("slept"), 20)) : "pong");
  // infoNow: its info is known without I/O, as a code tool's (defineTool) is.
  return { name: "noop", info: async () => info, infoNow: () => info, call, close: async () => {} };
}

/** Same id and size as the real model, random unit vectors: fills a cache fast. Queries go to the real model. */
export function syntheticThenReal(real) {
  let seed = 1;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff) * 2 - 1;
  return {
    id: real.id,
    dimensions: real.dimensions,
    embed: async (texts) =>
      texts.length === 1
        ? real.embed(texts)
        : texts.map(() => {
            const v = new Float32Array(real.dimensions);
            for (let i = 0; i < v.length; i++) v[i] = rand();
            return v;
          }),
  };
}

/**
 * Calls `search(i)` until no result is marked `indexing`: over a large library the first search
 * answers from names and descriptions and the index is built in the background. A case that times
 * searches over an indexed library waits for this first.
 */
export async function untilIndexed(search) {
  for (let i = 0; i < 6000; i++) {
    const hits = await search(i);
    if (!hits.some((h) => h.indexing)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the search index was not built within 5 minutes");
}

/** Spawn → exit of `node -e 0`, ms: the floor of any fresh Node process (`env`: its whole environment). */
export async function nodeStartFloor(env = process.env) {
  const t0 = performance.now();
  await exited(spawn(process.execPath, ["-e", "0"], { stdio: "ignore", env }), "node -e 0");
  return performance.now() - t0;
}

/**
 * The environment without NODE_EXTRA_CA_CERTS, or null where it is not set. Node 20 reads and parses
 * that bundle at every start (about 90 ms of `node -e 0`'s 130 on the machine the docs were measured
 * on), so where it is set the benches show `node -e 0` without it too: the default executor starts
 * two node processes on its cold path and pays it twice.
 */
export function envWithoutExtraCa() {
  if (!process.env.NODE_EXTRA_CA_CERTS) return null;
  const { NODE_EXTRA_CA_CERTS: _unused, ...rest } = process.env;
  return rest;
}

/**
 * The floor of a fresh process's first result when code runs in a Node process of its own (the
 * default subprocess executor), ms: a node process that spawns a node child with an IPC channel
 * (serialization "advanced", as ours) and reports, on stdout, the child's first message, timed from
 * the spawn of the first to that line. Two node starts in a row and one IPC message: the work the
 * isolate peers skip by running code inside the host process.
 */
export function twoProcessFloor() {
  const parent = String.raw`const c = require("node:child_process").spawn(process.execPath, ["-e", "process.send(2)"], { stdio: ["ignore", "ignore", "inherit", "ipc"], serialization: "advanced" });
c.once("message", () => { process.stdout.write("first\n"); c.kill(); process.exit(0); });`;
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ["-e", parent], { stdio: ["ignore", "pipe", "inherit"] });
    let took = null;
    child.stdout.setEncoding("utf8").on("data", (d) => {
      if (took === null && d.includes("first")) took = performance.now() - t0;
    });
    child.on("error", reject);
    child.on("close", (code) => (took !== null ? resolve(took) : reject(new Error(`the two-process floor's parent exited ${code} before its child's message`))));
  });
}

function exited(child, what) {
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${what} exited ${code}`))));
  });
}

/**
 * Per-call figures, measured one way by every bench (bench/calls.mjs, bench/peers.mjs) so they agree.
 *
 * Why one way: a round trip over a pipe costs several times more in a process that has made only a
 * few hundred of them than after a few thousand (a bare echo, loaded 2-core machine: 640–1,140 µs
 * in the first block of 100, 50–100 µs after 3,000; with --jitless it falls too, so it is not only
 * the JIT). bench:peers timed ours in a fresh probe process after 200 calls and the floor in its
 * long-lived parent, at another moment of a shared machine: 1.69× where bench/calls.mjs, warm and
 * interleaved, read 0.97–1.26×. Now both warm every case by CALL_WARMUP calls and take the floor in
 * the same process, interleaved with the figure it is the floor of.
 */
export const CALL_WARMUP = 3_000;

/** ms per round trip of `echo` (ipcEcho() or denoEcho()), the mean of `n`. */
export async function roundTripMs(echo, n) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await echo.roundTrip();
  return (performance.now() - t0) / n;
}

/**
 * ms per guest→host tool call: `run(n)` (a run of n awaited calls) minus `run(0)`, over n, timed on
 * the host, so the run's own cost cancels out; both timed runs follow another run at once.
 */
export async function perCallMs(run, n) {
  // An untimed run first: what the first run after a pause pays alone (the subprocess child is
  // frozen between runs: its SIGCONT cost 0.4–0.5 ms here) would otherwise land in run(n) only,
  // and 5 µs a call at n = 100.
  await run(0);
  const t0 = performance.now();
  await run(n);
  const t1 = performance.now();
  await run(0);
  const t2 = performance.now();
  return (t1 - t0 - (t2 - t1)) / n;
}

/** Warms a per-call case: `sample()` repeated until `calls` (what one sample makes) reach CALL_WARMUP. */
export async function warmUp(sample, calls) {
  for (let done = 0; done < CALL_WARMUP; done += calls) await sample();
}

/** A child node that answers each IPC message at once; one per bench run, killed at exit. */
let echoChild = null;
export function ipcEcho() {
  if (!echoChild) {
    const child = spawn(process.execPath, ["-e", 'process.on("message", (m) => process.send({ type: "result", runId: m.runId, result: { ok: true, value: 2, logs: [] } }))'], {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      serialization: "advanced",
    });
    let waiting = null;
    child.on("message", () => waiting?.());
    process.once("exit", () => child.kill());
    let runId = 0;
    echoChild = {
      roundTrip: () =>
        new Promise((resolve) => {
          waiting = resolve;
          child.send({ type: "run", runId: ++runId, script: "(async () => { return (1+1); })()", timeoutMs: 30000 });
        }),
      close: () => child.kill(),
    };
  }
  return echoChild;
}

/** Ends ipcEcho's child, if one was started. */
export function closeIpcEcho() {
  echoChild?.close();
  echoChild = null;
}

/**
 * The deno engine's per-call floor: a deno process (the binary SandboxExecutor({ engine: "deno" })
 * runs) that answers each frame on stdin with one on stdout at once — the same pipes, the same
 * frame layout as its driver (src/execution/sandbox/deno/driver.ts: "TCM1", u32 LE length, u32 LE
 * header length, JSON header), read the same way (Deno.stdin.read, writeSync), and like the driver
 * it writes its answer before it asks for the next read. Null when the deno package is not
 * installed. One per bench run, killed at exit.
 */
let denoEchoChild;
export function denoEcho() {
  if (denoEchoChild !== undefined) return denoEchoChild;
  let bin;
  try {
    bin = path.join(path.dirname(createRequire(import.meta.url).resolve("deno/package.json")), "deno");
  } catch {
    return (denoEchoChild = null);
  }
  const echo = String.raw`
const MAGIC = 0x314d4354, enc = new TextEncoder(), dec = new TextDecoder();
const send = (header) => {
  const head = enc.encode(JSON.stringify(header));
  const frame = new Uint8Array(12 + head.byteLength), view = new DataView(frame.buffer);
  view.setUint32(0, MAGIC, true); view.setUint32(4, 4 + head.byteLength, true); view.setUint32(8, head.byteLength, true);
  frame.set(head, 12);
  let off = 0;
  while (off < frame.byteLength) off += Deno.stdout.writeSync(frame.subarray(off));
};
let chunks = [], buffered = 0;
for (;;) {
  const chunk = new Uint8Array(1 << 16);
  const n = await Deno.stdin.read(chunk);
  if (n === null) Deno.exit(0);
  chunks.push(chunk.subarray(0, n)); buffered += n;
  for (;;) {
    if (buffered < 12) break;
    if (chunks.length > 1) { const all = new Uint8Array(buffered); let at = 0; for (const c of chunks) { all.set(c, at); at += c.byteLength; } chunks = [all]; }
    const first = chunks[0], view = new DataView(first.buffer, first.byteOffset, first.byteLength);
    const len = view.getUint32(4, true);
    if (buffered < 8 + len) break;
    const header = JSON.parse(dec.decode(first.subarray(12, 12 + view.getUint32(8, true))));
    const rest = first.subarray(8 + len);
    chunks = rest.byteLength ? [rest] : []; buffered -= 8 + len;
    send({ t: "call", id: header.id + 1, ns: "tools", op: "call", json: '["noop","ping",{}]', b: [] });
  }
}`;
  const child = spawn(bin, ["eval", "--quiet", echo], { stdio: ["pipe", "pipe", "inherit"] });
  process.once("exit", () => child.kill());
  let waiting = null;
  let buffered = Buffer.alloc(0);
  child.stdout.on("data", (chunk) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    while (buffered.length >= 8 && buffered.length >= 8 + buffered.readUInt32LE(4)) {
      const len = buffered.readUInt32LE(4);
      JSON.parse(buffered.subarray(12, 12 + buffered.readUInt32LE(8)).toString("utf8"));
      buffered = buffered.subarray(8 + len);
      waiting?.();
    }
  });
  let id = 0;
  const frame = (header) => {
    const head = Buffer.from(JSON.stringify(header), "utf8");
    const out = Buffer.alloc(12 + head.length);
    out.writeUInt32LE(0x314d4354, 0);
    out.writeUInt32LE(4 + head.length, 4);
    out.writeUInt32LE(head.length, 8);
    head.copy(out, 12);
    return out;
  };
  denoEchoChild = {
    roundTrip: () =>
      new Promise((resolve) => {
        waiting = resolve;
        child.stdin.write(frame({ t: "settle", id: ++id, ok: true, json: '"pong"', b: [] }));
      }),
    close: () => child.kill(),
  };
  return denoEchoChild;
}

/** Ends denoEcho's process, if one was started. */
export function closeDenoEcho() {
  denoEchoChild?.close();
  denoEchoChild = undefined;
}

/**
 * Proportional set size (KiB) of process `rootPid` and every process below it, from
 * /proc/<pid>/smaps_rollup: what a process tree costs in memory, shared pages split between their
 * users. Linux only; a process that ends while it is read counts as 0.
 */
export async function treePssKiB(rootPid = process.pid) {
  const { readdir, readFile } = await import("node:fs/promises");
  const parents = new Map();
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, "utf8").catch(() => null);
    // The command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'.
    if (stat) parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
  }
  const tree = [rootPid];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parents) if (ppid === tree[i]) tree.push(pid);
  let kib = 0;
  for (const pid of tree) {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => "");
    kib += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
  }
  return kib;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** True once a Redis server on 127.0.0.1:port answers PING. */
function pings(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let reply = "";
    socket.setTimeout(1_000, () => socket.destroy());
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (d) => {
      reply += d;
      if (reply.includes("\r\n")) socket.end();
    });
    socket.on("close", () => resolve(reply.startsWith("+PONG")));
    socket.on("error", () => undefined);
  });
}

/**
 * A throw-away redis-server (no persistence) on a free loopback port, files in `dir`; resolves
 * once it answers PING. `stop()` ends it.
 */
export async function startRedis(dir) {
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir], {
    stdio: "ignore",
  });
  await new Promise((resolve, reject) => {
    child.once("error", (err) =>
      reject(err.code === "ENOENT" ? new Error("redis-server not found on PATH; install it (bash .ci/run does, or apt-get install -y redis-server)") : err),
    );
    child.once("spawn", resolve);
  });
  for (let i = 0; !(await pings(port)); i++) {
    if (i > 200 || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`redis-server on port ${port} did not answer PING`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once("exit", resolve), child.kill("SIGTERM")))),
  };
}

/**
 * `parseArgs(config)` for a bench script at `scriptUrl` (its import.meta.url): `--help` (or `-h`)
 * prints the script's opening doc comment, which says what it measures and how to run it, and
 * exits 0; an option it does not know is named, with a pointer to --help, and exits 2 (not
 * parseArgs' stack trace).
 */
export function benchArgs(scriptUrl, config) {
  const file = fileURLToPath(scriptUrl);
  const name = path.relative(process.cwd(), file) || file;
  if (process.argv.slice(2).some((a) => a === "--help" || a === "-h")) {
    const doc = /^\/\*\*([\s\S]*?)\*\//m.exec(readFileSync(file, "utf8"));
    const text = doc ? doc[1].split("\n").map((l) => l.replace(/^\s*\* ?/, "")).join("\n").trim() : `node ${name}`;
    process.stdout.write(`${text}\n`);
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (err) {
    if (!String(err?.code).startsWith("ERR_PARSE_ARGS")) throw err;
    process.stderr.write(`${name}: ${err.message}\nRun node ${name} --help for what it measures and its options.\n`);
    process.exit(2);
  }
}
