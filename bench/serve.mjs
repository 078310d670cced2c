/* global fetch, AbortSignal */
/**
 * Load on one `ts-code-mode serve` (the built CLI, loopback): N concurrent clients, each with its
 * own session, each doing R trivial runs (`1 + 1`) one after another. Reports requests/s, median
 * and p99 run latency over HTTP, errors, and memory per session (server RSS growth plus the
 * sessions' child processes, from /proc).
 *
 *   npm run build && node bench/serve.mjs [--clients 20] [--runs 100] [--executor subprocess|in-process|sandbox]
 */
import { spawn, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { benchArgs } from "./lib.mjs";

const { values } = benchArgs(import.meta.url, { options: { clients: { type: "string", default: "20" }, runs: { type: "string", default: "100" }, executor: { type: "string", default: "subprocess" } } });
const CLIENTS = Number(values.clients);
const RUNS = Number(values.runs);
const TOKEN = "bench-token-0123456789abcdef";
const MAIN = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));

const base = await mkdtemp(path.join(os.tmpdir(), "tcm-bench-serve-"));
const server = spawn(process.execPath, [MAIN, "serve", "--port", "0", "--base", base, "--token", TOKEN, "--executor", values.executor, "--max-sessions", String(CLIENTS + 1)], { stdio: ["ignore", "ignore", "pipe"] });
const url = await new Promise((resolve, reject) => {
  let err = "";
  server.stderr.setEncoding("utf8").on("data", (d) => {
    err += d;
    const m = /listening on (http:\/\/\S+)/.exec(err);
    if (m) resolve(m[1]);
  });
  server.once("exit", (code) => reject(new Error(`serve exited (${code}): ${err}`)));
});

const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
async function post(p, body) {
  const res = await fetch(new URL(p, url), { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(60_000) });
  const json = await res.json();
  if (!res.ok) throw new Error(JSON.stringify(json));
  return json;
}

/** RSS in KiB of `pid` and every descendant (Linux /proc). */
function treeRssKb(pid) {
  let total = 0;
  const rss = (p) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0);
  const walk = (p) => {
    try {
      total += rss(p);
    } catch {
      return;
    }
    let kids = "";
    try {
      kids = execFileSync("pgrep", ["-P", String(p)], { encoding: "utf8" });
    } catch {
      // no children
    }
    for (const k of kids.split("\n").filter(Boolean)) walk(Number(k));
  };
  walk(pid);
  return total;
}

try {
  const before = treeRssKb(server.pid);
  const ids = [];
  for (let i = 0; i < CLIENTS; i++) {
    const { id } = await post("/sessions", {});
    ids.push(id);
    await post(`/sessions/${id}/run`, { code: "0" }); // start the session's executor (warm-up)
  }
  const after = treeRssKb(server.pid);
  const latencies = [];
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(
    ids.map(async (id) => {
      for (let r = 0; r < RUNS; r++) {
        const s = performance.now();
        try {
          const result = await post(`/sessions/${id}/run`, { code: "1 + 1" });
          if (!result.ok || result.value !== 2) errors++;
        } catch {
          errors++;
        }
        latencies.push(performance.now() - s);
      }
    }),
  );
  const wall = performance.now() - t0;
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
  console.log(`serve, executor ${values.executor}, ${CLIENTS} clients x ${RUNS} runs (loopback, ${os.cpus().length} cores)`);
  console.log(`  requests/s          ${(latencies.length / (wall / 1000)).toFixed(0)}`);
  console.log(`  run latency median  ${pct(50).toFixed(2)} ms`);
  console.log(`  run latency p99     ${pct(99).toFixed(2)} ms`);
  console.log(`  errors              ${errors}`);
  console.log(`  memory per session  ${((after - before) / CLIENTS / 1024).toFixed(1)} MiB (server RSS growth + child processes)`);
  // One client alone: the latency without queueing behind other clients.
  const solo = [];
  for (let r = 0; r < RUNS; r++) {
    const s = performance.now();
    await post(`/sessions/${ids[0]}/run`, { code: "1 + 1" });
    solo.push(performance.now() - s);
  }
  solo.sort((a, b) => a - b);
  console.log(`  1 client median     ${solo[solo.length >> 1].toFixed(2)} ms`);
} finally {
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
  await rm(base, { recursive: true, force: true });
}
