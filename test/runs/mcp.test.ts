/** run_code of a durable session's MCP server: the pause is explained, and `resume` goes on. */
import { rm } from "node:fs/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createCodeModeServer } from "../../src/mcp/index.js";
import { FileStorage, InProcessExecutor, Session } from "../../src/index.js";
import { callTool, structuredOf, textOf } from "../mcp/harness.js";
import { journalFixture, SECRET, type JournalFixture } from "./fixture.js";

let fx: JournalFixture;
beforeAll(async () => {
  fx = await journalFixture();
});
afterAll(async () => {
  await rm(fx.dir, { recursive: true, force: true, maxRetries: 5 });
});

test("run_code returns the pause with a readable explanation and accepts resume", async () => {
  const session = new Session({ storage: new FileStorage({ basePath: fx.storage }), executor: new InProcessExecutor({ toolsPath: fx.tools }), durable: { secret: SECRET } });
  const { server } = createCodeModeServer(session);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1" });
  await client.connect(clientSide);
  const code = `await tools.journal.add({ line: "a" }); (await tools.journal.pay({ line: "p" })).trim()`;
  const paused = await callTool(client, "run_code", { code });
  expect(paused.isError).toBe(true);
  expect(textOf(paused)).toMatch(/The run paused: 1 call waits for a decision[\s\S]*call-1: tools\.journal\.pay\(\{"line":"p"\}\) — payments need a human's approval[\s\S]*call run_code again with resume/);
  const s = structuredOf(paused) as { status: string; continuation: string; pending: Array<{ id: string }> };
  expect(s.status).toBe("paused");
  const done = await callTool(client, "run_code", { code, resume: { continuation: s.continuation, decisions: [{ id: "call-1", decision: "approve" }] } });
  expect(structuredOf(done)).toMatchObject({ ok: true, status: "completed", value: "2" });
  const again = await callTool(client, "run_code", { code, resume: { continuation: s.continuation, decisions: [{ id: "call-1", decision: "approve" }] } });
  expect(again.isError).toBe(true);
  expect(textOf(again)).toMatch(/ContinuationUsedError|already used/);
  await client.close();
  await server.close();
  await session.close();
}, 60_000);
