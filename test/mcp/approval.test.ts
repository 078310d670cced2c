/**
 * `mcp --require-approval GLOB`: a matching tool call made by the agent's code waits for the user,
 * asked through MCP elicitation by a client that supports it (approve and reject paths, over stdio
 * and HTTP), and is refused with the documented reason by a client that does not. The run's
 * deadline is held while the user decides.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CancelledNotificationSchema, ElicitRequestSchema, type ElicitRequest, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { baseWithExampleTools, callTool, cleanup, connectHttp, connectStdio, ensureBuilt, startHttpServer, structuredOf, tempDir, textOf } from "./harness.js";

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

/** A client that answers every elicitation with `answer` (after `delayMs`), recording the questions. */
function elicitingClient(answer: ElicitResult, delayMs = 0): { client: Client; asked: ElicitRequest["params"][] } {
  const client = new Client({ name: "approver", version: "1" }, { capabilities: { elicitation: {} } });
  const asked: ElicitRequest["params"][] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    await new Promise((r) => setTimeout(r, delayMs));
    return answer;
  });
  return { client, asked };
}

const ARGS = ["--base", "base", "--require-approval", "echo.say"];

const connect: Record<string, (client: Client) => Promise<Client>> = {
  stdio: async (client) => {
    const conn = await connectStdio(ARGS, { cwd: dir, client });
    toClose.push(() => conn.close());
    return conn.client;
  },
  http: async (client) => {
    const server = await startHttpServer(ARGS, { cwd: dir });
    toClose.push(() => server.stop());
    await connectHttp(server.url, undefined, client);
    toClose.push(() => client.close());
    return client;
  },
};

describe.each(Object.keys(connect))("mcp over %s: approval through the client", (transport) => {
  it("asks the user with elicitation; approve runs the call, and calls not matching the glob are not asked", async () => {
    const { client, asked } = elicitingClient({ action: "accept", content: { approve: true } });
    await connect[transport]!(client);
    const r = await callTool(client, "run_code", { code: 'await tools.echo.say({ text: ["approved", "words"] })' });
    expect(structuredOf(r)).toMatchObject({ ok: true, value: "approved words\n" });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.message).toContain("echo.say");
    expect(asked[0]!.message).toContain('"approved"');
    expect(asked[0]).toMatchObject({ requestedSchema: { properties: { approve: { type: "boolean" } } } });
    const raw = await callTool(client, "run_code", { code: 'await tools.echo.raw({ text: ["not asked"] })' });
    expect(structuredOf(raw)).toMatchObject({ ok: true, value: "not asked" });
    expect(asked).toHaveLength(1);
  });

  it("reject with a reason: the call never runs and the agent reads the reason", async () => {
    const { client } = elicitingClient({ action: "accept", content: { approve: false, reason: "not on Fridays" } });
    await connect[transport]!(client);
    const r = await callTool(client, "run_code", { code: 'await tools.echo.say({ text: ["x"] })' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/ToolError: .*echo\.say was not approved: not on Fridays/);
  });

  it("a rejection reason of any length reaches the agent cut to 2,000 characters", async () => {
    const { client } = elicitingClient({ action: "accept", content: { approve: false, reason: "n".repeat(1_000_000) } });
    await connect[transport]!(client);
    const r = await callTool(client, "run_code", { code: 'await tools.echo.say({ text: ["x"] })' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/was not approved: n+\n\[… 998,000 characters cut …\]\nn+/);
    expect(textOf(r)).not.toMatch(/n{2001}/);
  });
});

describe("approval fallback and deadlines", () => {
  it("a client without elicitation: the call is refused and the reason says why", async () => {
    const client = new Client({ name: "plain", version: "1" });
    await connect["stdio"]!(client);
    const r = await callTool(client, "run_code", { code: 'await tools.echo.say({ text: ["x"] })' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/echo\.say was not approved: the MCP client cannot ask its user \(it does not support elicitation\)/);
  });

  it("declining counts as a refusal", async () => {
    const { client } = elicitingClient({ action: "decline" });
    await connect["stdio"]!(client);
    const r = await callTool(client, "run_code", { code: 'await tools.echo.say({ text: ["x"] })' });
    expect(textOf(r)).toMatch(/echo\.say was not approved: the user declined/);
  });

  it("a cancelled run withdraws its open question (notifications/cancelled for it), and the session goes on", async () => {
    const client = new Client({ name: "approver", version: "1" }, { capabilities: { elicitation: {} } });
    let asked!: (id: string | number) => void;
    const question = new Promise<string | number>((r) => (asked = r));
    let withdrawn!: (id: string | number | undefined) => void;
    const withdrawal = new Promise<string | number | undefined>((r) => (withdrawn = r));
    // A user who never answers. (The SDK's own cancel handling ignores a request id of 0, so the
    // test watches for the notification itself.)
    client.setRequestHandler(ElicitRequestSchema, (_request, extra) => {
      asked(extra.requestId);
      return new Promise<ElicitResult>(() => undefined);
    });
    client.setNotificationHandler(CancelledNotificationSchema, (n) => withdrawn(n.params.requestId));
    await connect["stdio"]!(client);
    const controller = new AbortController();
    const call = client.callTool({ name: "run_code", arguments: { code: 'await tools.echo.say({ text: ["x"] })' } }, undefined, { signal: controller.signal });
    const questionId = await question;
    controller.abort("the user pressed stop");
    await expect(call).rejects.toThrow(/stop|abort|cancel/i);
    expect(await withdrawal).toBe(questionId);
    expect(structuredOf(await callTool(client, "run_code", { code: "6 * 7" }))).toMatchObject({ ok: true, value: 42 });
  });

  it("the run's deadline is held while the user decides: a slow approval does not time the run out", async () => {
    // The user takes longer than the run's whole timeout; the code itself needs far less.
    const { client, asked } = elicitingClient({ action: "accept", content: { approve: true } }, 4_000);
    await connect["stdio"]!(client);
    const r = await callTool(client, "run_code", { code: 'await tools.echo.say({ text: ["late", "but", "fine"] })', timeout_ms: 2_500 });
    expect(asked).toHaveLength(1);
    expect(structuredOf(r)).toMatchObject({ ok: true, value: "late but fine\n" });
  });
});
