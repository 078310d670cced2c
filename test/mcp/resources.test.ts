/** Workflows and artifacts as MCP resources: paginated list, templates, reads, list_changed; over stdio and HTTP. */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ResourceListChangedNotificationSchema, type Resource } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { callTool, cleanup, connectHttp, connectStdio, ensureBuilt, startHttpServer, structuredOf, tempDir, waitUntil } from "./harness.js";

let dir: string;
const toClose: Array<() => Promise<unknown>> = [];

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  for (const close of toClose.splice(0).reverse()) await close().catch(() => undefined);
  await cleanup(dir);
});

const connect: Record<string, () => Promise<Client>> = {
  stdio: async () => {
    const conn = await connectStdio(["--base", "base"], { cwd: dir });
    toClose.push(() => conn.close());
    return conn.client;
  },
  http: async () => {
    const server = await startHttpServer(["--base", "base"], { cwd: dir });
    toClose.push(() => server.stop());
    const client = await connectHttp(server.url);
    toClose.push(() => client.close());
    return client;
  },
};

async function run(client: Client, code: string): Promise<void> {
  expect(structuredOf(await callTool(client, "run_code", { code }))).toMatchObject({ ok: true });
}

async function listAll(client: Client): Promise<{ resources: Resource[]; pages: number }> {
  const resources: Resource[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listResources(cursor !== undefined ? { cursor } : {});
    resources.push(...page.resources);
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined);
  return { resources, pages };
}

describe.each(Object.keys(connect))("mcp over %s: resources", (transport) => {
  it("lists workflows then artifacts in pages of 100 and reads each kind", async () => {
    const client = await connect[transport]!();
    await run(
      client,
      `await workflows.create({ name: "triple", source: "/** Triple a number. */\\nexport async function run({ n }: { n: number }) { return n * 3; }\\n" });
for (let i = 0; i < 120; i++) await artifacts.save("notes/" + String(i).padStart(3, "0") + ".txt", "note " + i, { description: "note " + i });
await artifacts.save("data.json", { hosts: 3 });
await artifacts.save("blob.bin", new Uint8Array([1, 2, 3]));`,
    );
    const { resources, pages } = await listAll(client);
    expect(pages).toBe(2);
    expect(resources).toHaveLength(123);
    expect(resources[0]).toMatchObject({ uri: "workflow://triple", name: "triple", description: "Triple a number.", mimeType: "text/x-typescript" });
    expect(resources.map((r) => r.uri)).toContain("artifact://notes/007.txt");
    expect(resources.find((r) => r.uri === "artifact://data.json")).toMatchObject({ mimeType: "application/json" });

    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(["workflow://{name}", "artifact://{name}", "skill://{name}/SKILL.md", "skill://{name}/{+path}"]);

    const source = await client.readResource({ uri: "workflow://triple" });
    expect(source.contents[0]).toMatchObject({ mimeType: "text/x-typescript", text: expect.stringContaining("return n * 3") });
    expect((await client.readResource({ uri: "artifact://notes/007.txt" })).contents[0]).toMatchObject({ text: "note 7", mimeType: "text/plain" });
    // The template's percent-encoded form of the same name.
    expect((await client.readResource({ uri: "artifact://notes%2F007.txt" })).contents[0]).toMatchObject({ text: "note 7" });
    expect(JSON.parse(((await client.readResource({ uri: "artifact://data.json" })).contents[0] as { text: string }).text)).toEqual({ hosts: 3 });
    expect((await client.readResource({ uri: "artifact://blob.bin" })).contents[0]).toMatchObject({ blob: Buffer.from([1, 2, 3]).toString("base64") });
  });

  it("a missing resource is an error naming the closest names; a bad cursor is an error", async () => {
    const client = await connect[transport]!();
    await run(client, 'await artifacts.save("report.txt", "r")');
    await expect(client.readResource({ uri: "artifact://reprot.txt" })).rejects.toThrow(/report\.txt/);
    await expect(client.readResource({ uri: "workflow://nope" })).rejects.toThrow(/No workflow named "nope"/);
    await expect(client.readResource({ uri: "file:///etc/passwd" })).rejects.toThrow(/Unknown resource/);
    await expect(client.listResources({ cursor: "garbage" })).rejects.toThrow(/Invalid cursor/);
  });

  it("tells a client that listed resources when a run changed the list", async () => {
    const client = await connect[transport]!();
    let changed = 0;
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      changed++;
    });
    expect((await client.listResources()).resources).toEqual([]);
    await run(client, "1 + 1");
    await run(client, 'await artifacts.save("new.txt", "hello")');
    await waitUntil(() => changed === 1, "a resources/list_changed notification");
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(["artifact://new.txt"]);
  });
});
