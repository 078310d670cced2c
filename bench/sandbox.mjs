/**
 * SandboxExecutor benchmarks, engine "quickjs" (executor `sandbox`, WebAssembly in the host
 * process) and engine "deno" (executor `sandbox-deno`, a deno process without permissions):
 * `node bench/sandbox.mjs [--strict] [--only <text>]` against an existing dist/ (build first:
 * npx tsc -p tsconfig.build.json). Budgets of the deno rows: cold start 150 ms, trivial run
 * 0.5 ms, five parallel tools 30 ms.
 *
 *   cold start            new Session + start + run("1") + close, on fresh storage (budget 20 ms)
 *   trivial run           run("1+1") (budget 1 ms)
 *   trivial tool call     one run awaiting one in-process tool call, and the per-call cost in a guest loop
 *   five parallel tools   Promise.all of five 20 ms tools in one run (budget 30 ms: they overlap)
 *   CPU-heavy snippet     the sum of 10^7 integers, with the in-process executor (V8) for comparison
 *
 *   stdout: one JSON line per case (bench/lib.mjs shape)
 *   stderr: the table, budget misses marked
 * The exit code is 0 even when a budget is missed; `--strict` makes a miss exit 1.
 */
import path from "node:path";
import os from "node:os";
import { measure, printJsonLine, printTable, resultRow, timed, withTempDir, noopAdapter, benchArgs } from "./lib.mjs";

const { FileStorage, InProcessExecutor, SandboxExecutor, Session, ToolRegistry } = await import("../dist/index.js").catch((err) => {
  process.stderr.write(`bench: cannot load ../dist/index.js (${err.message}); build first: npx tsc -p tsconfig.build.json\n`);
  process.exit(2);
});

const CALLS_PER_LOOP = 1000;
const CPU_SNIPPET = "let sum = 0; for (let i = 0; i < 1e7; i++) sum += i; sum";


function registry() {
  const tools = new ToolRegistry();
  tools.register(noopAdapter());
  return tools;
}

/** session.run() that refuses to time a failure: a broken case must not look fast. */
async function run(session, code) {
  const r = await session.run(code, { timeoutMs: 120_000 });
  if (!r.ok) throw new Error(`bench snippet failed: ${code}\n${r.error?.name}: ${r.error?.message}`);
  return r;
}

const EXECUTORS = {
  sandbox: () => new SandboxExecutor({ tools: registry() }),
  "sandbox-deno": () => new SandboxExecutor({ engine: "deno", tools: registry() }),
  "in-process": () => new InProcessExecutor({ tools: registry() }),
};

/** new Session + start + run("1") + close on fresh storage, with `executor`. */
const coldStart = (executor, budgetMs) => ({
  name: 'cold start: new Session + start + run("1")',
  executor,
  iterations: 30,
  warmup: 3,
  budgetMs,
  fresh: true,
  sample: ({ dir }, i) =>
    timed(async () => {
      const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, `cold-${executor}-${i}`) }), executor: EXECUTORS[executor]() });
      try {
        await session.start();
        await run(session, "1");
      } finally {
        await session.close();
      }
    }),
});

const CASES = [
  coldStart("sandbox-deno", 150),
  {
    name: 'trivial run: run("1+1")',
    executor: "sandbox-deno",
    iterations: 2000,
    warmup: 200,
    budgetMs: 0.5,
    sample: ({ session }) => timed(() => run(session, "1+1")),
  },
  {
    name: "five 20 ms tools with Promise.all, one run",
    executor: "sandbox-deno",
    iterations: 100,
    warmup: 10,
    budgetMs: 30,
    sample: ({ session }) => timed(() => run(session, "await Promise.all([1, 2, 3, 4, 5].map(() => tools.noop.sleep20({})))")),
  },
  {
    name: `trivial tool call from guest, per call (loop of ${CALLS_PER_LOOP} / ${CALLS_PER_LOOP})`,
    executor: "sandbox-deno",
    iterations: 20,
    warmup: 2,
    callsPerSample: CALLS_PER_LOOP,
    budgetMs: null,
    sample: async ({ session }) => (await timed(() => run(session, `for (let i = 0; i < ${CALLS_PER_LOOP}; i++) await tools.noop.ping({})`))) / CALLS_PER_LOOP,
  },
  {
    name: "CPU-heavy: sum of 10^7 integers",
    executor: "sandbox-deno",
    iterations: 5,
    warmup: 1,
    budgetMs: null,
    sample: ({ session }) => timed(() => run(session, CPU_SNIPPET)),
  },
  {
    name: 'cold start: new Session + start + run("1")',
    executor: "sandbox",
    iterations: 30,
    warmup: 3,
    budgetMs: 20,
    fresh: true,
    sample: ({ dir }, i) =>
      timed(async () => {
        const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, `cold-${i}`) }), executor: EXECUTORS.sandbox() });
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
    executor: "sandbox",
    iterations: 2000,
    warmup: 200,
    budgetMs: 1,
    sample: ({ session }) => timed(() => run(session, "1+1")),
  },
  {
    name: 'trivial tool call, single run: run("await tools.noop.ping({})")',
    executor: "sandbox",
    iterations: 1000,
    warmup: 100,
    budgetMs: null,
    sample: ({ session }) => timed(() => run(session, "await tools.noop.ping({})")),
  },
  {
    name: `trivial tool call from guest, per call (loop of ${CALLS_PER_LOOP} / ${CALLS_PER_LOOP})`,
    executor: "sandbox",
    iterations: 20,
    warmup: 2,
    callsPerSample: CALLS_PER_LOOP,
    budgetMs: null,
    sample: async ({ session }) => (await timed(() => run(session, `for (let i = 0; i < ${CALLS_PER_LOOP}; i++) await tools.noop.ping({})`))) / CALLS_PER_LOOP,
  },
  {
    name: "five 20 ms tools with Promise.all, one run",
    executor: "sandbox",
    iterations: 100,
    warmup: 10,
    budgetMs: 30,
    sample: ({ session }) => timed(() => run(session, "await Promise.all([1, 2, 3, 4, 5].map(() => tools.noop.sleep20({})))")),
  },
  {
    name: "CPU-heavy: sum of 10^7 integers",
    executor: "sandbox",
    iterations: 5,
    warmup: 1,
    budgetMs: null,
    sample: ({ session }) => timed(() => run(session, CPU_SNIPPET)),
  },
  {
    name: "CPU-heavy: sum of 10^7 integers",
    executor: "in-process",
    iterations: 5,
    warmup: 1,
    budgetMs: null,
    sample: ({ session }) => timed(() => run(session, CPU_SNIPPET)),
  },
];

async function main() {
  const { values } = benchArgs(import.meta.url, { options: { strict: { type: "boolean", default: false }, only: { type: "string" } } });
  const cases = CASES.filter((c) => values.only === undefined || c.name.includes(values.only));
  const cpu = os.cpus()[0]?.model ?? "unknown cpu";
  process.stderr.write(`ts-code-mode sandbox bench — node ${process.version}, ${os.platform()} ${os.arch()}, ${cpu} ×${os.cpus().length}\n`);
  const rows = [];
  await withTempDir("tcm-bench-sandbox-", async (dir) => {
    const sessions = {};
    try {
      for (const c of cases) {
        let session = null;
        if (!c.fresh) {
          session = sessions[c.executor];
          if (!session) {
            session = new Session({ storage: new FileStorage({ basePath: path.join(dir, c.executor) }), executor: EXECUTORS[c.executor]() });
            await session.start();
            sessions[c.executor] = session;
          }
        }
        const samples = await measure((i) => c.sample({ session, dir }, i), { iterations: c.iterations, warmup: c.warmup });
        const row = resultRow({ name: c.name, executor: c.executor, iterations: c.iterations * (c.callsPerSample ?? 1), samples, budgetMs: c.budgetMs ?? undefined });
        printJsonLine(row);
        rows.push(row);
      }
    } finally {
      await Promise.all(Object.values(sessions).map((s) => s.close()));
    }
  });
  printTable(rows);
  if (values.strict && rows.some((r) => r.within_budget === false)) process.exitCode = 1;
}

await main();
