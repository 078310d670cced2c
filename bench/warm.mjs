/**
 * Warm starts (issue 24 item 3, issue 42 item 2): a new session's `start()` → first result with the
 * subprocess executor: a new executor with no spare, the default one (which takes the implicit
 * spare child a previous session left, see spare-children.ts), and one taken from an ExecutorPool. Each
 * sample is one whole session: take/create, start, run "1+1", close; the pool refills between
 * samples (untimed), as it does between sessions in a long-lived host.
 *
 *   npm run build && node bench/warm.mjs [--rounds 15]
 */
import { copyFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { printJsonLine, printTable, resultRow, withTempDir, benchArgs } from "./lib.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { ExecutorPool, FileStorage, Session, SubprocessExecutor, spareChildren } = await import("../dist/index.js");

/** ms from taking the executor to the first result; closing the session is not timed. */
async function firstResult(storage, take) {
  const t0 = performance.now();
  const session = new Session({ storage, executor: take() });
  try {
    await session.start();
    const r = await session.run("1+1");
    if (r.value !== 2) throw new Error(`unexpected result: ${JSON.stringify(r)}`);
    return performance.now() - t0;
  } finally {
    await session.close();
  }
}

async function waitReady(pool) {
  while (pool.ready < 1) await new Promise((r) => setTimeout(r, 5));
}

/** The default (issue 42): the spare child a previous session of the same configuration left. */
async function waitSpare() {
  const until = Date.now() + 30_000;
  while (spareChildren().ready < 1) {
    if (Date.now() > until) throw new Error(`no spare child became ready within 30 s: ${JSON.stringify(spareChildren())}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Rows for bench/run.mjs: interleaved samples of both cases, medians. */
export async function warmRows(rounds = 9) {
  return withTempDir("tcm-bench-warm-", async (dir) => {
    const tools = path.join(dir, "tools");
    await mkdir(tools, { recursive: true });
    await copyFile(path.join(ROOT, "examples", "tools", "echo.yaml"), path.join(tools, "echo.yaml"));
    const storage = new FileStorage({ basePath: dir });
    const create = () => new SubprocessExecutor({ toolsPath: tools, spareChild: false });
    const pool = new ExecutorPool(create, { likelyStorage: storage });
    const cases = [
      { name: "session start → first result, new subprocess executor, no spare", run: () => firstResult(storage, create) },
      { name: "session start → first result, default (implicit spare child)", budget: 10, before: waitSpare, run: () => firstResult(storage, () => new SubprocessExecutor({ toolsPath: tools })) },
      { name: "session start → first result, ExecutorPool spare", budget: 10, before: () => waitReady(pool), run: () => firstResult(storage, () => pool.take()) },
    ];
    const samples = cases.map(() => []);
    try {
      // Warm-up: one session of each; the first default session leaves the spare the next one takes.
      for (const c of cases) {
        if (c.before !== waitSpare) await c.before?.();
        await c.run();
      }
      for (let r = 0; r < rounds; r++)
        for (const [i, c] of cases.entries()) {
          await c.before?.();
          samples[i].push(await c.run());
        }
    } finally {
      await pool.close();
    }
    return cases.map((c, i) => {
      const row = resultRow({ name: `warm: ${c.name}`, executor: "subprocess", iterations: rounds, samples: samples[i], budgetMs: c.budget });
      printJsonLine(row);
      return row;
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = benchArgs(import.meta.url, { options: { rounds: { type: "string", default: "15" } } });
  printTable(await warmRows(Number(values.rounds)));
}
