/**
 * A call of a tool defined in code (defineTool, zod input) from each executor, beside a call of a
 * YAML CLI tool (echo, a real spawn) and, for the subprocess executor, the floor: a bare IPC round
 * trip to a child node (issue 36's target: a code-tool call ≤ that floor + 20 µs). Guest loops
 * time N awaited calls inside the guest; the sample is the mean per call. Medians.
 *
 *   npm run build && node bench/code-tools.mjs [--rounds 15]
 */
import { copyFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { closeIpcEcho, ipcEcho, measure, printJsonLine, printTable, resultRow, timed, withTempDir, benchArgs } from "./lib.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { defineTool, FileStorage, InProcessExecutor, PythonExecutor, SandboxExecutor, Session, SubprocessExecutor } = await import("../dist/index.js");
const { values } = benchArgs(import.meta.url, { options: { rounds: { type: "string", default: "15" } } });
const ROUNDS = Number(values.rounds);
const CALLS = 500;

const add = defineTool({ name: "add", description: "Add two numbers", input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });

const EXECUTORS = [
  { name: "in-process", create: (o) => new InProcessExecutor(o) },
  { name: "subprocess", create: (o) => new SubprocessExecutor(o) },
  { name: "sandbox (quickjs)", create: (o) => new SandboxExecutor(o) },
  { name: "sandbox (deno)", create: (o) => new SandboxExecutor({ engine: "deno", ...o }) },
  { name: "python", create: (o) => new PythonExecutor(o), python: true },
];

// TypeScript guests are timed from the host (QuickJS has no performance.now()): a run of n calls
// minus a run of none, over n, so the run's own cost cancels out.
const tsLoop = (call) => ({ host: true, code: (n) => `for (let i = 0; i < ${n}; i++) ${call}; 0` });
const pyLoop = (call) => ({ host: false, code: (n) => `import time\nt0 = time.perf_counter()\nfor i in range(${n}):\n    ${call}\n(time.perf_counter() - t0) * 1000 / ${n}` });

async function value(session, code) {
  const r = await session.run(code, { timeoutMs: 600_000 });
  if (!r.ok) throw new Error(`bench snippet failed: ${code}\n${r.error?.name}: ${r.error?.message}`);
  return r.value;
}

/** ms per call of a loop of `n` calls: timed in the guest (Python) or from the host (TypeScript). */
async function perCall(session, loop, n) {
  if (!loop.host) return value(session, loop.code(n));
  const t0 = performance.now();
  await value(session, loop.code(n));
  const t1 = performance.now();
  await value(session, loop.code(0));
  return (t1 - t0 - (performance.now() - t1)) / n;
}

const rows = [];
await withTempDir("tcm-bench-code-tools-", async (dir) => {
  const toolsPath = path.join(dir, "tools");
  await mkdir(toolsPath, { recursive: true });
  await copyFile(path.join(ROOT, "examples", "tools", "echo.yaml"), path.join(toolsPath, "echo.yaml"));
  const floor = resultRow({ name: "baseline: bare IPC round trip (advanced serialization)", executor: "none", iterations: 2000, samples: await measure(() => timed(() => ipcEcho().roundTrip()), { iterations: 2000, warmup: 200 }) });
  rows.push(floor);
  printJsonLine(floor);
  for (const e of EXECUTORS) {
    const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, e.name.replace(/\W+/g, "-")) }), executor: e.create({ toolsPath, tools: [add], defaultTimeoutMs: 600_000 }) });
    try {
      await session.start();
      const code = e.python ? pyLoop("tools.add(a=1, b=2)") : tsLoop("await tools.add({ a: 1, b: 2 })");
      const cli = e.python ? pyLoop("tools.echo.say(text=['hi'])") : tsLoop("await tools.echo.say({ text: ['hi'] })");
      await perCall(session, code, CALLS);
      const codeSamples = await measure(() => perCall(session, code, CALLS), { iterations: ROUNDS, warmup: 1 });
      // The CLI tool spawns a process per call: fewer calls per sample.
      const cliSamples = await measure(() => perCall(session, cli, 20), { iterations: Math.max(3, Math.ceil(ROUNDS / 3)), warmup: 1 });
      const codeRow = resultRow({
        name: `code tool call from guest, per call (loop of ${CALLS})`,
        executor: e.name,
        iterations: ROUNDS * CALLS,
        samples: codeSamples,
        ...(e.name === "subprocess" ? { budgetMs: floor.median_ms + 0.02, floorMs: floor.median_ms } : {}),
      });
      const cliRow = resultRow({ name: "YAML CLI tool call (echo, a real spawn), per call (loop of 20)", executor: e.name, iterations: cliSamples.length * 20, samples: cliSamples });
      for (const r of [codeRow, cliRow]) {
        rows.push(r);
        printJsonLine(r);
      }
    } finally {
      await session.close();
    }
  }
});
closeIpcEcho();
printTable(rows);
