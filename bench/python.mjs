/**
 * Python guest figures: `node bench/python.mjs` against a built dist/ — PythonExecutor (CPython),
 * then SandboxExecutor({ language: "python" }) (Pyodide in deno; its cold start is the Pyodide load).
 *
 *   cold start      new Session + start + run("1") + close, fresh storage each time
 *   trivial run     session.run("1") on a warm session, timed by the host
 *   tool call       a no-op in-process tool called from Python (sync), mean per call over a guest loop
 *   5 × 20 ms tools five 20 ms tools through asyncio.gather, timed by the host
 *
 * The Pyodide sandbox starts from a memory snapshot (docs/python.md, "Sandboxed Python"): the bench uses a
 * fresh snapshot cache, times the first start (which makes the snapshot) once, then the cold starts
 * from it, then cold starts with TCM_PYODIDE_SNAPSHOT=off (the full load) in the same window.
 *
 * Targets (issue 22): trivial run ≤ 1 ms, tool call ≤ 0.5 ms. stdout: one JSON line per case
 * (the format of bench/run.mjs); stderr: a table.
 */
import path from "node:path";
import { measure, noopAdapter, printJsonLine, printTable, resultRow, timed, withTempDir } from "./lib.mjs";

const { ExecutorPool, FileStorage, PythonExecutor, SandboxExecutor, Session, ToolRegistry } = await import("../dist/index.js").catch((err) => {
  process.stderr.write(`bench: cannot load ../dist/index.js (${err.message}); build first: npm run build\n`);
  process.exit(2);
});

const CALLS_PER_LOOP = 500;

const GUESTS = {
  python: { make: (tools) => new PythonExecutor({ tools }), coldRounds: 15, trivialRounds: 300, loopRounds: 15, gatherRounds: 30 },
  // Each cold start loads Pyodide (seconds): fewer rounds.
  "sandbox (pyodide)": { make: (tools) => new SandboxExecutor({ language: "python", tools }), coldRounds: 5, trivialRounds: 100, loopRounds: 5, gatherRounds: 20, snapshot: true },
  "sandbox (pyodide, no snapshot)": { make: (tools) => new SandboxExecutor({ language: "python", tools }), coldRounds: 5, coldOnly: true, snapshotOff: true },
};

function open(dir, name, guest) {
  const tools = new ToolRegistry();
  tools.register(noopAdapter());
  return new Session({ storage: new FileStorage({ basePath: path.join(dir, name) }), executor: guest.make(tools) });
}

async function run(session, code) {
  const r = await session.run(code);
  if (!r.ok) throw new Error(`bench snippet failed: ${code}\n${r.error?.name}: ${r.error?.message}`);
  return r;
}

const rows = [];
await withTempDir("tcm-bench-py-", async (dir) => {
  process.env.TCM_PYODIDE_CACHE_DIR = path.join(dir, "pyodide-cache");
  for (const [executor, guest] of Object.entries(GUESTS)) {
    if (guest.snapshotOff) process.env.TCM_PYODIDE_SNAPSHOT = "off";
    else delete process.env.TCM_PYODIDE_SNAPSHOT;
    if (guest.snapshot) {
      const first = await timed(async () => {
        const session = open(dir, `first-${executor}`, guest);
        try {
          await session.start();
          await run(session, "1");
        } finally {
          await session.close();
        }
      });
      rows.push(resultRow({ name: 'first start: makes the snapshot + start + run("1")', executor, iterations: 1, samples: [first], budgetMs: null }));
    }
    const cold = await measure(
      (i) =>
        timed(async () => {
          const session = open(dir, `cold-${executor}-${i}`, guest);
          try {
            await session.start();
            await run(session, "1");
          } finally {
            await session.close();
          }
        }),
      { iterations: guest.coldRounds, warmup: executor === "python" ? 2 : 0 },
    );
    rows.push(resultRow({ name: 'cold start: new Session + start + run("1")', executor, iterations: guest.coldRounds, samples: cold, budgetMs: executor === "python" || guest.snapshotOff ? null : 5_000 }));
    if (guest.coldOnly) continue;

    if (executor !== "python") {
      // A warm spare (ExecutorPool): the load is paid before the session exists. Each round waits
      // for the pool's refill so no load runs during the measurement.
      const tools = new ToolRegistry();
      tools.register(noopAdapter());
      const pool = new ExecutorPool(() => guest.make(tools), { spares: 1 });
      try {
        const warm = await measure(
          async (i) => {
            while (pool.ready < 1) await new Promise((r) => setTimeout(r, 50));
            return timed(async () => {
              const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, `pool-${i}`) }), executor: pool.take() });
              try {
                await session.start();
                await run(session, "1");
              } finally {
                await session.close();
              }
            });
          },
          { iterations: 3, warmup: 0 },
        );
        rows.push(resultRow({ name: 'warm start: pool spare + start + run("1")', executor, iterations: 3, samples: warm, budgetMs: 5_000 }));
      } finally {
        await pool.close();
      }
    }

    const session = open(dir, `warm-${executor}`, guest);
    await session.start();
    try {
      const trivial = await measure(() => timed(() => run(session, "1")), { iterations: guest.trivialRounds, warmup: 30 });
      rows.push(resultRow({ name: 'trivial run: run("1")', executor, iterations: guest.trivialRounds, samples: trivial, budgetMs: executor === "python" ? 1 : null }));

      const loop = `import time\n_t0 = time.perf_counter()\nfor _ in range(${CALLS_PER_LOOP}):\n    tools.noop.ping()\n(time.perf_counter() - _t0) * 1000 / ${CALLS_PER_LOOP}`;
      const toolCall = await measure(async () => (await run(session, loop)).value, { iterations: guest.loopRounds, warmup: 2 });
      rows.push(resultRow({ name: "tool call: tools.noop.ping() (guest loop, per call)", executor, iterations: guest.loopRounds * CALLS_PER_LOOP, samples: toolCall, budgetMs: executor === "python" ? 0.5 : null }));

      await run(session, "import asyncio");
      const gather = "await asyncio.gather(*[tools.noop.sleep20.call_async() for _ in range(5)])";
      const parallel = await measure(() => timed(() => run(session, gather)), { iterations: guest.gatherRounds, warmup: 3 });
      rows.push(resultRow({ name: "five parallel 20 ms tools (asyncio.gather)", executor, iterations: guest.gatherRounds, samples: parallel, budgetMs: null }));
    } finally {
      await session.close();
    }
  }
});

for (const row of rows) printJsonLine(row);
printTable(rows);
