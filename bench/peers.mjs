/**
 * ts-code-mode beside a peer, same machine, same run: `npm run bench:peers` (opt-in; not in npm test).
 *
 * Installs UTCP code-mode (@utcp/code-mode, which runs code in isolated-vm) into a temporary folder
 * and measures, for both, in fresh node processes: the import, a session's start, a trivial run and
 * a guest→host tool call; then prints medians side by side with ratios (peer / ours).
 *
 *   node bench/peers.mjs [--rounds 7] [--peer-dir DIR] [--fresh]
 *
 * The install is kept in a temporary folder (os.tmpdir()/tcm-peers-node<major>) and reused by the
 * next run, since isolated-vm 6+ needs Node 22 and on Node 20 the install pins isolated-vm 5.0.4,
 * built from source: ~2 min on an idle machine, over 8 min on a loaded one, which is why a run
 * used to look hung (it printed nothing while npm built). Now it says what it does as it goes: the
 * install's elapsed time every 15 s, each probe's figures, then the table. `--fresh` installs
 * anew; `--peer-dir DIR` uses (or makes) the install in DIR. Every probe has a time limit.
 *
 * py-code-mode is measured only when `python3 -c "import py_code_mode"` works; otherwise the
 * script says why (it is not on the machine's local wheel index, and PyPI is not reachable here).
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { clearInterval, clearTimeout, setInterval, setTimeout } from "node:timers";
import { mkdir, rm, writeFile } from "node:fs/promises";
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
const { FileStorage, InProcessExecutor, Session, SubprocessExecutor, ToolRegistry } = await import(${JSON.stringify(OURS)});
const import_ms = performance.now() - t0;
const { mkdtemp, rm } = await import("node:fs/promises");
const dir = await mkdtemp((await import("node:os")).tmpdir() + "/tcm-peers-");
const info = { name: "noop", type: "toolable", description: "noop", tags: [], callables: [{ name: "ping", description: "pong", params: [], returns: "string" }], direct: null };
// A registry per session: closing a session closes its registry.
const noopTools = () => {
  const tools = new ToolRegistry();
  tools.register({ name: "noop", info: async () => info, call: async () => "pong", close: async () => {} });
  return tools;
};
const med = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
async function measure(executor) {
  const t1 = performance.now();
  const session = new Session({ storage: new FileStorage({ basePath: dir }), executor });
  await session.start();
  const first = await session.run("1+1");
  if (!first.ok) throw new Error(JSON.stringify(first.error));
  const start_ms = performance.now() - t1;
  const trivial = [];
  for (let i = 0; i < 500; i++) { const t = performance.now(); const r = await session.run("1+1"); if (!r.ok) throw new Error(JSON.stringify(r.error)); trivial.push(performance.now() - t); }
  // The second of two loops: the first warms up the JIT on both sides (the peer's loop is run twice too).
  const code = "(async () => { const t = performance.now(); for (let i = 0; i < 1000; i++) await tools.noop.ping({}); return (performance.now() - t) / 1000; })()";
  await session.run(code);
  const loop = await session.run(code);
  if (!loop.ok) throw new Error(JSON.stringify(loop.error));
  await session.close();
  return { start_ms, trivial_ms: med(trivial.slice(100)), tool_ms: loop.value };
}
const inproc = await measure(new InProcessExecutor({ tools: noopTools() }));
const sub = await measure(new SubprocessExecutor({ tools: noopTools() }));
await rm(dir, { recursive: true, force: true });
console.log(JSON.stringify({ import_ms, ...inproc, sub_start_ms: sub.start_ms, sub_trivial_ms: sub.trivial_ms, sub_tool_ms: sub.tool_ms }));
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
  await client.callToolChain(code);
  const r = await client.callToolChain(code);
  tool_ms = typeof r.result === "number" ? r.result : null;
  if (tool_ms === null) tool_note = "tool loop gave " + JSON.stringify(r).slice(0, 200);
} catch (e) { tool_note = String(e.message ?? e).slice(0, 200); }
console.log(JSON.stringify({ import_ms, start_ms, trivial_ms: med(trivial.slice(20)), tool_ms, tool_note }));
process.exit(0);
`;

/** Longest a probe may take; past it the probe is killed and the run fails saying which one. */
const PROBE_TIMEOUT_MS = 120_000;
/** Longest the peer's install may take (isolated-vm builds from source on Node 20). */
const INSTALL_TIMEOUT_MS = 20 * 60_000;

/** After its figures, how long a probe may take to exit before it is killed. */
const EXIT_GRACE_MS = 2_000;

/**
 * Runs `script` in a fresh node and resolves with the figures it prints (its last `{"import_ms"…`
 * line). The UTCP probe does not exit by itself: isolated-vm 5 on Node 20 hangs in its teardown at
 * process.exit (threads waiting on a futex, no CPU), so each round used to wait for the probe's
 * time limit, which is how a 5-round run printed nothing for minutes. A probe that has printed
 * its figures gets EXIT_GRACE_MS to exit, then is killed.
 */
async function probe(script, cwd, what) {
  const file = path.join(cwd, `probe-${process.pid}-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(file, script);
  try {
    return await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [file], { cwd, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      let figures = null;
      let grace;
      const limit = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`the ${what} probe did not finish within ${PROBE_TIMEOUT_MS / 1000} s (killed); stderr: ${stderr.slice(-2_000)}`));
      }, PROBE_TIMEOUT_MS);
      child.stdout.setEncoding("utf8").on("data", (chunk) => {
        stdout = (stdout + chunk).slice(-(1 << 20));
        // The peer logs to stdout too ("Calling tool ..."): the figures are the last JSON line.
        const line = stdout.split("\n").filter((l) => l.startsWith('{"import_ms"') && l.endsWith("}")).pop();
        if (line && !figures) {
          figures = JSON.parse(line);
          grace = setTimeout(() => child.kill("SIGKILL"), EXIT_GRACE_MS);
        }
      });
      child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-8_192)));
      child.on("error", reject);
      child.on("close", (code, signal) => {
        clearTimeout(limit);
        clearTimeout(grace);
        if (figures) resolve(figures);
        else reject(new Error(`the ${what} probe ended (${signal ?? `exit ${code}`}) without figures; stderr: ${stderr.slice(-2_000)}`));
      });
    });
  } finally {
    await rm(file, { force: true });
  }
}

async function installUtcp(dir) {
  await mkdir(dir, { recursive: true });
  // isolated-vm 6+ supports Node 22+ only; 5.0.4 builds on Node 20.
  const overrides = Number(process.versions.node.split(".")[0]) < 22 ? { "isolated-vm": "5.0.4" } : {};
  await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "tcm-peers", private: true, type: "module", overrides }));
  process.stderr.write(`installing @utcp/code-mode into ${dir} (isolated-vm may build from source: ~2 min idle, longer on a busy machine)...\n`);
  const t0 = performance.now();
  const ticker = setInterval(() => process.stderr.write(`  still installing (${Math.round((performance.now() - t0) / 1000)} s)\n`), 15_000);
  try {
    await new Promise((resolve, reject) => {
      const child = spawn("npm", ["install", "--no-audit", "--no-fund", "@utcp/code-mode"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
      const limit = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`npm install @utcp/code-mode did not finish within ${INSTALL_TIMEOUT_MS / 60_000} min`));
      }, INSTALL_TIMEOUT_MS);
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(limit);
        if (code === 0) resolve();
        else reject(new Error(`npm install @utcp/code-mode exited ${code}`));
      });
    });
  } finally {
    clearInterval(ticker);
  }
  process.stderr.write(`installed in ${Math.round((performance.now() - t0) / 1000)} s\n`);
}

/** An install made by an earlier run that still works (its package.json names @utcp/code-mode and it resolves). */
function installed(dir) {
  return existsSync(path.join(dir, "node_modules", "@utcp", "code-mode", "package.json")) && existsSync(path.join(dir, "node_modules", "isolated-vm", "package.json"));
}

/** The machine's local Python wheel index (see the project's environment notes); PyPI itself is not reachable here. */
const WHEEL_INDEX = ["--index-url", "file:///opt/pypi/simple", "--extra-index-url", "file:///opt/pypi-more/simple"];

async function pythonPeer() {
  try {
    await exec("python3", ["-c", "import py_code_mode"], { timeout: 20_000 });
    return "py-code-mode: importable, but this script does not measure it yet";
  } catch {
    // Why not: is it anywhere pip can reach without PyPI?
  }
  const dir = path.join(os.tmpdir(), `tcm-peers-pip-${process.pid}`);
  try {
    await exec("python3", ["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", ...WHEEL_INDEX, "py-code-mode", "-d", dir], { timeout: 60_000 });
    return "py-code-mode: on the local wheel index but not installed; install it with its dependencies (pip install ... py-code-mode) to compare";
  } catch (err) {
    const why = /No matching distribution|from versions: none/.test(String(err.stderr)) ? "the local wheel index (/opt/pypi/simple, /opt/pypi-more/simple) has no py-code-mode and PyPI is not reachable" : `pip could not look it up (${String(err.stderr ?? err.message).trim().split("\n").pop()})`;
    return `py-code-mode: not measured: python3 cannot import py_code_mode, and it cannot be installed here: ${why}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main() {
  const { values } = parseArgs({ options: { rounds: { type: "string", default: "7" }, "peer-dir": { type: "string" }, fresh: { type: "boolean", default: false } } });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 100) throw new Error(`--rounds must be a whole number from 1 to 100, got ${values.rounds}`);
  const peerDir = values["peer-dir"] ?? path.join(os.tmpdir(), `tcm-peers-node${process.versions.node.split(".")[0]}`);
  if (values.fresh || !installed(peerDir)) {
    await rm(peerDir, { recursive: true, force: true });
    await installUtcp(peerDir);
  } else process.stderr.write(`using the install in ${peerDir} (--fresh to install anew)\n`);
  const ours = [];
  const utcp = [];
  const short = (x) => Object.entries(x).filter(([, v]) => typeof v === "number").map(([k, v]) => `${k.replace(/_ms$/, "")} ${v.toFixed(3)}`).join(", ");
  // Interleaved: one fresh process of each per round, so machine load hits both alike.
  for (let r = 0; r < rounds; r++) {
    ours.push(await probe(OUR_PROBE, ROOT, "ts-code-mode"));
    process.stderr.write(`round ${r + 1}/${rounds}  ours: ${short(ours.at(-1))} ms\n`);
    utcp.push(await probe(UTCP_PROBE, peerDir, "UTCP code-mode"));
    process.stderr.write(`round ${r + 1}/${rounds}  utcp: ${short(utcp.at(-1))} ms\n`);
  }
  // [label, our key, utcp key]: UTCP runs code in an isolate inside its process, like our in-process executor; our default is the subprocess one.
  const rows = [
    ["import (fresh process, after node boot)", "import_ms", "import_ms"],
    ["session start → first result, ours in-process (utcp: create() + first run)", "start_ms", "start_ms"],
    ["session start → first result, ours subprocess (utcp: create() + first run)", "sub_start_ms", "start_ms"],
    ["trivial run, ours in-process run('1+1') (utcp: callToolChain('return 1+1'))", "trivial_ms", "trivial_ms"],
    ["trivial run, ours subprocess run('1+1') (utcp: callToolChain('return 1+1'))", "sub_trivial_ms", "trivial_ms"],
    ["guest→host tool call per call in a loop, ours in-process", "tool_ms", "tool_ms"],
    ["guest→host tool call per call in a loop, ours subprocess", "sub_tool_ms", "tool_ms"],
  ];
  const lines = [];
  const median = (xs) => {
    const vals = xs.filter((v) => typeof v === "number");
    return vals.length ? summarize(vals).median_ms : null;
  };
  for (const [label, ok, uk] of rows) {
    const o = median(ours.map((x) => x[ok]));
    const u = median(utcp.map((x) => x[uk]));
    const ratio = u === null || o === null ? null : Math.round((u / o) * 100) / 100;
    printJsonLine({ case: label, ours_median_ms: o, utcp_median_ms: u, ratio_utcp_over_ours: ratio, rounds });
    const fmt = (v) => (v === null ? "n/a" : String(v)).padStart(9);
    lines.push(`${label.padEnd(80)} ours ${fmt(o)} ms   utcp ${fmt(u)} ms   ${ratio === null ? "" : `utcp/ours ${ratio}x`}`);
  }
  const note = utcp.find((x) => x.tool_note)?.tool_note;
  process.stderr.write(`\nmedians of ${rounds} rounds (fresh processes)\n${lines.join("\n")}\n${note ? `utcp tool call: ${note}\n` : ""}${await pythonPeer()}\n`);
}

await main();
