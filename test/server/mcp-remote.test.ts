/**
 * `ts-code-mode mcp --remote URL`: the MCP server's run_code runs on a `serve` instance (both the
 * built CLI). The MCP server's storage flags name the server's storage (checked at session start).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { callTool, connectStdio, structuredOf, type StdioConnection } from "../mcp/harness.js";
import { EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";
import { cleanup, ensureBuilt, startServe, tempDir, TOKEN, type ServeProcess } from "./harness.js";

let server: ServeProcess;
let dir: string;
let mcp: StdioConnection | undefined;

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  server = await startServe(["--token", TOKEN, "--base", dir, "--tools", EXAMPLE_TOOLS_PATH]);
}, 120_000);

afterAll(async () => {
  await mcp?.close();
  await server.stop();
  await cleanup(dir);
});

it("run_code runs on the remote server, with its tools and its process", async () => {
  mcp = await connectStdio(["--remote", server.url, "--remote-token", TOKEN, "--base", dir], { cwd: dir });
  const run = await callTool(mcp.client, "run_code", { code: "[(await tools.echo.say({ text: ['remote'] })).trim(), process.ppid]" });
  const result = structuredOf<{ ok: boolean; value: [string, number] }>(run);
  expect(result.ok).toBe(true);
  expect(result.value[0]).toBe("remote");
  // The code's process is a child of the serve process, not of the MCP server.
  expect(result.value[1]).toBe(server.child.pid);
});
