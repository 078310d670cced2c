/**
 * Toolable tools behind the built CLI and MCP server: `run` prints a tool's streamed events on
 * stderr; the MCP server answers a tool's sampling request through the client's model
 * (`sampling/createMessage`) when the client declares sampling, refuses it (an error the tool
 * reports, no hang) when it does not, and forwards the events as logging notifications.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateMessageRequestSchema, LoggingMessageNotificationSchema, type CreateMessageRequest } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanup, connectHttp, connectStdio, ensureBuilt, runCli, startHttpServer, structuredOf, tempDir } from "../../mcp/harness.js";
import { PYTOOL } from "./fixture.js";

let dir: string;
const toClose: Array<() => Promise<unknown>> = [];

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
  await mkdir(path.join(dir, "base", "tools"), { recursive: true });
  await writeFile(path.join(dir, "base", "tools", "py.yaml"), `type: toolable\ndiscover_timeout: 60\nname: py\ncommand: ${JSON.stringify(PYTOOL)}\n`);
});
afterEach(async () => {
  for (const close of toClose.splice(0).reverse()) await close().catch(() => undefined);
  await cleanup(dir);
});

describe("toolable in the CLI and the MCP server", () => {
  it("run prints the tool's progress events on stderr; stdout has the result", async () => {
    const r = await runCli(["run", "--base", "base", "--json", "await tools.py.count({ to: 2 })"], { cwd: dir, timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, value: { counted: 2 } });
    expect(r.stderr).toContain("[tools.py.count] progress 50%: counted 1");
    expect(r.stderr).toContain("[tools.py.count] artifact count.txt: file:///tmp/count.txt");
  });

  it("MCP: sampling goes to a client that supports it; events arrive as logging notifications", async () => {
    const client = new Client({ name: "sampler", version: "1" }, { capabilities: { sampling: {} } });
    const asked: CreateMessageRequest["params"][] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(request.params);
      return { role: "assistant", model: "test-model", content: { type: "text", text: "four" } };
    });
    const logs: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      if (n.params.logger === "toolable") logs.push(String(n.params.data));
    });
    const conn = await connectStdio(["--base", "base"], { cwd: dir, client });
    toClose.push(() => conn.close());
    const r = await client.callTool({ name: "run_code", arguments: { code: "[await tools.py.ask({ question: '2+2?' }), await tools.py.count({ to: 2 })]" } }, undefined, { onprogress: () => {} });
    expect(structuredOf(r)).toMatchObject({ ok: true, value: [{ answer: "four" }, { counted: 2 }] });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ messages: [{ role: "user", content: { type: "text", text: "2+2?" } }], maxTokens: 1000, systemPrompt: "Be brief" });
    expect(logs).toContain("[tools.py.count] progress 100%: counted 2");
  });

  it("MCP: a client without sampling gets the tool's error, not a hang", async () => {
    const conn = await connectStdio(["--base", "base"], { cwd: dir });
    toClose.push(() => conn.close());
    const r = await conn.client.callTool({ name: "run_code", arguments: { code: "let v; try { await tools.py.ask({ question: 'x' }) } catch (e) { v = [e.code, e.message] } v" } });
    const value = structuredOf<{ value: [string, string] }>(r).value;
    expect(value[0]).toBe("DEPENDENCY");
    expect(value[1]).toContain("does not support sampling");
  });

  it("MCP over HTTP: sampling goes to the client of the session that ran the code", async () => {
    const server = await startHttpServer(["--base", "base"], { cwd: dir });
    toClose.push(() => server.stop());
    const client = new Client({ name: "sampler", version: "1" }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const first = request.params.messages[0]?.content;
      return { role: "assistant", model: "m", content: { type: "text", text: `http says ${first && "text" in first ? String(first.text) : "?"}` } };
    });
    await connectHttp(server.url, undefined, client);
    toClose.push(() => client.close());
    const r = await client.callTool({ name: "run_code", arguments: { code: "await tools.py.ask({ question: 'ping' })" } });
    expect(structuredOf(r)).toMatchObject({ ok: true, value: { answer: "http says ping" } });
  });
});
