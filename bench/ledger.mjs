/**
 * What the run ledger costs (docs/durable-runs.md "What the ledger costs"), in every executor that
 * records durable runs, with the ledger in memory, in FileStorage and in RedisStorage. The tools
 * are in-process no-ops (bench/lib.mjs noopAdapter), so nothing but the ledger differs between a
 * durable session and a plain one of the same executor:
 *
 *   ledger cost per call, wall   per round: ((durable, N calls) − (plain, N calls) − fixed) / N,
 *                                 fixed = (durable, 0 calls) − (plain, 0 calls): what each further
 *                                 call costs. Target 10 µs.
 *   ledger cost per call, CPU    the same from this process's CPU time (process.cpuUsage: the main
 *                                 thread, the GC and the I/O threads), where the ledger does all
 *                                 its work whatever the executor: the figure that holds on a loaded
 *                                 machine, where wall-clock differences of a few µs drown. Target 10 µs.
 *   ledger own time per call     the ledger's own synchronous work, timed where it happens: the run
 *                                 hook's body (less the call it runs), its observer's callEnded
 *                                 (encoding and queuing the result) and the storage's putEntries
 *                                 (the batch write up to its first await), over a durable run of N
 *                                 calls, / N, less this instrumentation's own cost (calibrated).
 *                                 Unlike the two differences above it subtracts no second session,
 *                                 so it does not swing with where the OS put a process: in a
 *                                 container it settles what ±5 µs of noise between two identical
 *                                 sessions cannot. Leaves out the garbage collector. Target 10 µs.
 *   all-in per call              ((durable, N calls) − (plain, N calls)) / N: the fixed cost shared out
 *   durable run, fixed           (durable, 0 calls) − (plain, 0 calls): header writes, the replay
 *                                 prologue, restoring the realm afterwards
 *   pause→resume, 100 logged     session.resume of a run paused after 100 logged calls: verify the
 *                                 continuation, read the ledger, re-run the code serving 100 calls
 *                                 from it, run the approved call (noop.sleep20: 20 ms), log the
 *                                 outcome. Target 20 ms + the run's own work; floor = the run's own
 *                                 work, the same code in the plain session (100 calls + sleep20)
 *   resume over own work         per round: (pause→resume) − (own work), wall and CPU. Target 20 ms
 *   Redis commands per call      commands of a durable run of N calls (INFO commandstats), / N.
 *                                 Target: at most one storage write per call
 *
 * Storage "memory" is FileStorage with the run ledger swapped for a Map (the ledger's own
 * bookkeeping, no serialisation or I/O); "redis" is a redis-server this bench starts on a free
 * loopback port (or --redis URL). Executors: in-process, subprocess, sandbox (QuickJS),
 * sandbox-deno, container (when an engine answers; skipped with the reason otherwise). Python
 * sessions refuse durable runs (the ledger does not apply): the bench says so with the error.
 * Samples are interleaved, the durable and the plain session taking turns to go first; medians reported.
 *
 * `--write-docs` (a full run only: every executor and storage) rewrites the figures table in
 * docs/durable-runs.md between its markers, with the date and the machine's load.
 *
 *   npm run build && node bench/ledger.mjs [--rounds 9] [--calls 300] [--only in-process] [--storage file] [--redis URL] [--strict] [--no-pin] [--write-docs]
 */
import path from "node:path";
import os from "node:os";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { printJsonLine, printTable, resultRow, startRedis, summarize, withTempDir, noopAdapter, benchArgs } from "./lib.mjs";

// Measured on one CPU (Linux, util-linux's taskset; --no-pin to turn off): in a container session the
// host's CPU per call is bimodal, ~80 or ~150 µs, as the host process and its guest land on the same
// or on different cores, for runs at a time — a swing that drowns a 10 µs difference between two
// sessions. Pinned, every sample is taken in one mode (the figures in docs/durable-runs.md are).
if (process.platform === "linux" && !process.argv.includes("--no-pin") && !process.env.TCM_BENCH_PINNED) {
  const { spawnSync } = await import("node:child_process");
  const pinned = spawnSync("taskset", ["-c", "0", process.execPath, ...process.execArgv, ...process.argv.slice(1)], { stdio: "inherit", env: { ...process.env, TCM_BENCH_PINNED: "1" } });
  if (pinned.error === undefined) process.exit(pinned.status ?? 1);
  process.stderr.write(`bench: taskset not available (${pinned.error.message}); measuring unpinned\n`);
}

const dist = await import("../dist/index.js").catch((err) => {
  process.stderr.write(`bench: cannot load ../dist/index.js (${err.message}); build first: npm run build\n`);
  process.exit(2);
});
const { approval, buildImage, ContainerExecutor, FileStorage, HostServices, InProcessExecutor, PythonExecutor, RedisStorage, SandboxExecutor, Session, SubprocessExecutor, ToolRegistry } = dist;

const { values } = benchArgs(import.meta.url, {
  options: {
    rounds: { type: "string", default: "9" },
    calls: { type: "string", default: "300" },
    only: { type: "string" },
    storage: { type: "string" },
    redis: { type: "string" },
    strict: { type: "boolean", default: false },
    "no-pin": { type: "boolean", default: false },
    "write-docs": { type: "boolean", default: false },
  },
});
if (values["write-docs"] && (values.only || values.storage)) {
  process.stderr.write("bench: --write-docs writes the whole table: run it without --only and --storage\n");
  process.exit(2);
}
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const SECRET = "bench-secret-0123456789abcdef0123456789abcdef";
const PER_CALL_BUDGET_MS = 0.01;
const RESUME_BUDGET_MS = 20;

const EXECUTORS = {
  "in-process": (options) => new InProcessExecutor(options),
  subprocess: (options) => new SubprocessExecutor(options),
  sandbox: (options) => new SandboxExecutor(options),
  "sandbox-deno": (options) => new SandboxExecutor({ engine: "deno", ...options }),
  container: (options) => new ContainerExecutor(options),
};

/**
 * The ledger's own time (ms), summed where it runs: every run hook installed from here on is
 * wrapped, and so is each durable storage's putEntries (sessions()). `next` (the call itself, run
 * for real) is timed out of the hook's figure; the observer's callEnded, which encodes and queues
 * the result inside the call's settlement, is timed in.
 */
const ledgerTime = { ms: 0, skipped: 0 };
/**
 * A call's span longer than this is left out (and counted in `skipped`): nothing the ledger does for
 * one call takes a millisecond (the spans' 99th percentile is tens of µs), but the OS running
 * another process for a time slice, or a full garbage collection, lands in a span now and then and
 * alone adds 5–50 µs to a run's mean per call. putEntries' spans (a whole batch) are always counted.
 */
const SPAN_OUTLIER_MS = 1;
const addSpan = (ms) => {
  if (ms > SPAN_OUTLIER_MS) ledgerTime.skipped++;
  else ledgerTime.ms += ms;
};
const timedObserver = (observer) => ({
  callEnded(token, okay, outcome) {
    const t = performance.now();
    try {
      observer.callEnded(token, okay, outcome);
    } finally {
      addSpan(performance.now() - t);
    }
  },
});
const timedHook = (hook) => (call, next) => {
  const t0 = performance.now();
  let inside = 0;
  const timedNext = (ctx, args, observer, token) => {
    const t = performance.now();
    try {
      return next(ctx, args, observer && timedObserver(observer), token);
    } finally {
      inside += performance.now() - t;
    }
  };
  try {
    return hook(call, timedNext);
  } finally {
    addSpan(performance.now() - t0 - inside);
  }
};
const setRunHook = HostServices.prototype.setRunHook;
HostServices.prototype.setRunHook = function (hook) {
  return setRunHook.call(this, hook && timedHook(hook));
};

/** The ledger's putEntries with its synchronous part (serialising the batch, queuing the write) timed in. */
function timePutEntries(storage) {
  const runs = storage.runs;
  const put = runs.putEntries.bind(runs);
  runs.putEntries = (id, entries) => {
    const t = performance.now();
    try {
      return put(id, entries);
    } finally {
      ledgerTime.ms += performance.now() - t;
    }
  };
  return storage;
}

/**
 * What the instrumentation above adds to `own` per call (ms): its wrappers around a hook, a call
 * and an observer that do nothing, subtracted from the figure.
 */
function calibrateInstrumentation(n = 200_000) {
  const observer = { callEnded() {} };
  const done = Promise.resolve({ value: undefined, release() {} });
  const hook = timedHook((call, next) => next(call.ctx, undefined, observer, 0));
  const next = (ctx, args, obs, token) => (obs.callEnded(token, true, undefined), done);
  const call = { ns: "tools", op: "call", args: [], ctx: {} };
  for (let i = 0; i < 20_000; i++) hook(call, next);
  const before = ledgerTime.ms;
  for (let i = 0; i < n; i++) hook(call, next);
  const perCall = (ledgerTime.ms - before) / n;
  ledgerTime.ms = before;
  return perCall;
}

/** A copy, as a store hands out (records are JSON). */
const clone = (v) => (v === null ? null : JSON.parse(JSON.stringify(v)));

/** Runs whose entries the in-memory store keeps. */
const KEPT_RUNS = 4;

/** The run ledger in a Map: what the ledger costs before any serialisation or storage write. */
function memoryRunStore() {
  const headers = new Map();
  const calls = new Map();
  const claims = new Set();
  return {
    putHeader: async (h) => void headers.set(h.id, h),
    getHeader: async (id) => clone(headers.get(id) ?? null),
    putEntries: async (id, entries) => {
      let run = calls.get(id);
      if (!run) {
        calls.set(id, (run = new Map()));
        // Only the last few runs' entries stay (a round resumes the run it paused two runs
        // earlier): a store that writes entries out holds none of them on the heap, and tens of
        // thousands kept here made the durable side's garbage collection, not its ledger, grow
        // with every round.
        for (const old of calls.keys()) if (calls.size > KEPT_RUNS) calls.delete(old);
      }
      for (const e of entries) run.set(e.seq, e);
    },
    entries: async (id) => [...(calls.get(id)?.values() ?? [])].map((e) => clone(e)).sort((a, b) => a.seq - b.seq),
    list: async () => [...headers.values()].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : -1)),
    delete: async (id) => headers.delete(id) | calls.delete(id) > 0,
    claim: async (id, token) => !claims.has(`${id}/${token}`) && !!claims.add(`${id}/${token}`),
  };
}

const loop = (n) => `for (let i = 0; i < ${n}; i++) await tools.noop.ping(); 1`;
const PAUSING = `for (let i = 0; i < 100; i++) await tools.noop.ping(); await tools.noop.sleep20(); 2`;

/**
 * A plain session and a durable one of `kind` on `storage()`; noop.sleep20 needs a human in the
 * durable one. Both have the same approval middleware (the plain one's approves at once): it runs
 * on every tool call, ping included, so a middleware in the durable session only used to count
 * the middleware chain's own cost (most of the old 12.8 µs "ledger cost", CPU) as the ledger's.
 */
function sessions(kind, storage) {
  const executor = (decide) => {
    const tools = new ToolRegistry();
    tools.register(noopAdapter());
    return EXECUTORS[kind]({ tools, middleware: [approval(decide, { only: ["noop.sleep20"] })] });
  };
  const plainExecutor = executor(() => true);
  const durableExecutor = executor(() => "pending");
  return {
    plain: new Session({ storage: storage(), executor: plainExecutor }),
    durable: new Session({ storage: timePutEntries(storage()), executor: durableExecutor, durable: { secret: SECRET } }),
    executors: [plainExecutor, durableExecutor],
  };
}

/**
 * With this process pinned to CPU 0, puts every process of each container session (podman-init
 * and the guest node under it) on CPU 1. The engine starts them, so they do not inherit our
 * affinity: each container's guest landed on CPU 0 or 1 by chance and stayed there, and a guest
 * sharing the host's CPU makes the host's CPU per call ~70 µs higher, for the whole bench — a
 * difference between the durable and the plain session's containers that was not the ledger's.
 */
async function pinContainerGuests(executors) {
  // os.cpus(), not availableParallelism(): the latter counts only the CPUs this process may use (one).
  if (!process.env.TCM_BENCH_PINNED || os.cpus().length < 2) return;
  const { execFileSync } = await import("node:child_process");
  for (const executor of executors) {
    const id = executor.containerId;
    if (!id) continue;
    const root = execFileSync("podman", ["inspect", "--format", "{{.State.Pid}}", id], { encoding: "utf8" }).trim();
    // conmon, the container's monitor (its parent), relays the guest's stdio: it runs on every call too.
    const conmon = readFileSync(`/proc/${root}/stat`, "utf8").split(") ")[1]?.split(" ")[1];
    const pids = [root];
    for (let i = 0; i < pids.length; i++) {
      for (const task of readdirSync(`/proc/${pids[i]}/task`)) {
        const children = readFileSync(`/proc/${pids[i]}/task/${task}/children`, "utf8").trim();
        if (children) pids.push(...children.split(" "));
      }
    }
    for (const pid of conmon ? [conmon, ...pids] : pids) execFileSync("taskset", ["-a", "-p", "-c", "1", pid], { stdio: "ignore" });
    process.stderr.write(`bench: container ${id.slice(0, 12)}: processes ${pids.join(", ")} and conmon ${conmon} pinned to CPU 1\n`);
  }
}

async function ok(session, code) {
  const r = await session.run(code, { timeoutMs: 120_000 });
  if (!r.ok) throw new Error(`bench snippet failed: ${code}\n${r.error?.name}: ${r.error?.message}`);
  return r;
}

/** Wall time and this process's CPU time (all its threads) of one call of `fn`, in ms. */
async function timed(fn) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: (cpu.user + cpu.system) / 1000 };
}

/** Commands redis-server counted since the last reset, by name (INFO commandstats). */
async function commandCounts(client) {
  const text = await client.info("commandstats");
  const out = {};
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[m[1]] = Number(m[2]);
  return out;
}

async function measureOne(kind, storageName, storage, redisClient) {
  const { plain, durable, executors } = sessions(kind, storage);
  try {
    await ok(plain, "1");
    await ok(durable, "1");
    if (kind === "container") await pinContainerGuests(executors);
    await ok(plain, loop(CALLS));
    await ok(plain, PAUSING);
    await ok(durable, loop(CALLS));
    const s = { skipped: 0, perCall: [], perCallCpu: [], ownPerCall: [], allIn: [], fixed: [], resume: [], own: [], over: [], overCpu: [] };
    for (let r = 0; r < ROUNDS; r++) {
      // Which session goes first alternates by round: the second of two back-to-back runs pays for
      // garbage (and a cooler cache) the first left, which would otherwise all land on one side.
      const pair = async (code) => {
        if (r % 2 === 1) {
          const d = await timed(() => ok(durable, code));
          return { p: await timed(() => ok(plain, code)), d };
        }
        const p = await timed(() => ok(plain, code));
        return { p, d: await timed(() => ok(durable, code)) };
      };
      const ownBefore = ledgerTime.ms;
      const skippedBefore = ledgerTime.skipped;
      const { p: pN, d: dN } = await pair(loop(CALLS));
      s.ownPerCall.push((ledgerTime.ms - ownBefore) / CALLS - INSTRUMENTATION_MS);
      s.skipped += ledgerTime.skipped - skippedBefore;
      const { p: p0, d: d0 } = await pair(loop(0));
      s.fixed.push(d0.wall - p0.wall);
      s.allIn.push((dN.wall - pN.wall) / CALLS);
      s.perCall.push((dN.wall - pN.wall - (d0.wall - p0.wall)) / CALLS);
      s.perCallCpu.push((dN.cpu - pN.cpu - (d0.cpu - p0.cpu)) / CALLS);
      const paused = await durable.run(PAUSING, { timeoutMs: 120_000 });
      if (paused.status !== "paused") throw new Error(`expected a pause, got ${JSON.stringify(paused.error)}`);
      const own = await timed(() => ok(plain, PAUSING));
      let done;
      const resume = await timed(async () => (done = await durable.resume(paused.continuation, paused.pending.map((p) => ({ id: p.id, decision: "approve" })), { timeoutMs: 120_000 })));
      if (!done.ok || done.value !== 2) throw new Error(`resume failed: ${JSON.stringify(done.error)}`);
      s.own.push(own.wall);
      s.resume.push(resume.wall);
      s.over.push(resume.wall - own.wall);
      s.overCpu.push(resume.cpu - own.cpu);
    }
    const own = summarize(s.own).median_ms;
    const row = (name, samples, budgetMs, floorMs) => resultRow({ name: `${name} (${storageName})`, executor: kind, iterations: ROUNDS, samples, budgetMs, floorMs });
    const rows = [
      row("ledger own time per call", s.ownPerCall, PER_CALL_BUDGET_MS),
      row("ledger cost per call, CPU", s.perCallCpu, PER_CALL_BUDGET_MS),
      row("ledger cost per call, wall", s.perCall, PER_CALL_BUDGET_MS),
      row(`all-in per call, ${CALLS} calls, wall`, s.allIn),
      row("durable run, fixed, wall", s.fixed),
      row("pause→resume, 100 logged calls", s.resume, Math.round((RESUME_BUDGET_MS + own) * 1000) / 1000, own),
      row("resume over own work, wall", s.over, RESUME_BUDGET_MS),
      row("resume over own work, CPU", s.overCpu, RESUME_BUDGET_MS),
    ];
    let writes = null;
    if (redisClient) {
      await redisClient.config("RESETSTAT");
      await ok(durable, loop(CALLS));
      const counts = await commandCounts(redisClient);
      const total = Object.entries(counts).reduce((n, [name, c]) => (name === "info" || name === "config|resetstat" ? n : n + c), 0);
      writes = { case: `Redis commands per call, ${CALLS} calls (redis)`, executor: kind, calls: CALLS, commands: counts, ledger_writes_per_call: (counts.hset ?? 0) / CALLS, commands_per_call: total / CALLS, budget_per_call: 1, within_budget: total / CALLS <= 1 };
    }
    const spansNote = `${kind} (${storageName}): ${s.skipped} of ${ROUNDS * CALLS * 2} timed spans were over ${SPAN_OUTLIER_MS} ms and left out of the own time`;
    return { rows, writes, spansNote };
  } finally {
    await plain.close();
    await durable.close();
  }
}

/** Why `kind` cannot be measured here, or null. */
async function unavailable(kind) {
  if (kind !== "container") return null;
  try {
    await buildImage();
    return null;
  } catch (err) {
    return `no container engine or image (${err.message.split("\n")[0]})`;
  }
}

/** Python sessions and the ledger: the refusal, verbatim. */
async function pythonNote(dir) {
  const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "python") }), executor: new PythonExecutor(), durable: { secret: SECRET } });
  try {
    const r = await session.run("1");
    return r.error ? `${r.error.name}: ${r.error.message}` : "ran (the ledger now applies to Python: measure it)";
  } catch (err) {
    return `${err.name}: ${err.message}`;
  } finally {
    await session.close().catch(() => undefined);
  }
}

const INSTRUMENTATION_MS = calibrateInstrumentation();
const LOAD_AT_START = os.loadavg().map((l) => l.toFixed(2)).join(" ");

const DOCS_TABLE_START = "<!-- bench:ledger table: written by `node bench/ledger.mjs --write-docs` -->";
const DOCS_TABLE_END = "<!-- bench:ledger table end -->";
const DURABLE_DOC = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "docs", "durable-runs.md");

/** The figures table docs/durable-runs.md shows: one line per executor and storage. */
function docsTable(rows, writes, header) {
  const median = (name, executor) => rows.find((r) => r.case === name && r.executor === executor)?.median_ms;
  const us = (ms) => (ms === undefined ? "–" : `${(ms * 1000).toFixed(1)} µs`);
  const ms = (v) => (v === undefined ? "–" : `${v.toFixed(1)} ms`);
  const lines = [
    header,
    "",
    "| executor | storage | ledger's own time per call (target 10 µs in memory) | CPU difference per call | pause→resume over the run's own work (target 20 ms) | Redis commands per call (target ≤ 1) |",
    "|---|---|---|---|---|---|",
  ];
  const executors = [...new Set(rows.map((r) => r.executor))];
  for (const executor of executors) {
    for (const storage of ["memory", "file", "redis"]) {
      const own = median(`ledger own time per call (${storage})`, executor);
      if (own === undefined) continue;
      const redis = storage === "redis" ? writes.find((w) => w.executor === executor) : undefined;
      lines.push(`| ${executor} | ${storage} | ${us(own)} | ${us(median(`ledger cost per call, CPU (${storage})`, executor))} | ${ms(median(`resume over own work, wall (${storage})`, executor))} | ${redis ? redis.commands_per_call.toFixed(3) : "–"} |`);
    }
  }
  return lines.join("\n");
}

await withTempDir("tcm-bench-ledger-", async (dir) => {
  process.stderr.write(`ts-code-mode ledger bench — node ${process.version}, ${os.cpus()[0]?.model ?? "cpu"} ×${os.cpus().length}, load ${os.loadavg()[0].toFixed(1)}, ${ROUNDS} rounds, ${CALLS} calls; own-time instrumentation ${(INSTRUMENTATION_MS * 1000).toFixed(2)} µs per call (subtracted)\n`);
  let redis = null;
  let redisNote = null;
  try {
    redis = values.redis ? { url: values.redis, stop: async () => {} } : await startRedis(path.join(dir, "redis"));
  } catch (err) {
    redisNote = err.message;
  }
  const Redis = (await import("ioredis")).default;
  const redisClient = redis ? new Redis(redis.url, { lazyConnect: true }) : null;
  await redisClient?.connect();
  let n = 0;
  const storages = {
    memory: () => {
      const s = new FileStorage({ basePath: path.join(dir, `memory-${n++}`) });
      s.runs = memoryRunStore();
      return s;
    },
    file: () => new FileStorage({ basePath: path.join(dir, `file-${n++}`) }),
    redis: redis ? () => new RedisStorage({ url: redis.url, prefix: `bench-ledger-${process.pid}-${n++}` }) : null,
  };
  const rows = [];
  const writes = [];
  const notes = [];
  /** What was not measured and why: in the notes, and in the docs table's header. */
  const skipped = [];
  if (redisNote) skipped.push(`redis: skipped (${redisNote})`);
  try {
    for (const kind of Object.keys(EXECUTORS)) {
      if (values.only && !kind.includes(values.only)) continue;
      const why = await unavailable(kind);
      if (why) {
        skipped.push(`${kind}: skipped (${why})`);
        continue;
      }
      for (const [name, make] of Object.entries(storages)) {
        if (!make || (values.storage && name !== values.storage)) continue;
        const got = await measureOne(kind, name, make, name === "redis" ? redisClient : null);
        rows.push(...got.rows);
        if (got.writes) writes.push(got.writes);
        notes.push(got.spansNote);
      }
    }
    if (!values.only || "python".includes(values.only)) notes.push(`python: the ledger does not apply — ${await pythonNote(dir)}`);
  } finally {
    await redisClient?.quit().catch(() => undefined);
    await redis?.stop();
  }
  for (const row of rows) printJsonLine(row);
  for (const w of writes) printJsonLine(w);
  printTable(rows);
  if (writes.length) {
    process.stderr.write(`\nRedis, one durable run of ${CALLS} calls (target: at most one storage write per call):\n`);
    for (const w of writes) {
      const listed = Object.entries(w.commands).filter(([k]) => k !== "info" && k !== "config|resetstat").map(([k, v]) => `${k} ${v}`).join(", ");
      process.stderr.write(`  ${w.executor.padEnd(13)} ${w.commands_per_call.toFixed(3)} commands per call (ledger HSETs ${w.ledger_writes_per_call.toFixed(3)} per call) — ${listed} — ${w.within_budget ? "ok" : "OVER TARGET"}\n`);
    }
  }
  for (const note of [...skipped, ...notes]) process.stderr.write(`\n${note}`);
  process.stderr.write("\n");
  if (values["write-docs"]) {
    const header = `(${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, load average at start ${LOAD_AT_START}, medians of ${ROUNDS} rounds of ${CALLS} calls${skipped.length ? `; ${skipped.join("; ")}` : ""})`;
    const doc = readFileSync(DURABLE_DOC, "utf8");
    const start = doc.indexOf(DOCS_TABLE_START);
    const end = doc.indexOf(DOCS_TABLE_END);
    if (start < 0 || end < start) throw new Error(`docs/durable-runs.md has no ${DOCS_TABLE_START} … ${DOCS_TABLE_END} block`);
    writeFileSync(DURABLE_DOC, `${doc.slice(0, start + DOCS_TABLE_START.length)}\n${docsTable(rows, writes, header)}\n${doc.slice(end)}`);
    process.stderr.write("bench: docs/durable-runs.md's figures table rewritten\n");
  }
  if (values.strict && (rows.some((r) => r.within_budget === false) || writes.some((w) => !w.within_budget))) process.exitCode = 1;
});
