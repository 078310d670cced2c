/** `mcp --http --idle-timeout S`: a session whose client left without DELETE is closed and its executor's child stopped. */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { callTool, cleanup, connectHttp, ensureBuilt, isAlive, startHttpServer, structuredOf, tempDir, waitUntil, type HttpServerProcess } from "./harness.js";

let dir: string;
let server: HttpServerProcess | undefined;
const clients: Client[] = [];

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await server?.stop();
  server = undefined;
  await cleanup(dir);
});

async function client(url: string): Promise<Client> {
  const c = await connectHttp(url);
  clients.push(c);
  return c;
}

describe("mcp over HTTP: idle sessions expire", () => {
  it("closes a session idle for --idle-timeout: its child process is gone and the next request is refused", async () => {
    server = await startHttpServer(["--base", "base", "--idle-timeout", "1"], { cwd: dir });
    const c = await client(server.url);
    const pid = structuredOf<{ value: number }>(await callTool(c, "run_code", { code: "process.pid" })).value;
    expect(isAlive(pid)).toBe(true);
    // The client goes quiet without DELETE; the server must not keep the child forever.
    await waitUntil(() => !isAlive(pid), `the executor child ${pid} to be stopped after the idle timeout`);
    expect(server.stderr()).toMatch(/closing MCP session \S+ no request for \d+ s \(--idle-timeout\)/);
    await expect(callTool(c, "run_code", { code: "1" })).rejects.toThrow(/Session not found/);
    // A new client gets a new session.
    const fresh = await client(server.url);
    expect(structuredOf(await callTool(fresh, "run_code", { code: "1 + 1" }))).toMatchObject({ value: 2 });
  });

  it("does not expire a session while its run_code is still running", async () => {
    server = await startHttpServer(["--base", "base", "--idle-timeout", "1"], { cwd: dir });
    const c = await client(server.url);
    const r = await callTool(c, "run_code", { code: "await new Promise((r) => setTimeout(r, 3000)); process.pid" });
    expect(structuredOf(r)).toMatchObject({ ok: true });
  });

  it("refuses --idle-timeout without --http, and one that is not a whole number of seconds", async () => {
    const { runCli } = await import("./harness.js");
    const stdio = await runCli(["mcp", "--idle-timeout", "5"], { cwd: dir });
    expect(stdio.code).toBe(2);
    expect(stdio.stderr).toContain("--idle-timeout only applies with --http PORT");
    const bad = await runCli(["mcp", "--http", "0", "--idle-timeout", "0"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--idle-timeout.*whole number of seconds/);
  });
});
