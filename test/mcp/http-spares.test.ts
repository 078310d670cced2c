/**
 * `mcp --http` keeps started executors for new MCP sessions (--spare-executors, default 1): each
 * client's session runs in a child process that was started before the client connected, no two
 * clients share one, and a spare carries no client's approvals until it is handed to one. Then
 * that client, and only that client, is asked (MCP elicitation) about its calls.
 */
import { execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { processesWith, waitFor } from "../helpers/processes.js";
import { baseWithExampleTools, callTool, cleanup, connectHttp, ensureBuilt, isAlive, startHttpServer, structuredOf, tempDir, textOf } from "./harness.js";

let dir: string;
const toClose: Array<() => Promise<unknown>> = [];

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
  await baseWithExampleTools(dir);
});
afterEach(async () => {
  for (const close of toClose.splice(0).reverse()) await close().catch(() => undefined);
  await cleanup(dir);
});

/** pids of the live processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  let out = "";
  try {
    out = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" });
  } catch {
    return []; // ps exits 1 when there are none
  }
  return out
    .split("\n")
    .map((l) => Number(l.trim()))
    .filter((p) => p > 0 && processesWith(String(p)).some((q) => q.pid === p));
}

async function pidOf(client: Client): Promise<number> {
  const r = await callTool(client, "run_code", { code: "process.pid" });
  return structuredOf<{ value: number }>(r).value;
}

it("each new MCP session gets a spare started before it connected, never one another session had", async () => {
  const server = await startHttpServer(["--base", "base", "--spare-executors", "1"], { cwd: dir });
  toClose.push(() => server.stop());
  const serverPid = server.child.pid as number;
  await waitFor(() => childrenOf(serverPid).length >= 1, "a spare child", 20_000);
  const [spare] = childrenOf(serverPid);

  const a = await connectHttp(server.url);
  toClose.push(() => a.close());
  const pidA = await pidOf(a);
  expect(pidA).toBe(spare);
  // The pool starts the next spare; the second client gets it, not the first client's child.
  await waitFor(() => childrenOf(serverPid).length >= 2, "a second spare", 20_000);
  const next = childrenOf(serverPid).find((p) => p !== pidA);
  const b = await connectHttp(server.url);
  toClose.push(() => b.close());
  const pidB = await pidOf(b);
  expect(pidB).not.toBe(pidA);
  expect(pidB).toBe(next);
  await server.stop();
  await waitFor(() => !isAlive(pidA) && !isAlive(pidB), "the children to end with the server", 20_000);
});

it("a spare's approvals belong to the client it is handed to: that client is asked, another is not", async () => {
  const server = await startHttpServer(["--base", "base", "--require-approval", "echo.say", "--spare-executors", "2"], { cwd: dir });
  toClose.push(() => server.stop());
  await waitFor(() => childrenOf(server.child.pid as number).length >= 2, "two spare children", 20_000);

  // A can ask its user and approves; B cannot ask anyone.
  const asked: string[] = [];
  const a = new Client({ name: "approver", version: "1" }, { capabilities: { elicitation: {} } });
  a.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: "accept", content: { approve: true } };
  });
  await connectHttp(server.url, undefined, a);
  toClose.push(() => a.close());
  const b = await connectHttp(server.url);
  toClose.push(() => b.close());

  const refused = await callTool(b, "run_code", { code: 'await tools.echo.say({ text: ["from", "b"] })' });
  expect(refused.isError).toBe(true);
  expect(textOf(refused)).toMatch(/does not support elicitation/);
  expect(asked).toHaveLength(0);

  const approved = await callTool(a, "run_code", { code: 'await tools.echo.say({ text: ["from", "a"] })' });
  expect(structuredOf(approved)).toMatchObject({ ok: true, value: "from a\n" });
  expect(asked).toHaveLength(1);
  expect(asked[0]).toContain('"a"');
});

it("--spare-executors only applies with --http", async () => {
  const { runCli } = await import("./harness.js");
  const r = await runCli(["mcp", "--base", "base", "--spare-executors", "1"], { cwd: dir });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/--spare-executors only applies with --http/);
});
