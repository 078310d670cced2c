/**
 * `ts-code-mode mcp` over stdio answers the handshake before it starts the executor (issue 24: a
 * desktop app waits for initialize and tools/list; spawning the child node and parsing tool YAML
 * must not sit in front of them). Driven with raw JSON-RPC lines so the test decides when the
 * client's `initialized` notification goes out, and reads the server's children from /proc.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { baseWithExampleTools, cleanup, ensureBuilt, isAlive, MAIN, tempDir, waitUntil } from "./harness.js";

let dir: string | undefined;
let server: ChildProcessWithoutNullStreams | undefined;

beforeAll(ensureBuilt);
afterEach(async () => {
  if (server && server.exitCode === null) {
    server.stdin.end();
    await waitUntil(() => server?.exitCode !== null || server.signalCode !== null, "the server to exit");
  }
  server = undefined;
  if (dir) await cleanup(dir);
});

/** Pids of the direct children of `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
  return text ? text.split(/\s+/).map(Number).filter(isAlive) : [];
}

describe.runIf(process.platform === "linux")("mcp over stdio: the handshake comes first", () => {
  /** A server in a fresh base with the example tools; its replies by id. */
  async function startServer() {
    dir = await tempDir();
    await baseWithExampleTools(dir);
    const proc = spawn(process.execPath, [MAIN, "mcp", "--base", "base"], { cwd: dir, stdio: "pipe" });
    server = proc;
    const replies = new Map<number, unknown>();
    createInterface({ input: proc.stdout }).on("line", (line) => {
      const msg = JSON.parse(line) as { id?: number };
      if (typeof msg.id === "number") replies.set(msg.id, msg);
    });
    const send = (msg: object) => proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...msg })}\n`);
    send({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    await waitUntil(() => replies.has(1), "the initialize reply");
    expect(replies.get(1)).toMatchObject({ result: { serverInfo: { name: "ts-code-mode" } } });
    expect(childrenOf(proc.pid!)).toEqual([]);
    return { proc, replies, send };
  }

  it("answers initialize and the first tools/list with no executor child yet; the child starts right after that answer", async () => {
    const { proc, replies, send } = await startServer();
    send({ method: "notifications/initialized" });
    // A client that lists tools a moment after `initialized` (the SDK's client awaits the
    // notification's write first) still gets its answer before the executor starts.
    await new Promise((r) => setTimeout(r, 30));
    expect(childrenOf(proc.pid!)).toEqual([]);
    send({ id: 2, method: "tools/list" });
    await waitUntil(() => replies.has(2), "the tools/list reply");
    expect(replies.get(2)).toMatchObject({ result: { tools: expect.arrayContaining([expect.objectContaining({ name: "run_code" })]) } });
    // Then the executor starts in the background: the subprocess executor's child node appears.
    await waitUntil(() => childrenOf(proc.pid!).length > 0, "the executor's child process");
  });

  it("a client that never lists tools still gets its executor started, a moment after initialized", async () => {
    const { proc, send } = await startServer();
    send({ method: "notifications/initialized" });
    await waitUntil(() => childrenOf(proc.pid!).length > 0, "the executor's child process");
  });
});
