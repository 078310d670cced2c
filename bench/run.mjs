/**
 * Benchmarks of ts-code-mode's own overhead: `npm run bench` (builds first), or
 * `node bench/run.mjs [--strict] [--only <text>]` against an existing dist/.
 *
 *   stdout: one JSON line per case  {"case","executor","iterations","median_ms","p90_ms","budget_ms","within_budget"}
 *   stderr: the same as an aligned table, with budget misses marked
 *
 * The exit code is 0 even when a budget is missed (a noisy machine should not fail a build);
 * `--strict` makes a miss exit 1. `--only` runs the cases whose name contains the text.
 *
 * To add an executor, add a row to EXECUTORS; to add a case, add a row to CASES. A case's
 * `budgets` is keyed by executor name: budgets differ per executor, and a case without a budget
 * for an executor is reported with budget null.
 */
import { spawn } from "node:child_process";
import { copyFile, mkdir, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { closeIpcEcho, ipcEcho, measure, printJsonLine, printTable, resultRow, summarize, timed, withTempDir, noopAdapter, benchArgs } from "./lib.mjs";

const { FileStorage, InProcessExecutor, Session, SubprocessExecutor, ToolRegistry } = await import("../dist/index.js").catch((err) => {
  process.stderr.write(`bench: cannot load ../dist/index.js (${err.message}); build first: npx tsc -p tsconfig.build.json, or npm run bench\n`);
  process.exit(2);
});

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const EXAMPLES = path.join(ROOT, "examples");

/** Guest loops make this many calls per sample; the sample is the mean per call. */
const CALLS_PER_LOOP = 1000;

/**
 * Executors under test. `create` receives a ready ToolRegistry (YAML tools from `toolsPath` plus
 * the in-process `noop` adapter) and the tools folder, for executors that load YAML themselves.
 */
const EXECUTORS = [
  { name: "in-process", create: ({ tools }) => new InProcessExecutor({ tools }) },
  { name: "subprocess", create: ({ tools }) => new SubprocessExecutor({ tools }) },
];


/** session.run() that refuses to time a failure: a broken case must not look fast. */
async function run(session, code) {
  const r = await session.run(code);
  if (!r.ok) throw new Error(`bench snippet failed: ${code}\n${r.error?.name}: ${r.error?.message}`);
  return r;
}

/** A snippet that times `n` awaits of `call` inside the guest and evaluates to ms per call. */
function guestLoop(call, n = CALLS_PER_LOOP) {
  return `(async () => { const t0 = performance.now(); for (let i = 0; i < ${n}; i++) ${call}; return (performance.now() - t0) / ${n}; })()`;
}

const TOOL_CALL = "await tools.noop.ping({})";
/** The baseline row that is the floor of the subprocess executor's warm path. */
const IPC_FLOOR = "baseline: bare IPC round trip (advanced serialization)";
const WORKFLOW_CALL = "await workflows.triple({ n: 1 })";
const ECHO_CALL = 'await tools.echo.say({ text: ["hi"] })';

/**
 * The cases. `sample(ctx)` resolves to one duration in ms; ctx is `{ session, entry, dir }` (null session for
 * baselines, which run once, outside any executor). `callsPerSample` > 1 marks a guest loop whose
 * sample is a mean; the reported iterations count calls.
 */
const CASES = [
  {
    // What a new user waits for: construct + start + first run("1") + close, on fresh storage.
    name: 'cold start: new Session + start + run("1")',
    iterations: 30,
    warmup: 3,
    budgets: { subprocess: 150 },
    sample: ({ entry, dir }, i) =>
      timed(async () => {
        const tools = new ToolRegistry();
        tools.register(noopAdapter());
        const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, `cold-${i}`) }), executor: entry.create({ tools }) });
        try {
          await session.start();
          await run(session, "1");
        } finally {
          await session.close();
        }
      }),
  },
  {
    name: 'trivial run: run("1+1")',
    iterations: 2000,
    warmup: 200,
    // Issue 24's targets; the subprocess floor is one IPC message each way (the baseline below).
    budgets: { "in-process": 0.1, subprocess: 0.15 },
    floor: { subprocess: IPC_FLOOR },
    sample: ({ session }) => timed(() => run(session, "1+1")),
  },
  {
    // Agents rarely send the same text twice; this shows the cost of preparing a new snippet.
    name: "trivial run, new source each time: run(`1+${i}`)",
    iterations: 1000,
    warmup: 100,
    budgets: {},
    sample: ({ session }, i) => timed(() => run(session, `1+${i}`)),
  },
  {
    name: `tool call from guest, per call (loop of ${CALLS_PER_LOOP} / ${CALLS_PER_LOOP})`,
    iterations: 30,
    warmup: 3,
    callsPerSample: CALLS_PER_LOOP,
    budgets: { "in-process": 0.05, subprocess: 0.05 },
    floor: { subprocess: IPC_FLOOR },
    sample: async ({ session }) => (await run(session, guestLoop(TOOL_CALL))).value,
  },
  {
    name: `tool call, single run: run("${TOOL_CALL}")`,
    iterations: 2000,
    warmup: 200,
    budgets: {},
    sample: ({ session }) => timed(() => run(session, TOOL_CALL)),
  },
  {
    // Paired per iteration (one tool run, one trivial run) so machine drift cancels out.
    name: "tool round trip: single tool run minus trivial run",
    iterations: 2000,
    warmup: 200,
    budgets: { "in-process": 0.05 },
    sample: async ({ session }) => (await timed(() => run(session, TOOL_CALL))) - (await timed(() => run(session, "1+1"))),
  },
  {
    // A peer that awaits tool calls one after another needs ~110 ms for five 20 ms tools.
    name: "five 20 ms tools with Promise.all, one run",
    iterations: 100,
    warmup: 10,
    budgets: { "in-process": 30, subprocess: 30 },
    sample: ({ session }) => timed(() => run(session, "await Promise.all([1, 2, 3, 4, 5].map(() => tools.noop.sleep20({})))")),
  },
  {
    name: "1 MiB artifact save + load from the guest",
    iterations: 100,
    warmup: 10,
    budgets: { "in-process": 20, subprocess: 20 },
    setup: "var __bench_mib = new Uint8Array(1 << 20).map((_, i) => i & 255)",
    sample: ({ session }) =>
      timed(() => run(session, "await artifacts.save('bench/mib.bin', __bench_mib); (await artifacts.load('bench/mib.bin')).length")),
  },
  {
    name: `workflow invoke, single run: run("${WORKFLOW_CALL}")`,
    iterations: 1000,
    warmup: 100,
    budgets: {},
    sample: ({ session }) => timed(() => run(session, WORKFLOW_CALL)),
  },
  {
    name: `workflow invoke from guest, per call (loop of ${CALLS_PER_LOOP} / ${CALLS_PER_LOOP})`,
    iterations: 10,
    warmup: 2,
    callsPerSample: CALLS_PER_LOOP,
    budgets: {},
    sample: async ({ session }) => (await run(session, guestLoop(WORKFLOW_CALL))).value,
  },
  {
    // The floor of the subprocess executor's warm path: one message to a child node and its answer,
    // over the same channel (IPC, advanced serialization) and shapes, with nothing else done.
    name: IPC_FLOOR,
    baseline: true,
    iterations: 2000,
    warmup: 200,
    budgets: {},
    sample: () => timed(() => ipcEcho().roundTrip()),
  },
  {
    // What any Node program pays to run `echo hi`, with the spawn options the CLI adapter uses.
    name: "baseline: bare spawn of `echo hi`",
    baseline: true,
    iterations: 200,
    warmup: 20,
    budgets: {},
    sample: () => timed(() => spawnAndWait("echo", ["hi"])),
  },
  {
    name: `cli tool (real spawn), single run: run('${ECHO_CALL}')`,
    iterations: 200,
    warmup: 20,
    budgets: {},
    sample: ({ session }) => timed(() => run(session, ECHO_CALL)),
  },
  {
    name: "cli tool overhead: single run minus bare spawn",
    iterations: 200,
    warmup: 20,
    budgets: {},
    sample: async ({ session }) => (await timed(() => run(session, ECHO_CALL))) - (await timed(() => spawnAndWait("echo", ["hi"]))),
  },
];

/** Spawn as src/tools/adapters/cli/run.ts does (no shell, own process group, piped output) and wait for exit. */
function spawnAndWait(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], detached: true, shell: false });
    const out = [];
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(Buffer.concat(out).toString("utf8")) : reject(new Error(`${command} exited with ${code}`))));
  });
}

/** A started session on `executor`, with the echo YAML tool, the noop adapter and the triple workflow. */
async function withSession(executorEntry, dir, fn) {
  const toolsPath = path.join(dir, "tools");
  await mkdir(toolsPath, { recursive: true });
  await copyFile(path.join(EXAMPLES, "tools", "echo.yaml"), path.join(toolsPath, "echo.yaml"));
  const tools = await ToolRegistry.load(toolsPath);
  tools.register(noopAdapter());
  const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "storage") }), executor: executorEntry.create({ tools, toolsPath }) });
  try {
    await session.start();
    await session.addWorkflow({
      name: "triple",
      source: await readFile(path.join(EXAMPLES, "workflows", "triple.ts"), "utf8"),
      description: "Triple a number",
    });
    return await fn(session);
  } finally {
    await session.close();
  }
}

/** Medians of the baselines measured so far, by case name (a floor is printed beside the rows that name it). */
const baselineMedians = new Map();

async function runCase(c, executor, ctx) {
  if (c.setup && ctx.session) await run(ctx.session, c.setup);
  const samples = await measure((i) => c.sample(ctx, i), { iterations: c.iterations, warmup: c.warmup });
  const row = resultRow({
    name: c.name,
    executor,
    iterations: c.iterations * (c.callsPerSample ?? 1),
    samples,
    budgetMs: c.budgets[executor],
    floorMs: baselineMedians.get(c.floor?.[executor]),
  });
  if (c.baseline) baselineMedians.set(c.name, row.median_ms);
  printJsonLine(row);
  return row;
}

/** The cold paths of bench/cold.mjs (fresh processes, interleaved), fewer rounds: import, CLI run, MCP ready. */
async function coldRows() {
  const { coldCases, coldSample } = await import("./cold.mjs");
  return withTempDir("tcm-bench-cold-", async (dir) => {
    const base = path.join(dir, "base");
    await mkdir(path.join(base, "tools"), { recursive: true });
    await copyFile(path.join(EXAMPLES, "tools", "echo.yaml"), path.join(base, "tools", "echo.yaml"));
    const cases = await coldCases({ dist: path.join(ROOT, "dist"), base });
    const samples = cases.map(() => []);
    for (const c of cases) await c.run();
    for (let r = 0; r < 9; r++) for (const [i, c] of cases.entries()) samples[i].push(await coldSample(c));
    // `node -e 0` is the floor of every cold path: what any Node program pays to start.
    const nodeAt = cases.findIndex((c) => c.baseline && c.name.includes("node -e 0"));
    const nodeMs = nodeAt < 0 ? undefined : summarize(samples[nodeAt]).median_ms;
    return cases.map((c, i) => {
      const floorMs = c.baseline ? undefined : nodeMs;
      const row = resultRow({ name: `cold: ${c.name}`, executor: c.baseline ? "none" : "subprocess", iterations: 9, samples: samples[i], budgetMs: c.budget, floorMs });
      printJsonLine(row);
      return row;
    });
  });
}

async function main() {
  const { values } = benchArgs(import.meta.url, { options: { strict: { type: "boolean", default: false }, only: { type: "string" } } });
  const cases = CASES.filter((c) => values.only === undefined || c.name.includes(values.only));
  const cpu = os.cpus()[0]?.model ?? "unknown cpu";
  process.stderr.write(`ts-code-mode bench — node ${process.version}, ${os.platform()} ${os.arch()}, ${cpu} ×${os.cpus().length}\n`);

  // Cases run in table order inside each executor's session, baselines too (once, at their place
  // in the first pass): process state such as heap size changes spawn cost, so a baseline is
  // measured next to the case it explains.
  const rows = [];
  const baselinesDone = new Set();
  for (const entry of EXECUTORS) {
    await withTempDir("tcm-bench-", (dir) =>
      withSession(entry, dir, async (session) => {
        for (const c of cases) {
          if (!c.baseline) rows.push(await runCase(c, entry.name, { session, entry, dir }));
          else if (!baselinesDone.has(c)) {
            baselinesDone.add(c);
            rows.push(await runCase(c, "none", { session: null }));
          }
        }
      }),
    );
  }

  closeIpcEcho();
  if (values.only === undefined || "cold".includes(values.only)) rows.push(...(await coldRows()));
  if (values.only === undefined || "warm".includes(values.only)) rows.push(...(await (await import("./warm.mjs")).warmRows()));
  printTable(rows);
  const missed = rows.some((r) => r.within_budget === false);
  if (missed && values.strict) process.exitCode = 1;
}

await main();
