/**
 * MCP tool call overhead: the round trip of one call to the fixture server's `add` tool
 *
 *   raw-sdk          the MCP SDK's Client calling the server directly (the baseline)
 *   registry.call    ts-code-mode's ToolRegistry: find tool → validate args → adapter → unwrap
 *   session.dispatch the host entry every executor uses (HostServices.dispatch: op lookup, argument
 *                    checks, then the registry) — everything but the guest → host hop
 *
 * Build first (`npx tsc -p tsconfig.build.json`), then `node bench/mcp.mjs [--iterations N] [--strict]`.
 * Both sides talk to their own copy of the same server over stdio, the raw client having listed the
 * tools too (so it validates structured output exactly like ours does). Samples are interleaved
 * (one raw, one registry, one dispatch, ...) so machine noise hits every case alike.
 *
 *   stdout: one JSON line per case (bench/lib.mjs shape; budget = 1.2 × the raw median), then one
 *           {"case":"mcp-overhead", ...ratios} line
 *   stderr: the table
 * The exit code is 0 even when a budget is missed; `--strict` makes a miss exit 1.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { printJsonLine, printTable, resultRow, summarize, timed, benchArgs } from "./lib.mjs";

const { FileStorage, InProcessExecutor, Session, ToolRegistry } = await import("../dist/index.js").catch((err) => {
  process.stderr.write(`bench: cannot load ../dist/index.js (${err.message}); build first: npx tsc -p tsconfig.build.json\n`);
  process.exit(2);
});

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SERVER = path.join(ROOT, "test", "fixtures", "mcp", "server.mjs");
/** Our median may be at most this many times the raw client's. */
const BUDGET_RATIO = 1.2;

const { values: flags } = benchArgs(import.meta.url, {
  options: { iterations: { type: "string", default: "1000" }, warmup: { type: "string", default: "200" }, strict: { type: "boolean", default: false } },
});
const iterations = Number(flags.iterations);
const warmup = Number(flags.warmup);
if (!Number.isInteger(iterations) || iterations < 500) {
  process.stderr.write("bench: --iterations must be an integer >= 500\n");
  process.exit(2);
}

const ARGS = { a: 2, b: 3 };
const check = (r) => {
  // A broken case must not look fast.
  if (r?.sum !== 5 && r?.structuredContent?.sum !== 5) throw new Error(`unexpected result: ${JSON.stringify(r)}`);
};

const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-bench-mcp-"));
const toolsPath = path.join(dir, "tools");
let raw;
let registry;
let session;
try {
  await mkdir(toolsPath);
  await writeFile(path.join(toolsPath, "math.yaml"), JSON.stringify({ name: "math", type: "mcp", command: process.execPath, args: [SERVER] }));

  raw = new Client({ name: "bench-raw", version: "1.0.0" });
  await raw.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER], stderr: "pipe" }));
  await raw.listTools();

  registry = await ToolRegistry.load(toolsPath);
  await registry.info("math"); // connect outside the timing

  session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "storage") }), executor: new InProcessExecutor({ toolsPath }) });
  await session.start();
  await session.dispatch("tools", "describe", ["math"]); // connect outside the timing

  const cases = [
    { name: "mcp call: raw-sdk client", executor: "raw", run: async () => check(await raw.callTool({ name: "add", arguments: ARGS })) },
    { name: "mcp call: registry.call", executor: "host", run: async () => check(await registry.call("math", "add", ARGS)) },
    { name: "mcp call: session.dispatch", executor: "host", run: async () => check(await session.dispatch("tools", "call", ["math", "add", ARGS])) },
  ];
  const samples = cases.map(() => new Array(iterations));
  for (let i = 0; i < warmup; i++) for (const c of cases) await c.run();
  for (let i = 0; i < iterations; i++) {
    // Rotate the order too, so no case always runs right after another.
    for (let k = 0; k < cases.length; k++) {
      const j = (i + k) % cases.length;
      samples[j][i] = await timed(cases[j].run);
    }
  }

  const rawMedian = summarize(samples[0]).median_ms;
  const rows = cases.map((c, j) =>
    resultRow({ name: c.name, executor: c.executor, iterations, samples: samples[j], budgetMs: j === 0 ? undefined : Math.round(rawMedian * BUDGET_RATIO * 10_000) / 10_000 }),
  );
  for (const row of rows) printJsonLine(row);
  const ratio = (row) => Math.round((row.median_ms / rawMedian) * 1000) / 1000;
  const summary = {
    case: "mcp-overhead",
    raw_median_ms: rawMedian,
    registry_ratio: ratio(rows[1]),
    dispatch_ratio: ratio(rows[2]),
    budget_ratio: BUDGET_RATIO,
    within_budget: rows.slice(1).every((r) => r.within_budget),
  };
  printJsonLine(summary);
  printTable(rows);
  process.stderr.write(`ratio to the raw client: registry.call ${summary.registry_ratio}x, session.dispatch ${summary.dispatch_ratio}x (budget ${BUDGET_RATIO}x)\n`);
  if (flags.strict && !summary.within_budget) process.exitCode = 1;
} finally {
  await session?.close();
  await registry?.close();
  await raw?.close();
  await rm(dir, { recursive: true, force: true });
}
