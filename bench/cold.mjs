/**
 * Cold paths, each in a fresh `node` process, beside their floors:
 *
 *   node -e 0                       the floor of any Node CLI (and, where the environment sets
 *                                   NODE_EXTRA_CA_CERTS, the same without it: Node 20 parses that
 *                                   bundle at every start, ~90 ms on this machine)
 *   import("zod")                   the floor of our import while schemas are built at module load
 *   import("ts-code-mode")          the main entry (target: floor + 50 ms)
 *   node → node child → IPC message the floor of a run with a child process: two node starts in a row
 *                                   and one message back (lib.mjs twoProcessFloor)
 *   import, timed inside            the import alone, wall and CPU, without the early child
 *                                   (TS_CODE_MODE_EARLY_CHILD=0; issue 42: what loads at import)
 *   library: fresh process → first result   import, Session with SubprocessExecutor (the default) or
 *                                   InProcessExecutor, run("1+1"): the process's clock at the result
 *   ts-code-mode run '1+1'          the CLI end to end, subprocess executor (target: 1.5 × node -e 0)
 *   … --executor in-process         the same without the child: our own start-up cost alone
 *   mcp: spawn → initialize → tools/list   what a desktop app waits for (target: 300 ms), beside the
 *                                   bare MCP SDK doing the same (bench/mcp-floor-server.mjs)
 *
 * Samples are interleaved (one of each case per round) so a loaded machine hits every case alike;
 * medians are reported. `--dist DIR` times another build (e.g. one made from an older commit) with
 * the same harness: `--dist DIR --label before`; `--compare DIR` times both builds interleaved in the
 * same rounds, the other one labelled [before] (a package folder with package.json, dist/ and a
 * node_modules link next to it).
 *
 *   npm run build && node bench/cold.mjs [--rounds 15] [--dist dist] [--label after] [--compare DIR/dist]
 */
import { spawn } from "node:child_process";
import { copyFile, mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { envWithoutExtraCa, nodeStartFloor, printJsonLine, printTable, resultRow, twoProcessFloor, withTempDir } from "./lib.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Spawn node with `args`, resolve when it exits 0 (stdout discarded), reject otherwise. */
function nodeRun(args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
    const err = [];
    child.stderr.on("data", (c) => err.push(c));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`node ${args.join(" ")} exited ${code}: ${Buffer.concat(err).toString()}`))));
  });
}

/** Spawn node with `args` (+ `env`), resolve with the number on its last stdout line; reject if it exits non-zero. */
function nodeTimed(args, cwd, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const out = [];
    const err = [];
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(Number(Buffer.concat(out).toString().trim().split("\n").pop())) : reject(new Error(`node ${args.join(" ")} exited ${code}: ${Buffer.concat(err).toString()}`))));
  });
}

/** A module timing the import of `entry` inside the process: prints `what` ("wall" or "cpu") in ms. */
const importTimed = (entry, what) =>
  `const t0 = performance.now(), c0 = process.cpuUsage(); await import(${JSON.stringify(entry)}); const c = process.cpuUsage(c0); console.log(${what === "cpu" ? "(c.user + c.system) / 1000" : "performance.now() - t0"});`;

/** A module printing the process's clock (ms since it started) at its first result: import, a session on `executor`, run("1+1"). */
const firstResult = (entry, base, executor) =>
  `const m = await import(${JSON.stringify(entry)}); const s = new m.Session({ storage: new m.FileStorage({ basePath: ${JSON.stringify(base)} }), executor: new m.${executor}() }); await s.start(); const r = await s.run("1+1"); const t = performance.now(); if (r.value !== 2) throw new Error(JSON.stringify(r)); await s.close(); console.log(t);`;

/**
 * Spawn → initialize → first tools/list answered, in ms. Closing (the server's shutdown, its
 * executor's exit) is outside the timed span: it is not what a client waits for before its first call.
 */
async function mcpReady(args) {
  const t0 = performance.now();
  const client = new Client({ name: "bench", version: "1" });
  try {
    await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: "ignore" }));
    await client.listTools();
    return performance.now() - t0;
  } finally {
    await client.close();
  }
}

const WITHOUT_EXTRA_CA = envWithoutExtraCa();

const FLOOR_CASES = [
  // The same floor bench:peers measures (lib.mjs nodeStartFloor); a case that times itself resolves to its ms.
  { name: "floor: node -e 0", baseline: true, run: () => nodeStartFloor() },
  // Where the environment sets NODE_EXTRA_CA_CERTS (this machine's does), every node start parses
  // the bundle first: shown beside the floor, since the default executor pays it twice (host, child).
  ...(WITHOUT_EXTRA_CA ? [{ name: "floor: node -e 0 without NODE_EXTRA_CA_CERTS", baseline: true, run: () => nodeStartFloor(WITHOUT_EXTRA_CA) }] : []),
  { name: 'floor: import("zod")', baseline: true, run: () => nodeRun(["--input-type=module", "-e", 'await import("zod")'], ROOT) },
  { name: "floor: node starting a node child that sends one IPC message", baseline: true, run: () => twoProcessFloor() },
  { name: "floor: bare MCP SDK server, spawn + initialize + tools/list", baseline: true, run: () => mcpReady([path.join(ROOT, "bench", "mcp-floor-server.mjs")]) },
];

/** One sample of a cold case, in ms: a case that times itself (mcpReady) resolves to its duration; the others are timed whole. */
export async function coldSample(c) {
  const t0 = performance.now();
  const own = await c.run();
  return typeof own === "number" ? own : performance.now() - t0;
}

/** The floors (unless `floors: false`), then our cases for the build in `dist`. */
export async function coldCases({ dist, base, label = "", floors = true }) {
  const entry = pathToFileURL(path.join(dist, "index.js")).href;
  const main = path.join(dist, "cli", "main.js");
  const tag = label ? `[${label}] ` : "";
  return [
    ...(floors ? FLOOR_CASES : []),
    { name: `${tag}import("ts-code-mode"), fresh process`, run: () => nodeRun(["--input-type=module", "-e", `await import(${JSON.stringify(entry)})`], ROOT) },
    { name: `${tag}import("ts-code-mode"), timed inside, no early child`, run: () => nodeTimed(["--input-type=module", "-e", importTimed(entry, "wall")], ROOT, { TS_CODE_MODE_EARLY_CHILD: "0" }) },
    { name: `${tag}import("ts-code-mode"), CPU ms, no early child`, run: () => nodeTimed(["--input-type=module", "-e", importTimed(entry, "cpu")], ROOT, { TS_CODE_MODE_EARLY_CHILD: "0" }) },
    { name: `${tag}library: fresh process → first result (subprocess)`, run: () => nodeTimed(["--input-type=module", "-e", firstResult(entry, base, "SubprocessExecutor")], ROOT) },
    { name: `${tag}library: fresh process → first result (in-process)`, run: () => nodeTimed(["--input-type=module", "-e", firstResult(entry, base, "InProcessExecutor")], ROOT) },
    { name: `${tag}ts-code-mode run '1+1' (subprocess executor)`, run: () => nodeRun([main, "run", "--base", base, "1+1"], ROOT) },
    { name: `${tag}ts-code-mode run '1+1' --executor in-process`, run: () => nodeRun([main, "run", "--executor", "in-process", "--base", base, "1+1"], ROOT) },
    { name: `${tag}mcp server: spawn + initialize + tools/list`, budget: 300, run: () => mcpReady([main, "mcp", "--base", base]) },
  ];
}

async function main() {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "15" },
      dist: { type: "string", default: path.join(ROOT, "dist") },
      label: { type: "string", default: "" },
      compare: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write("usage: node bench/cold.mjs [--rounds N] [--dist DIR] [--label NAME] [--compare OTHER/dist]\n" +
      "Times cold paths (import, run '1+1', MCP spawn → tools/list) in fresh processes beside their floors; medians. JSON lines on stdout, a table on stderr.\n");
    return;
  }
  const rounds = Number(values.rounds);
  await withTempDir("tcm-bench-cold-", async (dir) => {
    const base = path.join(dir, "base");
    await mkdir(path.join(base, "tools"), { recursive: true });
    for (const f of await readdir(path.join(ROOT, "examples", "tools"))) await copyFile(path.join(ROOT, "examples", "tools", f), path.join(base, "tools", f));
    const label = values.label || (values.compare ? "after" : "");
    const cases = await coldCases({ dist: path.resolve(values.dist), base, label });
    if (values.compare) cases.push(...(await coldCases({ dist: path.resolve(values.compare), base, label: "before", floors: false })));
    const samples = cases.map(() => []);
    for (const c of cases) await c.run(); // warm the file cache
    for (let r = 0; r < rounds; r++) for (const [i, c] of cases.entries()) samples[i].push(await coldSample(c));
    const rows = cases.map((c, i) => resultRow({ name: c.name, executor: c.baseline ? "none" : /in-process/.test(c.name) ? "in-process" : "subprocess", iterations: rounds, samples: samples[i], budgetMs: c.budget }));
    const floor = rows[0].median_ms;
    for (const row of rows) printJsonLine({ ...row, ratio_to_node: Math.round((row.median_ms / floor) * 100) / 100 });
    printTable(rows);
    process.stderr.write(`ratios to node -e 0:\n${rows.map((r) => `  ${r.case} ${(r.median_ms / floor).toFixed(2)}x`).join("\n")}\n`);
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
