/**
 * A public MCP server we did not write: @modelcontextprotocol/server-everything (devDependency),
 * started offline over stdio as `node <package>/dist/index.js stdio`.
 */
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../../src/execution/in-process/executor.js";
import { Session } from "../../../src/session.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import { McpToolAdapter } from "../../../src/tools/adapters/mcp/adapter.js";
import { EVERYTHING_SERVER, NODE, isAlive, removeDir, toolsDir, typeErrors, waitFor } from "./helpers.js";

describe("@modelcontextprotocol/server-everything over stdio", () => {
  let session: Session;
  let toolsPath: string;
  let storagePath: string;

  beforeAll(async () => {
    toolsPath = await toolsDir({
      everything: { name: "everything", type: "mcp", transport: "stdio", command: NODE, args: [EVERYTHING_SERVER, "stdio"], tags: ["demo"] },
    });
    storagePath = await mkdtemp(path.join(os.tmpdir(), "tcm-mcp-store-"));
    session = new Session({ storage: new FileStorage({ basePath: storagePath }), executor: new InProcessExecutor({ toolsPath, defaultTimeoutMs: 30_000 }) });
    await session.start();
  });
  afterAll(async () => {
    await session.close();
    await removeDir(toolsPath);
    await removeDir(storagePath);
  });

  it("lists its tools with signatures, and its description comes from the server", async () => {
    const [everything] = await session.listTools();
    expect(everything?.name).toBe("everything");
    expect(everything?.description).not.toBe("");
    const sig = Object.fromEntries(everything!.callables.map((c) => [c.name, c.signature]));
    expect(sig["echo"]).toBe("echo(args: { message: string }): Promise<unknown>");
    expect(sig["get-sum"]).toBe("get-sum(args: { a: number; b: number }): Promise<unknown>");
    expect(sig["get-structured-content"]).toBe('get-structured-content(args: { location: "New York" | "Chicago" | "Los Angeles" }): Promise<{ temperature: number; conditions: string; humidity: number }>');
    expect(typeErrors(await session.describeTool("everything"))).toEqual([]);
  });

  it("calls echo, get-sum and a structured tool through tools.everything", async () => {
    const r = await session.run(`[
      await tools.everything.echo({ message: "hi" }),
      await tools.everything["get-sum"]({ a: 2, b: 40 }),
      (await tools.everything["get-structured-content"]({ location: "Chicago" })).conditions,
    ]`);
    expect(r.error).toBeNull();
    const [echo, sum, conditions] = r.value as [string, string, string];
    expect(echo).toBe("Echo: hi");
    expect(sum).toMatch(/\b42\b/);
    expect(typeof conditions).toBe("string");
  });

  it("returns image content as the content array", async () => {
    const r = await session.run('(await tools.everything["get-tiny-image"]()).map((c) => c.type)');
    expect(r.value).toContain("image");
  });

  it("rejects a value outside an enum before calling", async () => {
    const r = await session.run('await tools.everything["get-structured-content"]({ location: "Paris" })');
    expect(r.error).toMatchObject({ name: "ToolError", message: expect.stringMatching(/'location' expected one of "New York", "Chicago", "Los Angeles"/) });
  });

  it("does not see the host's environment beyond the safe variables", async () => {
    const r = await session.run('await tools.everything["get-env"]()');
    const env = r.value as Record<string, string>;
    expect(Object.keys(env)).toContain("PATH");
    expect(Object.keys(env).filter((k) => k.startsWith("VITEST"))).toEqual([]);
  });

  it("leaves no process behind after close (checked by the adapter's pid)", async () => {
    const adapter = McpToolAdapter.fromDocument(
      { name: "everything", type: "mcp", command: NODE, args: [EVERYTHING_SERVER, "stdio"] },
      { file: "everything.yaml", dir: toolsPath },
    );
    expect(adapter.pid).toBeNull(); // lazy: nothing runs before first use
    expect(await adapter.call("echo", { message: "pid?" }, {})).toBe("Echo: pid?");
    const pid = adapter.pid;
    expect(isAlive(pid)).toBe(true);
    await adapter.close();
    expect(adapter.pid).toBeNull();
    await waitFor(() => !isAlive(pid), `server-everything ${pid} to exit`);
    await expect(adapter.call("echo", { message: "x" }, {})).rejects.toMatchObject({ code: "INTERNAL", message: "MCP tool 'everything' is closed" });
  });
});
