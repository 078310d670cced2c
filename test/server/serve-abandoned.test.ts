/**
 * `serve` keeps no session whose client gave up while it was being created (issue 35.4): the client
 * never learnt the id, so nobody could use or close it, and it held a child process until
 * --idle-timeout. Real server, raw HTTP clients that close their connection mid-create, and the
 * server's child processes counted.
 *
 * To cut the clients while every creation is certainly under way (no timing luck), each session's
 * child is held at start-up by a preload (NODE_OPTIONS, inherited by the children) until the test
 * creates a gate file.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";
import { waitFor } from "../helpers/processes.js";
import { atIssueScale, reportFaults } from "../helpers/fault-report.js";
import { api, cleanup, ensureBuilt, startServe, tempDir, type ServeProcess } from "./harness.js";

const servers: ServeProcess[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  await Promise.all(dirs.splice(0).map((d) => cleanup(d)));
});

/** Blocks a guest child (it carries TS_CODE_MODE_GUEST) until the gate file exists; the server itself passes. */
const GATE_PRELOAD = `
if (process.env.TS_CODE_MODE_GUEST && process.env.TEST_GATE) {
  const fs = require("node:fs");
  fs.writeFileSync(process.env.TEST_GATE + ".held-" + process.pid, "");
  const wait = new Int32Array(new SharedArrayBuffer(4));
  while (!fs.existsSync(process.env.TEST_GATE)) Atomics.wait(wait, 0, 0, 20);
}
`;

/** pids of the live processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  try {
    const out = execFileSync("ps", ["-o", "pid=,stat=", "--ppid", String(pid)], { encoding: "utf8" });
    return out
      .split("\n")
      .map((l) => l.trim().split(/\s+/))
      .filter(([p, stat]) => Number(p) > 0 && !(stat ?? "").startsWith("Z"))
      .map(([p]) => Number(p));
  } catch {
    return []; // ps exits 1 when there are none
  }
}

/** A raw HTTP client that sends POST /sessions and keeps the connection open until told to drop it. */
function startCreate(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      const body = "{}";
      socket.write(`POST /sessions HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      resolve(socket);
    });
    socket.on("error", reject);
  });
}

it("closes the session and its child when the client closes the connection while the session starts", async () => {
  const dir = await tempDir();
  dirs.push(dir);
  const preload = path.join(dir, "gate.cjs");
  await writeFile(preload, GATE_PRELOAD);
  const gate = path.join(dir, "gate");
  // No spare executors: every session starts its own (held) child.
  const s = await startServe(["--no-auth", "--base", dir, "--tools", EXAMPLE_TOOLS_PATH, "--spare-executors", "0"], {
    env: { ...process.env, NODE_OPTIONS: `--require ${preload}`, TEST_GATE: gate },
  });
  servers.push(s);
  const serverPid = s.child.pid as number;

  // The issue cut 10 requests: as many under npm run faults, 5 under npm test. Not more: every
  // child is held at start-up together, and one held past the executor's startup limit (10 s)
  // fails its creation before the client goes, which a loaded 2-core machine could reach.
  const clients = Math.min(atIssueScale(5, 10), 10);
  const sockets = await Promise.all(Array.from({ length: clients }, () => startCreate(s.url)));
  const held = async () => (await readdir(dir)).filter((f) => f.startsWith("gate.held-")).map((f) => Number(f.slice("gate.held-".length)));
  await waitFor(async () => (await held()).length === clients, `${clients} session children held at start-up`, 30_000);
  const childPids = await held();
  expect(childrenOf(serverPid).sort()).toEqual([...childPids].sort());

  for (const socket of sockets) socket.destroy();
  const noticed = () => s.stderr().split("\n").filter((l) => l.includes("closed its connection before it got its new session's id")).length;
  await waitFor(() => noticed() === clients, "the server to notice every client that went away", 10_000);

  await writeFile(gate, "");
  expect(existsSync(gate)).toBe(true);
  await waitFor(() => childrenOf(serverPid).length === 0, "every session's child to end", 30_000);
  const info = await api(s.url, "GET", "/info", { token: null });
  expect((info.body as { sessions: { open: number } }).sessions.open).toBe(0);
  reportFaults({ trial: "serve: clients gone while their session starts", runs: clients, orphans: childrenOf(serverPid).length });

  // The server still serves: a client that stays gets its session.
  const created = await api(s.url, "POST", "/sessions", { json: {}, token: null });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(childrenOf(serverPid)).toHaveLength(1);
}, 120_000);
