/**
 * ts-code-mode beside a peer, same machine, same run: `npm run bench:peers` (opt-in; not in npm test).
 *
 * Installs UTCP code-mode (@utcp/code-mode, which runs code in isolated-vm) into a temporary folder
 * and measures, for both, in fresh node processes: the import, a session's start, a trivial run and
 * a guest→host tool call; then prints medians side by side with ratios (peer / ours).
 *
 *   node bench/peers.mjs [--rounds 7] [--peer-dir DIR]   DIR: reuse an install made by an earlier run (kept)
 *
 * isolated-vm 6+ needs Node 22; on Node 20 the install pins isolated-vm 5.0.4, built from source
 * (~2 min the first time). py-code-mode is measured only when `python3 -c "import code_mode"` works;
 * otherwise the script says so.
 */
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs, promisify } from "node:util";
import { printJsonLine, summarize } from "./lib.mjs";

const exec = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OURS = pathToFileURL(path.join(ROOT, "dist", "index.js")).href;

/** A probe run in a fresh node: prints one JSON object {import_ms, start_ms, trivial_ms, tool_ms}. */
const OUR_PROBE = `
const t0 = performance.now();
const { FileStorage, InProcessExecutor, Session, ToolRegistry } = await import(${JSON.stringify(OURS)});
const import_ms = performance.now() - t0;
const { mkdtemp, rm } = await import("node:fs/promises");
const dir = await mkdtemp((await import("node:os")).tmpdir() + "/tcm-peers-");
const tools = new ToolRegistry();
const info = { name: "noop", type: "toolable", description: "noop", tags: [], callables: [{ name: "ping", description: "pong", params: [], returns: "string" }], direct: null };
tools.register({ name: "noop", info: async () => info, call: async () => "pong", close: async () => {} });
const t1 = performance.now();
const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new InProcessExecutor({ tools }) });
await session.start();
const start_ms = performance.now() - t1;
const med = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
const trivial = [];
for (let i = 0; i < 500; i++) { const t = performance.now(); const r = await session.run("1+1"); if (!r.ok) throw new Error(JSON.stringify(r.error)); trivial.push(performance.now() - t); }
const loop = await session.run("(async () => { const t = performance.now(); for (let i = 0; i < 1000; i++) await tools.noop.ping({}); return (performance.now() - t) / 1000; })()");
if (!loop.ok) throw new Error(JSON.stringify(loop.error));
await session.close();
await rm(dir, { recursive: true, force: true });
console.log(JSON.stringify({ import_ms, start_ms, trivial_ms: med(trivial.slice(100)), tool_ms: loop.value }));
`;

const UTCP_PROBE = `
const t0 = performance.now();
const { CodeModeUtcpClient } = await import("@utcp/code-mode");
const import_ms = performance.now() - t0;
const t1 = performance.now();
const client = await CodeModeUtcpClient.create();
const first = await client.callToolChain("return 1+1");
const start_ms = performance.now() - t1;
if (first.result !== 2) throw new Error("utcp trivial run gave " + JSON.stringify(first));
const med = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
const trivial = [];
for (let i = 0; i < 200; i++) { const t = performance.now(); await client.callToolChain("return 1+1"); trivial.push(performance.now() - t); }
let tool_ms = null, tool_note = null;
try {
  // An in-process protocol (UTCP's own extension point) whose tool answers at once: the same noop tool as ours.
  const { CallTemplateSerializer, CommunicationProtocol } = await import("@utcp/sdk");
  CallTemplateSerializer.registerCallTemplate("noop", { toDict: (o) => ({ ...o }), validateDict: (o) => ({ ...o }), copy: (o) => ({ ...o }) }, true);
  const noop = {
    registerManual: async (_c, t) => ({ manualCallTemplate: t, manual: { utcp_version: "1.0.0", manual_version: "1.0.0", tools: [{ name: "ping", description: "pong", inputs: { type: "object", properties: {} }, outputs: { type: "string" }, tags: [], tool_call_template: t }] }, success: true, errors: [] }),
    deregisterManual: async () => {},
    callTool: async () => "pong",
    callToolStreaming: async function* () { yield "pong"; },
    close: async () => {},
  };
  CommunicationProtocol.communicationProtocols["noop"] = noop;
  // The client copies the protocol table when created; this one exists already.
  client._registeredCommProtocols?.set("noop", noop);
  const reg = await client.registerManual({ name: "noop", call_template_type: "noop" });
  if (!reg.success) throw new Error(reg.errors.join("; "));
  const code = "const t = Date.now(); for (let i = 0; i < 200; i++) await noop.ping({}); return (Date.now() - t) / 200;";
  const r = await client.callToolChain(code);
  tool_ms = typeof r.result === "number" ? r.result : null;
  if (tool_ms === null) tool_note = "tool loop gave " + JSON.stringify(r).slice(0, 200);
} catch (e) { tool_note = String(e.message ?? e).slice(0, 200); }
console.log(JSON.stringify({ import_ms, start_ms, trivial_ms: med(trivial.slice(20)), tool_ms, tool_note }));
process.exit(0);
`;

async function probe(script, cwd) {
  const file = path.join(cwd, `probe-${process.pid}-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(file, script);
  try {
    // isolated-vm 5 may crash while the process exits, after the figures are printed: keep them.
    const { stdout } = await exec(process.execPath, [file], { cwd, timeout: 120_000, maxBuffer: 1 << 20 }).catch((err) => {
      if (typeof err.stdout === "string" && /^\{"import_ms"/m.test(err.stdout)) return err;
      throw err;
    });
    // The peer logs to stdout too ("Calling tool ..."): the figures are the last JSON line.
    return JSON.parse(stdout.split("\n").filter((l) => l.startsWith('{"import_ms"')).pop());
  } finally {
    await rm(file, { force: true });
  }
}

async function installUtcp(dir) {
  await mkdir(dir, { recursive: true });
  // isolated-vm 6+ supports Node 22+ only; 5.0.4 builds on Node 20.
  const overrides = Number(process.versions.node.split(".")[0]) < 22 ? { "isolated-vm": "5.0.4" } : {};
  await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "tcm-peers", private: true, type: "module", overrides }));
  process.stderr.write(`installing @utcp/code-mode into ${dir} (isolated-vm may build from source, ~2 min)...\n`);
  await new Promise((resolve, reject) => {
    const child = spawn("npm", ["install", "--no-audit", "--no-fund", "@utcp/code-mode"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`npm install @utcp/code-mode exited ${code}`))));
  });
}

async function pythonPeer() {
  try {
    await exec("python3", ["-c", "import code_mode"], { timeout: 20_000 });
    return "py-code-mode importable but not measured by this script yet";
  } catch {
    return "py-code-mode: not measured (python3 cannot import code_mode here; install it with its dependencies to compare)";
  }
}

async function main() {
  const { values } = parseArgs({ options: { rounds: { type: "string", default: "7" }, "peer-dir": { type: "string" } } });
  const rounds = Number(values.rounds);
  const temp = values["peer-dir"] ? null : await mkdtemp(path.join(os.tmpdir(), "tcm-peers-"));
  const peerDir = values["peer-dir"] ?? temp;
  try {
    if (temp) await installUtcp(peerDir);
    const ours = [];
    const utcp = [];
    // Interleaved: one fresh process of each per round, so machine load hits both alike.
    for (let r = 0; r < rounds; r++) {
      ours.push(await probe(OUR_PROBE, ROOT));
      utcp.push(await probe(UTCP_PROBE, peerDir));
    }
    const keys = [
      ["import_ms", "import (fresh process, after node boot)"],
      ["start_ms", "session start (ours: new Session + start, in-process; utcp: create() + first run)"],
      ["trivial_ms", "trivial run (warm; ours run('1+1'), utcp callToolChain('return 1+1'))"],
      ["tool_ms", "guest→host tool call, per call in a loop"],
    ];
    const lines = [];
    for (const [k, label] of keys) {
      const o = summarize(ours.map((x) => x[k]).filter((v) => typeof v === "number")).median_ms;
      const uVals = utcp.map((x) => x[k]).filter((v) => typeof v === "number");
      const u = uVals.length ? summarize(uVals).median_ms : null;
      const ratio = u === null ? null : Math.round((u / o) * 100) / 100;
      printJsonLine({ case: label, ours_median_ms: o, utcp_median_ms: u, ratio_utcp_over_ours: ratio, rounds });
      lines.push(`${label.padEnd(84)} ours ${String(o).padStart(9)} ms   utcp ${u === null ? "      n/a" : String(u).padStart(9)} ms   ${ratio === null ? "" : `utcp/ours ${ratio}x`}`);
    }
    const note = utcp.find((x) => x.tool_note)?.tool_note;
    process.stderr.write(`\n${lines.join("\n")}\n${note ? `utcp tool call: ${note}\n` : ""}${await pythonPeer()}\n`);
  } finally {
    if (temp) await rm(temp, { recursive: true, force: true });
  }
}

await main();
