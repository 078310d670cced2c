/**
 * The MCP tool YAML: what loads, what each mistake says (file, field path, what is accepted), and
 * `${VAR}` interpolation — which must never print a value.
 */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/errors.js";
import { parseMcpTool } from "../../../src/tools/adapters/mcp/schema.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { removeDir, toolsDir } from "./helpers.js";

const DIR = "/tools";
const parse = (doc: unknown, env: NodeJS.ProcessEnv = {}) => parseMcpTool(doc, "math.yaml", { dir: DIR, env });

function problem(doc: unknown, env: NodeJS.ProcessEnv = {}): string {
  try {
    parse(doc, env);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as Error).message;
  }
  throw new Error("expected a ValidationError");
}

describe("parseMcpTool", () => {
  it("reads a stdio server with defaults", () => {
    const spec = parse({ name: "math", type: "mcp", transport: "stdio", command: "node", args: ["server.mjs", 3] });
    expect(spec).toMatchObject({
      name: "math",
      description: "",
      tags: [],
      timeoutMs: 60_000,
      connectTimeoutMs: 30_000,
      server: { transport: "stdio", command: "node", args: ["server.mjs", "3"], env: {}, cwd: DIR },
      secrets: [],
      source: "math.yaml",
    });
  });

  it("resolves cwd against the YAML file's folder", () => {
    expect(parse({ name: "m", type: "mcp", command: "node", cwd: "servers/x" }).server).toMatchObject({ cwd: path.resolve(DIR, "servers/x") });
    expect(parse({ name: "m", type: "mcp", command: "node", cwd: "/abs" }).server).toMatchObject({ cwd: "/abs" });
  });

  it("reads an http server, timeout in seconds, and infers the transport when absent", () => {
    const spec = parse({ name: "remote", type: "mcp", url: "https://example.com/mcp", timeout: 2.5, connect_timeout: 90, tags: ["a"], description: "Remote" });
    expect(spec).toMatchObject({ timeoutMs: 2500, connectTimeoutMs: 90_000, tags: ["a"], description: "Remote", server: { transport: "http", url: "https://example.com/mcp", headers: {} } });
    expect(parse({ name: "local", type: "mcp", command: "node" }).server.transport).toBe("stdio");
  });

  it("interpolates ${VAR} in env and header values, remembers them as secrets, and keeps $${ literal", () => {
    const env = { TOKEN: "s3cr3t-token", KEY: "k-123" };
    const stdio = parse({ name: "m", type: "mcp", command: "node", env: { API_KEY: "${KEY}", PORT: 8080, LIT: "$${KEY}" } }, env);
    expect(stdio.server).toMatchObject({ env: { API_KEY: "k-123", PORT: "8080", LIT: "${KEY}" } });
    const http = parse({ name: "m", type: "mcp", transport: "http", url: "http://h/mcp", headers: { Authorization: "Bearer ${TOKEN}", "X-Key": "${KEY}" } }, env);
    expect(http.server).toMatchObject({ headers: { Authorization: "Bearer s3cr3t-token", "X-Key": "k-123" } });
    expect(http.secrets).toEqual(["s3cr3t-token", "k-123"]);
  });

  it("an unset variable leaves the tool loadable but unavailable, naming the variable and never printing any value", () => {
    const spec = parse(
      { name: "m", type: "mcp", transport: "http", url: "http://h/mcp", headers: { Authorization: "Bearer ${MISSING_TOKEN}", "X-Other": "${PRESENT}" } },
      { PRESENT: "do-not-print-me" },
    );
    expect(spec.unavailable).toContain("math.yaml");
    expect(spec.unavailable).toContain("headers.Authorization: environment variable MISSING_TOKEN is not set");
    expect(spec.unavailable).not.toContain("do-not-print-me");
    expect(parse({ name: "m", type: "mcp", command: "node", env: { A: "${SET}" } }, { SET: "x" }).unavailable).toBeUndefined();
    // A malformed reference is a broken file, not the host's state.
    expect(problem({ name: "m", type: "mcp", command: "node", env: { A: "${not valid}" } })).toMatch(/env\.A: \$\{not valid\} is not a valid variable reference/);
  });

  it("does not quote a header value that has the wrong type", () => {
    const msg = problem({ name: "m", type: "mcp", url: "http://h/mcp", headers: { Authorization: { token: "hidden-value" } } });
    expect(msg).toMatch(/headers\.Authorization: expected a string/);
    expect(msg).not.toContain("hidden-value");
  });

  it("reports a missing command for stdio with the accepted shape", () => {
    const msg = problem({ name: "math", type: "mcp", transport: "stdio", args: ["x"] });
    expect(msg).toBe("Invalid tool definition in math.yaml:\n  command: expected the server's executable (e.g. node, npx, uvx, or a path); got nothing");
  });

  it("reports a bad or missing transport", () => {
    expect(problem({ name: "m", type: "mcp", transport: "websocket", url: "ws://x" })).toMatch(/transport: expected one of stdio, http \(http means Streamable HTTP\); got string "websocket"/);
    expect(problem({ name: "m", type: "mcp" })).toMatch(/transport: expected one of stdio, http; got nothing\. stdio needs command/);
    expect(problem({ name: "m", type: "mcp", command: "node", url: "http://x" })).toMatch(/both command and url/);
  });

  it("reports a bad url", () => {
    expect(problem({ name: "m", type: "mcp", transport: "http", url: "not a url" })).toMatch(/url: expected an absolute http:\/\/ or https:\/\/ URL.*got string "not a url"/);
    expect(problem({ name: "m", type: "mcp", transport: "http", url: "ftp://host/mcp" })).toMatch(/url: expected an http:\/\/ or https:\/\/ URL; got the scheme "ftp:"/);
    expect(problem({ name: "m", type: "mcp", transport: "http" })).toMatch(/url: expected the server's URL/);
  });

  it("lists the accepted keys for a key of the other transport, and reports every problem at once", () => {
    const msg = problem({ name: "bad-name", type: "mcp", transport: "stdio", command: "node", url: "http://x", timeout: -1, args: "server.js" });
    expect(msg).toMatch(/unknown key 'url'; accepted: name, type, description, tags, timeout, connect_timeout, transport, command, args, env, cwd/);
    expect(msg).toMatch(/timeout: expected a positive number of seconds/);
    expect(msg).toMatch(/args: expected a list of arguments/);
  });

  it("checks the tool name like every other tool", () => {
    expect(problem({ name: "list", type: "mcp", command: "node" })).toMatch(/name: tool name 'list' is reserved/);
  });
});

describe("loading through the registry", () => {
  let dir: string | undefined;
  afterEach(async () => {
    await removeDir(dir);
    dir = undefined;
  });

  it("does not start anything at load, and reports a YAML problem with the file's path", async () => {
    dir = await toolsDir({
      lazy: { name: "lazy", type: "mcp", command: "/definitely/not/here" },
      broken: { name: "broken", type: "mcp", transport: "stdio", env: { K: "${TCM_TEST_UNSET_VARIABLE_X}" } },
    });
    const err = await ToolRegistry.load(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    const msg = (err as Error).message;
    expect(msg).toContain(path.join(dir, "broken.yaml"));
    expect(msg).toContain("command: expected the server's executable");
    expect(msg).not.toContain("lazy.yaml");
  });

  it("a server whose ${VAR} is unset does not stop the other tools: it is listed as unavailable and fails on use", async () => {
    dir = await toolsDir({
      needs_key: { name: "needs_key", type: "mcp", command: "/definitely/not/here", env: { K: "${TCM_TEST_UNSET_VARIABLE_X}" } },
      echo: { name: "echo", command: "echo", schema: { positional: [{ name: "text", type: "array" }] } },
    });
    const registry = await ToolRegistry.load(dir);
    try {
      expect(registry.names()).toEqual(["echo", "needs_key"]);
      expect(await registry.call("echo", null, { text: ["still", "works"] })).toBe("still works\n");
      const listed = (await registry.list()).find((t) => t.name === "needs_key");
      expect(listed?.description).toMatch(/^\(unavailable: MCP server 'needs_key' cannot start: env\.K: environment variable TCM_TEST_UNSET_VARIABLE_X is not set/);
      await expect(registry.info("needs_key")).rejects.toMatchObject({ name: "ToolError", code: "DEPENDENCY" });
    } finally {
      await registry.close();
    }
  });

  it("loads a server that does not exist without touching it (it fails on first use)", async () => {
    dir = await toolsDir({ lazy: { name: "lazy", type: "mcp", command: "/definitely/not/here" } });
    const registry = await ToolRegistry.load(dir);
    try {
      expect(registry.names()).toEqual(["lazy"]);
      await expect(registry.info("lazy")).rejects.toMatchObject({
        name: "ToolError",
        code: "DEPENDENCY",
        message: expect.stringMatching(/MCP server 'lazy' \(command '\/definitely\/not\/here'\) could not be started: the executable '\/definitely\/not\/here' does not exist/),
      });
    } finally {
      await registry.close();
    }
  });
});
