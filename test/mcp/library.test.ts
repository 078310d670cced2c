/** The MCP server as a library: createCodeModeServer over an in-memory transport, serveHttp's options. */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { createCodeModeServer, McpAuthConfigError, serveHttp, type HttpServing } from "../../src/mcp/index.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { callTool, connectHttp, EXAMPLE_TOOLS, structuredOf, textOf } from "./harness.js";

let dir: string;
let storage: FileStorage;
const toClose: Array<{ close(): Promise<unknown> }> = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-mcp-"));
  storage = new FileStorage({ basePath: dir });
});
afterEach(async () => {
  for (const c of toClose.splice(0).reverse()) await c.close().catch(() => undefined);
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

function newSession(): Session {
  const session = new Session({ storage, executor: new InProcessExecutor({ toolsPath: EXAMPLE_TOOLS }) });
  toClose.push(session);
  return session;
}

async function inMemoryClient(session: Session, options: Parameters<typeof createCodeModeServer>[1] = {}): Promise<Client> {
  const { server } = createCodeModeServer(session, options);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1" });
  await client.connect(clientSide);
  toClose.push(client, server);
  return client;
}

describe("createCodeModeServer", () => {
  it("serves the tools of one Session on any transport", async () => {
    const client = await inMemoryClient(newSession(), { maxOutput: 1000 });
    const r = await callTool(client, "run_code", { code: '"z".repeat(5000)' });
    expect(textOf(r).length).toBeLessThanOrEqual(1000);
    expect(structuredOf(r)).toMatchObject({ ok: true });
    expect(structuredOf(r)).not.toHaveProperty("value");
  });

  it("leaves add_dep/remove_dep out with runtimeDeps: false", async () => {
    const client = await inMemoryClient(newSession(), { runtimeDeps: false, surface: "full" });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain("add_dep");
    expect(names).toContain("run_code");
  });

  it("refuses a maxOutput too small for the labels and markers", () => {
    expect(() => createCodeModeServer(newSession(), { maxOutput: 10 })).toThrow(/maxOutput must be a whole number of characters, at least 500/);
  });
});

describe("Session.run({ signal }) (what run_code's cancel uses)", () => {
  it("with the subprocess executor: an abort stops a sync loop like a timeout, and the session goes on", async () => {
    const session = new Session({ storage, executor: new SubprocessExecutor({ toolsPath: EXAMPLE_TOOLS }) });
    toClose.push(session);
    const controller = new AbortController();
    // Aborted once the loop is under way: its first line's output says so (a fixed delay was not
    // enough for the child to start on a loaded machine).
    const running = session.run("console.log('looping'); for (;;) {}", { timeoutMs: 600_000, signal: controller.signal, onOutput: () => controller.abort() });
    const r = await running;
    expect(r.ok).toBe(false);
    expect(r.error).toMatchObject({ name: "CancelledError", message: expect.stringMatching(/cancelled.*variables from earlier runs were lost/) });
    expect(await session.run("1 + 1")).toMatchObject({ ok: true, value: 2 });
    const already = await session.run("2", { signal: AbortSignal.abort() });
    expect(already.error?.name).toBe("CancelledError");
  });
});

describe("serveHttp", () => {
  it("refuses to start on a non-loopback address without a token, before listening", async () => {
    await expect(serveHttp({ port: 0, host: "0.0.0.0", createSession: newSession })).rejects.toThrow(McpAuthConfigError);
  });

  it("closes the least recently used MCP session when maxSessions is reached", async () => {
    const logs: string[] = [];
    const serving: HttpServing = await serveHttp({ port: 0, createSession: newSession, maxSessions: 1, log: (l) => logs.push(l) });
    toClose.push(serving);
    const first = await connectHttp(serving.url);
    toClose.push(first);
    expect(structuredOf(await callTool(first, "run_code", { code: "1" }))).toMatchObject({ value: 1 });
    const second = await connectHttp(serving.url);
    toClose.push(second);
    expect(serving.sessionCount()).toBe(1);
    expect(logs.join("\n")).toMatch(/closing the least recently used one/);
    expect(structuredOf(await callTool(second, "run_code", { code: "2" }))).toMatchObject({ value: 2 });
    await expect(callTool(first, "run_code", { code: "3" })).rejects.toThrow(/404|Session not found/);
  });

  it("at maxSessions, evicts an idle session before one whose run_code is still running", async () => {
    const serving: HttpServing = await serveHttp({ port: 0, createSession: newSession, maxSessions: 2, progressIntervalMs: 20 });
    toClose.push(serving);
    const busy = await connectHttp(serving.url);
    const idle = await connectHttp(serving.url);
    toClose.push(busy, idle);
    let running!: () => void;
    const started = new Promise<void>((r) => (running = r));
    // `busy` is the least recently used (its request came first) but is still being answered.
    const long = busy.callTool({ name: "run_code", arguments: { code: "await new Promise((r) => setTimeout(r, 1500)); 'done'" } }, undefined, { onprogress: () => running() });
    await started;
    expect(structuredOf(await callTool(idle, "run_code", { code: "1" }))).toMatchObject({ value: 1 });
    const third = await connectHttp(serving.url);
    toClose.push(third);
    expect(structuredOf(await long)).toMatchObject({ ok: true, value: "done" });
    await expect(callTool(idle, "run_code", { code: "3" })).rejects.toThrow(/404|Session not found/);
  });

  it("closes every session and stops listening on close()", async () => {
    const serving = await serveHttp({ port: 0, createSession: newSession });
    const client = await connectHttp(serving.url);
    toClose.push(client);
    await callTool(client, "run_code", { code: "1" });
    expect(serving.sessionCount()).toBe(1);
    await serving.close();
    expect(serving.sessionCount()).toBe(0);
    await expect(fetch(serving.url, { method: "POST" })).rejects.toThrow();
  });
});
