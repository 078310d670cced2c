/**
 * Search across real processes, using the built package (dist/):
 *   - the default model loads and searches with every network entry point trapped (a preload
 *     script makes net/tls/http/https/dns/fetch throw and records each attempt, in the main
 *     thread and in the model's worker thread alike), and no attempt is made;
 *   - processes sharing one FileStorage folder share its vector cache: a second process embeds
 *     nothing, and two processes indexing at the same time leave only whole vector files.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ensureBuilt, REPO } from "../cli/harness.js";
import { FIXTURE_WORKFLOWS } from "../fixtures/search/workflows.js";

const DIST = pathToFileURL(path.join(REPO, "dist/index.js")).href;

/** Records, then refuses, every way Node code opens a connection or resolves a name. */
const NO_NETWORK_PRELOAD = String.raw`
const fs = require("node:fs");
const { isMainThread } = require("node:worker_threads");
const log = process.env.NET_LOG;
function trap(mod, name, label) {
  const original = mod[name];
  if (typeof original !== "function") return;
  mod[name] = function (...args) {
    const target = typeof args[0] === "string" ? args[0] : JSON.stringify(args[0] && (args[0].host || args[0].hostname || args[0].href || args[0].port || args[0]));
    fs.appendFileSync(log, JSON.stringify({ attempt: label, target, thread: isMainThread ? "main" : "worker" }) + "\n");
    throw new Error("network access blocked by test: " + label);
  };
}
const net = require("node:net");
trap(net, "connect", "net.connect");
trap(net, "createConnection", "net.createConnection");
trap(net.Socket.prototype, "connect", "net.Socket.connect");
trap(require("node:tls"), "connect", "tls.connect");
for (const m of ["node:http", "node:https"]) { trap(require(m), "request", m + ".request"); trap(require(m), "get", m + ".get"); }
const dns = require("node:dns");
for (const f of ["lookup", "resolve", "resolve4", "resolve6"]) { trap(dns, f, "dns." + f); trap(dns.promises, f, "dns.promises." + f); }
trap(globalThis, "fetch", "fetch");
`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function node(args: string[], env: Record<string, string>, cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
    delete childEnv["TS_CODE_MODE_SEARCH"];
    const child = spawn(process.execPath, args, { cwd, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-search-proc-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

describe("offline", () => {
  it("loads the built-in model and searches without any network attempt (and the trap does catch one)", async () => {
    const log = path.join(dir, "net.log");
    await writeFile(log, "");
    await writeFile(path.join(dir, "preload.cjs"), NO_NETWORK_PRELOAD);
    await writeFile(
      path.join(dir, "main.mjs"),
      `
import { appendFileSync } from "node:fs";
const { FileStorage, InProcessExecutor, Session } = await import(${JSON.stringify(DIST)});
const workflows = ${JSON.stringify(FIXTURE_WORKFLOWS.slice(0, 6))};
const session = new Session({ storage: new FileStorage({ basePath: ${JSON.stringify(path.join(dir, "base"))} }), executor: new InProcessExecutor({ search: { readyTimeoutMs: 120_000, indexTimeoutMs: 120_000 } }) });
await session.start();
for (const w of workflows) await session.addWorkflow(w);
const hits = await session.searchWorkflows("discover which TCP ports are listening");
await session.close();
appendFileSync(process.env.NET_LOG, JSON.stringify({ phase: "control" }) + "\\n");
let blocked = false;
try { await fetch("http://127.0.0.1:9/"); } catch (e) { blocked = String(e.message).includes("blocked by test"); }
console.log(JSON.stringify({ first: hits[0]?.name, blocked }));
process.exit(0);
`,
    );
    const r = await node(["--require", path.join(dir, "preload.cjs"), path.join(dir, "main.mjs")], { NET_LOG: log }, dir);
    expect(r.stderr).not.toMatch(/ranked by words only|failed/);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toEqual({ first: "port_scan", blocked: true });
    const lines = (await readFile(log, "utf8")).trim().split("\n").map((l) => JSON.parse(l) as { phase?: string; attempt?: string });
    const control = lines.findIndex((l) => l.phase === "control");
    expect(control).toBeGreaterThanOrEqual(0);
    expect(lines.slice(0, control), "network attempts while loading or searching").toEqual([]);
    expect(lines.slice(control + 1).map((l) => l.attempt)).toEqual(["fetch"]);
  }, 90_000);
});

describe("several processes, one folder", () => {
  /** A process that searches `base` with a bag-of-words embedder and reports what it had to embed. */
  async function searchInChild(base: string, create: boolean): Promise<{ embedded: number; first: string }> {
    const script = path.join(dir, `child-${Math.random().toString(36).slice(2)}.mjs`);
    await writeFile(
      script,
      `
import { createHash } from "node:crypto";
const { FileStorage, SearchSetup, WorkflowLibrary } = await import(${JSON.stringify(DIST)});
let embedded = 0;
const embedder = {
  id: "bow-test", dimensions: 32,
  async embed(texts) {
    embedded += texts.length - (texts.length === 1 && texts[0] === "open tcp ports" ? 1 : 0);
    return texts.map((t) => {
      const v = new Float32Array(32);
      for (const w of t.toLowerCase().split(/[^a-z]+/).filter(Boolean)) v[createHash("md5").update(w).digest()[0] % 32] += 1;
      return v;
    });
  },
};
const storage = new FileStorage({ basePath: ${JSON.stringify(base)} });
const library = new WorkflowLibrary(storage.workflows, { ranker: SearchSetup.create(storage, { embedder, readyTimeoutMs: 120_000, indexTimeoutMs: 120_000 }).workflowsRanker() });
if (${create}) for (const w of ${JSON.stringify(FIXTURE_WORKFLOWS)}) await library.create(w);
const hits = await library.search("open tcp ports");
console.log(JSON.stringify({ embedded, first: hits[0]?.name }));
`,
    );
    const r = await node([script], {}, dir);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout.trim()) as { embedded: number; first: string };
  }

  it("a second process embeds nothing that the first already embedded", async () => {
    const base = path.join(dir, "base");
    const first = await searchInChild(base, true);
    expect(first).toEqual({ embedded: FIXTURE_WORKFLOWS.length * 2, first: "port_scan" });
    expect(await searchInChild(base, false)).toEqual({ embedded: 0, first: "port_scan" });
  }, 60_000);

  it("two processes indexing at once leave only whole vector files and no temp files", async () => {
    const base = path.join(dir, "base");
    await searchInChild(base, true);
    await rm(path.join(base, "vectors"), { recursive: true, force: true, maxRetries: 5 });
    const both = await Promise.all([searchInChild(base, false), searchInChild(base, false)]);
    for (const r of both) expect(r.first).toBe("port_scan");
    const folder = path.join(base, "vectors", "bow-test-32d", "workflows");
    const files = await readdir(folder);
    expect(files).toHaveLength(FIXTURE_WORKFLOWS.length * 2);
    for (const f of files) {
      expect(f).toMatch(/^[0-9a-f]{64}\.f32$/);
      expect((await stat(path.join(folder, f))).size).toBe(32 * 4);
    }
    expect(await searchInChild(base, false)).toEqual({ embedded: 0, first: "port_scan" });
  }, 60_000);
});
