/**
 * The MCP adapter over Streamable HTTP against the fixture server's HTTP mode (a real child process
 * on a free port): calls, header interpolation from the environment, credentials that are wrong,
 * a server that goes away and one that comes back without our session.
 */
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../../src/execution/in-process/executor.js";
import { Session } from "../../../src/session.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { removeDir, startHttpFixture, toolsDir, type HttpFixture } from "./helpers.js";

const KEY = "http-fixture-key-7f3a9";
const KEY_VAR = "TCM_MCP_TEST_HTTP_KEY";

function httpTool(name: string, url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, type: "mcp", description: "Fixture over HTTP", transport: "http", url, headers: { "x-api-key": `\${${KEY_VAR}}` }, ...extra };
}

describe("an MCP server over Streamable HTTP", () => {
  let fixture: HttpFixture;
  const cleanup: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    process.env[KEY_VAR] = KEY;
    fixture = await startHttpFixture({ requireKey: KEY });
  });
  afterAll(async () => {
    delete process.env[KEY_VAR];
    await fixture.stop();
  });
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  async function registryFor(tools: Record<string, Record<string, unknown>>): Promise<ToolRegistry> {
    const dir = await toolsDir(tools);
    const registry = await ToolRegistry.load(dir);
    cleanup.push(async () => {
      await registry.close();
      await removeDir(dir);
    });
    return registry;
  }

  it("calls tools through a Session, sending the interpolated header", async () => {
    const toolsPath = await toolsDir({ remote: httpTool("remote", fixture.url) });
    const storagePath = await mkdtemp(path.join(os.tmpdir(), "tcm-mcp-store-"));
    const session = new Session({ storage: new FileStorage({ basePath: storagePath }), executor: new InProcessExecutor({ toolsPath }) });
    cleanup.push(async () => {
      await session.close();
      await removeDir(toolsPath);
      await removeDir(storagePath);
    });
    const r = await session.run('[await tools.remote.add({ a: 2, b: 3 }), await tools.remote.whoami(), await tools.remote["get-weather"]({ city: "Rome" })]');
    expect(r.error).toBeNull();
    expect(r.value).toEqual([{ sum: 5 }, KEY, "Sunny in Rome"]);
    const described = await session.describeTool("remote");
    expect(described).toContain("add(args: remote.AddArgs): Promise<{ sum: number }>;");
  });

  it("reports isError and timeouts the same way as over stdio", async () => {
    const registry = await registryFor({ remote: httpTool("remote", fixture.url, { timeout: 0.3 }) });
    await expect(registry.call("remote", "fail", { message: "nope" })).rejects.toMatchObject({ code: "INTERNAL", message: "tools.remote.fail failed: nope" });
    await expect(registry.call("remote", "slow", { ms: 3_000 })).rejects.toMatchObject({ code: "TIMEOUT" });
    expect(await registry.call("remote", "add", { a: 1, b: 1 })).toEqual({ sum: 2 });
  });

  it("a rejected credential is PERMISSION, and the header value never appears", async () => {
    process.env["TCM_MCP_TEST_WRONG_KEY"] = "wrong-key-value-x1";
    try {
      const registry = await registryFor({ denied: { ...httpTool("denied", fixture.url), headers: { "x-api-key": "${TCM_MCP_TEST_WRONG_KEY}" } } });
      const err = (await registry.info("denied").catch((e: unknown) => e)) as Error & { code?: string };
      expect(err.name).toBe("ToolError");
      expect(err.code).toBe("PERMISSION");
      expect(err.message).toMatch(/MCP server 'denied' \(URL http:\/\/127\.0\.0\.1:\d+\/mcp\) could not be reached: the server answered HTTP 401/);
      expect(err.message).not.toContain("wrong-key-value-x1");
      expect(err.message).not.toContain(KEY);
    } finally {
      delete process.env["TCM_MCP_TEST_WRONG_KEY"];
    }
  });

  it("an unreachable URL is a DEPENDENCY error naming the URL", async () => {
    const gone = await startHttpFixture();
    const url = gone.url;
    await gone.stop();
    const registry = await registryFor({ gone: { name: "gone", type: "mcp", url } });
    await expect(registry.info("gone")).rejects.toMatchObject({
      code: "DEPENDENCY",
      message: expect.stringContaining(`MCP server 'gone' (URL ${url}) could not be reached`),
    });
  });

  it("starts a new session when the server restarted and forgot ours", async () => {
    const first = await startHttpFixture();
    let second: HttpFixture | null = null;
    cleanup.push(async () => {
      await first.stop();
      await second?.stop();
    });
    const registry = await registryFor({ flaky: { name: "flaky", type: "mcp", url: first.url } });
    const before = (await registry.call("flaky", "pid", {})) as { pid: number };
    await first.stop();
    // Restart on the same port: a fresh process that knows nothing of the old session.
    second = await startHttpFixture({ port: first.port });
    const after = (await registry.call("flaky", "pid", {})) as { pid: number };
    expect(after.pid).not.toBe(before.pid);
    expect(after.pid).toBe(second.child.pid);
  });
});
