/**
 * Per-call cost against its floor (issue 42 item 3), interleaved: in each round one sample of every
 * case, so a loaded machine slows all of them alike; medians over rounds, and each figure over the
 * bare IPC round trip measured in the same rounds.
 *
 *   npm run build && node bench/calls.mjs [--rounds 15] [--calls 300] [--compare OTHER_DIST]
 *
 * Cases: the bare IPC round trip (one message to a child node and its answer, the subprocess
 * executor's floor); the bare deno round trip (one frame to a deno process on its stdin and one
 * back on its stdout, as the deno engine's driver reads and writes them: that engine's floor); a
 * guest→host tool call in the subprocess executor, the sandbox (QuickJS) executor and the sandbox's
 * deno engine, each the mean of a guest loop of --calls awaited calls; `run("1+1")` back to back in
 * QuickJS and in-process. Each tool call's figure is shown over its own floor. Without the deno
 * package the deno cases are left out. `--compare DIR` adds the same cases from another build (e.g. a copy of
 * dist/ made before a change), interleaved with ours, so a change reads as a ratio old/new.
 */
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";
import { closeDenoEcho, closeIpcEcho, denoEcho, ipcEcho, noopAdapter, perCallMs, printJsonLine, printTable, resultRow, roundTripMs, summarize, warmUp, withTempDir, benchArgs } from "./lib.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values } = benchArgs(import.meta.url, { options: { rounds: { type: "string", default: "15" }, calls: { type: "string", default: "300" }, compare: { type: "string" } } });
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);

const loop = (n) => `for (let i = 0; i < ${n}; i++) await tools.noop.ping({});`;

/** ms per guest→host tool call in `session` (lib.mjs perCallMs: the same method as bench:peers). */
const perCall = (session, n) => perCallMs((k) => ok(session, loop(k)), n);

async function ok(session, code) {
  const r = await session.run(code);
  if (!r.ok) throw new Error(`${code}: ${r.error?.name}: ${r.error?.message}`);
  return r;
}

/** ms per `run(code)`, the mean of `n` back-to-back runs. */
async function meanRun(session, code, n) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await ok(session, code);
  return (performance.now() - t0) / n;
}

/** The sessions of one build, started; each case is one sample (ms). */
async function buildCases(label, dist, dir) {
  const m = await import(pathToFileURL(path.join(dist, "index.js")).href);
  const registry = () => {
    const tools = new m.ToolRegistry();
    tools.register(noopAdapter());
    return tools;
  };
  const session = async (executor, name) => {
    const s = new m.Session({ storage: new m.FileStorage({ basePath: path.join(dir, `${label}-${name}`) }), executor });
    await s.start();
    return s;
  };
  const sub = await session(new m.SubprocessExecutor({ tools: registry(), spareChild: false }), "sub");
  const qjs = await session(new m.SandboxExecutor({ tools: registry() }), "qjs");
  const inproc = await session(new m.InProcessExecutor({ tools: registry() }), "inproc");
  const deno = denoEcho() ? await session(new m.SandboxExecutor({ engine: "deno", tools: registry() }), "deno") : null;
  const suffix = label ? ` [${label}]` : "";
  return {
    close: () => Promise.all([sub.close(), qjs.close(), inproc.close(), deno?.close()]),
    cases: [
      { name: `subprocess: tool call, per call${suffix}`, executor: "subprocess", floor: "ipc", sample: () => perCall(sub, CALLS) },
      { name: `sandbox (QuickJS): tool call, per call${suffix}`, executor: "sandbox", sample: () => perCall(qjs, CALLS) },
      ...(deno ? [{ name: `sandbox (deno): tool call, per call${suffix}`, executor: "sandbox-deno", floor: "deno", sample: () => perCall(deno, CALLS) }] : []),
      { name: `subprocess: run("1+1")${suffix}`, executor: "subprocess", floor: "ipc", sample: () => meanRun(sub, "1+1", CALLS) },
      { name: `sandbox (QuickJS): run("1+1")${suffix}`, executor: "sandbox", sample: () => meanRun(qjs, "1+1", CALLS) },
      { name: `in-process: run("1+1")${suffix}`, executor: "in-process", sample: () => meanRun(inproc, "1+1", CALLS) },
    ],
  };
}

await withTempDir("tcm-bench-calls-", async (dir) => {
  const builds = [await buildCases("", path.join(ROOT, "dist"), dir)];
  if (values.compare) builds.push(await buildCases("compare", path.resolve(values.compare), dir));
  const roundTrips = (echo) => () => roundTripMs(echo, CALLS);
  const floors = [
    { name: "baseline: bare IPC round trip", executor: "none", baseline: "ipc", sample: roundTrips(ipcEcho()) },
    ...(denoEcho() ? [{ name: "baseline: bare deno round trip (stdin/stdout frames)", executor: "none", baseline: "deno", sample: roundTrips(denoEcho()) }] : []),
  ];
  const cases = [...floors, ...builds.flatMap((b) => b.cases)];
  const samples = cases.map(() => []);
  try {
    // Every case warmed by the same number of calls (lib.mjs CALL_WARMUP: a cold pipe costs several times a warm one).
    for (const c of cases) await warmUp(c.sample, CALLS);
    // Each round starts one case further on: where a case sits in the round changes its figure by
    // 10–30% on a loaded machine (what ran just before it), so every case takes every place in turn.
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < cases.length; k++) {
        const i = (r + k) % cases.length;
        samples[i].push(await cases[i].sample());
      }
    }
  } finally {
    closeIpcEcho();
    closeDenoEcho();
    await Promise.all(builds.map((b) => b.close()));
  }
  const floorMs = Object.fromEntries(floors.map((f, i) => [f.baseline, summarize(samples[i]).median_ms]));
  // Per round, each case over its floor of the same round, then the median: on a shared machine the
  // load moves between rounds, and a ratio of two medians taken over different rounds moves with it.
  const floorIndex = Object.fromEntries(floors.map((f, i) => [f.baseline, i]));
  const pairedRatio = (i, floor) => summarize(samples[i].map((ms, r) => ms / samples[floorIndex[floor]][r])).median_ms;
  const rows = cases.map((c, i) => {
    const row = resultRow({ name: c.name, executor: c.executor, iterations: ROUNDS * CALLS, samples: samples[i], floorMs: c.floor ? floorMs[c.floor] : undefined });
    if (c.floor) row.floor_ratio_paired = pairedRatio(i, c.floor);
    printJsonLine(Object.assign({}, row, { samples_ms: samples[i] }));
    return row;
  });
  const paired = rows.filter((r) => r.floor_ratio_paired !== undefined);
  process.stderr.write(`\nmedian over rounds of (case / its floor in the same round):\n${paired.map((r) => `  ${r.case}: ${r.floor_ratio_paired.toFixed(2)}x`).join("\n")}\n`);
  printTable(rows);
});
