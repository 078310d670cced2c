/** `ts-code-mode mcp --http`: Streamable HTTP with the SDK's client, bearer tokens, host checks, sessions. */
import http from "node:http";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  baseWithExampleTools,
  callTool,
  cleanup,
  connectHttp,
  ensureBuilt,
  startHttpServer,
  structuredOf,
  tempDir,
  textOf,
  type HttpServerProcess,
} from "./harness.js";

const TOKEN = "test-token-0123456789abcdef";
const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

let dir: string;
let server: HttpServerProcess | undefined;
const clients: Client[] = [];

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.stop();
  server = undefined;
  await cleanup(dir);
});

async function client(url: string, token?: string): Promise<Client> {
  const c = await connectHttp(url, token);
  clients.push(c);
  return c;
}

/** A raw POST of an initialize request, with the headers given. */
function post(url: string, headers: Record<string, string>): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers } },
      (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (d: string) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(INITIALIZE);
  });
}

describe("mcp over Streamable HTTP", () => {
  it("serves the same round trip as stdio: call a tool, save a workflow, search it, delete it", async () => {
    await baseWithExampleTools(dir);
    server = await startHttpServer(["--base", "base", "--surface", "full"], { cwd: dir });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const c = await client(server.url);
    expect((await c.listTools()).tools.map((t) => t.name)).toContain("run_code");

    const run = await callTool(c, "run_code", {
      code: `await workflows.create({ name: "shout", source: "export async function run({ w }: { w: string }) { return (await tools.echo.say({ text: [w.toUpperCase()] })).trim(); }", description: "Shout a word" });
await workflows.shout({ w: "hey" })`,
    });
    expect(structuredOf(run)).toMatchObject({ ok: true, value: "HEY" });
    const found = await callTool(c, "search_workflows", { query: "shout" });
    expect(structuredOf<{ workflows: Array<{ name: string }> }>(found).workflows.map((w) => w.name)).toEqual(["shout"]);
    expect(structuredOf(await callTool(c, "delete_workflow", { name: "shout" }))).toEqual({ name: "shout", deleted: true });
    expect(textOf(await callTool(c, "list_workflows"))).toContain("No workflows saved yet");
  });

  it("gives each HTTP client its own variables over shared storage", async () => {
    server = await startHttpServer(["--base", "base"], { cwd: dir });
    const a = await client(server.url);
    const b = await client(server.url);
    await callTool(a, "run_code", { code: 'const mine = "a"; await artifacts.save("shared.txt", "from a")' });
    const fromB = await callTool(b, "run_code", { code: 'typeof mine + " " + (await artifacts.load("shared.txt"))' });
    expect(structuredOf(fromB)).toMatchObject({ ok: true, value: "undefined from a" });
    expect(structuredOf(await callTool(a, "run_code", { code: "mine" }))).toMatchObject({ value: "a" });
  });

  it("with --token: the right bearer token connects; a wrong or missing one gets 401", async () => {
    server = await startHttpServer(["--base", "base", "--token", TOKEN], { cwd: dir });
    const c = await client(server.url, TOKEN);
    expect(structuredOf(await callTool(c, "run_code", { code: "1 + 2" }))).toMatchObject({ value: 3 });

    const wrong = await post(server.url, { Authorization: `Bearer ${TOKEN}x` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect((await post(server.url, {})).status).toBe(401);
    expect((await post(server.url, { Authorization: TOKEN })).status).toBe(401);
    await expect(connectHttp(server.url, "not-the-token-at-all")).rejects.toThrow(/401|Unauthorized/);
    expect((await post(server.url, { Authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });

  it("takes the token from TS_CODE_MODE_TOKEN when --token is not given", async () => {
    server = await startHttpServer(["--base", "base"], { cwd: dir, env: { ...process.env, TS_CODE_MODE_TOKEN: TOKEN } });
    expect((await post(server.url, {})).status).toBe(401);
    const c = await client(server.url, TOKEN);
    expect(structuredOf(await callTool(c, "run_code", { code: "2 + 2" }))).toMatchObject({ value: 4 });
  });

  it("without a token on loopback: answers only requests addressed to localhost (DNS rebinding)", async () => {
    server = await startHttpServer(["--base", "base"], { cwd: dir });
    expect(server.stderr()).toContain("loopback only, no token");
    expect((await post(server.url, {})).status).toBe(200);
    expect((await post(server.url, { Host: "evil.example:80" })).status).toBe(403);
    expect((await post(server.url, { Origin: "http://evil.example" })).status).toBe(403);
    expect((await post(server.url.replace(/\/mcp$/, "/other"), {})).status).toBe(404);
  });

  it("stops cleanly on SIGTERM", async () => {
    server = await startHttpServer(["--base", "base"], { cwd: dir });
    const c = await client(server.url);
    await callTool(c, "run_code", { code: "1" });
    clients.splice(0);
    // Stopped with an MCP session still open: its Session is closed too, and the process exits 0.
    expect(await server.stop()).toBe(0);
    expect(server.stderr()).toContain("shutting down");
    await c.close().catch(() => undefined);
  });
});
