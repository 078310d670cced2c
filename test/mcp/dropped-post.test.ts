/**
 * mcp --http: a client that drops its POST without `notifications/cancelled` stops its run, and the
 * session's next run_code does not wait for it (issue 35, "Also"). A real server process, a raw
 * HTTP client that closes the connection once the server has taken the request.
 */
import http from "node:http";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { callTool, cleanup, connectHttp, ensureBuilt, startHttpServer, structuredOf, tempDir, type HttpServerProcess } from "./harness.js";

let dir: string;
let server: HttpServerProcess | undefined;
let client: Client | undefined;

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
}, 300_000);
afterAll(async () => {
  await client?.close().catch(() => undefined);
  await server?.stop();
  await cleanup(dir);
});

/** POSTs a run_code on `sessionId` and closes the connection as soon as the server answers with headers. */
function postAndDrop(url: string, sessionId: string, code: string): Promise<void> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 99, method: "tools/call", params: { name: "run_code", arguments: { code, timeout_ms: 600_000 } } });
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": sessionId } }, (res) => {
      expect(res.statusCode).toBe(200);
      // The server has taken the request (it answers once it handed it on); the client gives up.
      req.destroy();
      resolve();
    });
    req.on("error", (err) => (req.destroyed ? undefined : reject(err)));
    req.end(body);
  });
}

it("stops the run of a POST whose client went away, and the next run_code does not wait for it", async () => {
  server = await startHttpServer(["--base", "base"], { cwd: dir });
  client = await connectHttp(server.url);
  expect(structuredOf(await callTool(client, "run_code", { code: "var kept = 41; kept" }))).toMatchObject({ value: 41 });
  const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId as string;

  // Would wait ten minutes: only the dropped connection can end it.
  await postAndDrop(server.url, sessionId, "await new Promise(() => {})");
  const next = await client.callTool({ name: "run_code", arguments: { code: "kept + 1" } }, undefined, { timeout: 120_000 });
  expect(structuredOf(next)).toMatchObject({ ok: true, value: 42 });
}, 300_000);
