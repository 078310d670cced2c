/**
 * The MCP setup of docs/mcp.md and the README, followed as a new user would: the Claude Desktop JSON
 * block is read out of docs/mcp.md, its placeholder paths replaced with real ones, and the exact
 * command and args are started by the SDK's stdio client; so is the server command of the README's
 * `claude mcp add` line.
 */
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { docCommands, markedShellBlock, readDoc, shellWords } from "../helpers/docs.js";
import { spawnListening, type ListeningProcess } from "../cli/harness.js";
import { baseWithExampleTools, callTool, cleanup, connectHttp, connectStdio, ensureBuilt, REPO, structuredOf, tempDir, type StdioConnection } from "./harness.js";

let dir: string;
let conn: StdioConnection | undefined;

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await conn?.close();
  conn = undefined;
  await cleanup(dir);
});

/** docs/mcp.md, the page on the MCP server. */
const mcpSection = () => readDoc("docs/mcp.md");

/** The placeholders a user replaces: the clone's folder and the base folder. */
const withRealPaths = (args: string[], base: string) => args.map((a) => a.replace("/abs/path/dist/", `${REPO}/dist/`).replace("/abs/path/.code-mode", base));

interface DesktopConfig {
  mcpServers: Record<string, { command: string; args: string[] }>;
}

async function desktopConfig(): Promise<DesktopConfig> {
  const blocks = [...(await mcpSection()).matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  const block = blocks.find((b) => b.includes('"mcpServers"'));
  expect(block, "a ```json block with mcpServers").toBeDefined();
  return JSON.parse(block!) as DesktopConfig;
}

describe("docs/mcp.md and README: MCP server setup", () => {
  it("the Claude Desktop config starts a server the SDK client can use", async () => {
    const base = await baseWithExampleTools(dir);
    const entry = (await desktopConfig()).mcpServers["ts-code-mode"];
    expect(entry).toBeDefined();
    const args = withRealPaths(entry!.args, base);
    expect(args.join(" ")).not.toContain("/abs/path");
    conn = await connectStdio([], { cwd: dir, command: entry!.command, fullArgs: args });
    const r = await callTool(conn.client, "run_code", { code: 'await tools.echo.say({ text: ["from", "the", "readme"] })' });
    expect(structuredOf(r)).toMatchObject({ ok: true, value: "from the readme\n" });
  });

  it("the first claude mcp add line works from a clone: the Desktop config's command line", async () => {
    const section = await mcpSection();
    const line = /^\s*claude mcp add ts-code-mode -- (.+)$/m.exec(section)?.[1];
    expect(line, "a `claude mcp add ts-code-mode -- ...` line").toBeDefined();
    const desktop = (await desktopConfig()).mcpServers["ts-code-mode"]!;
    expect(line!.split(/\s+/)).toEqual([desktop.command, ...desktop.args]);
    // npx needs the package on the registry: it may be shown only as the published form.
    for (const npx of section.split("\n").filter((l) => l.includes("npx") && l.includes("ts-code-mode mcp"))) expect(npx).toMatch(/once published/i);
  });

  it("the README's claude mcp add line: the server command it registers starts and runs code", async () => {
    const readme = await readDoc("README.md");
    const block = /<!-- docs: run by test\/mcp\/readme\.test\.ts -->\n```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    const line = /^claude mcp add ts-code-mode -- (.+)$/m.exec(block ?? "")?.[1];
    expect(line, "a `claude mcp add ts-code-mode -- ...` line in the README's MCP block").toBeDefined();
    // The same line as docs/mcp.md's first one, so both pages register the server the same way.
    expect(/^\s*claude mcp add ts-code-mode -- (.+)$/m.exec(await mcpSection())?.[1]).toBe(line);
    const [command, ...args] = line!.split(/\s+/);
    conn = await connectStdio([], { cwd: dir, command: command!, fullArgs: withRealPaths(args, await baseWithExampleTools(dir)) });
    const r = await callTool(conn.client, "run_code", { code: "await workflows.list()" });
    expect(structuredOf(r)).toMatchObject({ ok: true });
  });

  it("the HTTP block, as written: a loopback server without a token, then one on 0.0.0.0 with the exported token, reached by the claude line's URL and header", async () => {
    const lines = docCommands(await markedShellBlock("docs/mcp.md", "test/mcp/readme.test.ts"));
    expect(lines).toHaveLength(3);
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env["TS_CODE_MODE_TOKEN"];
    // Port 8765 may be taken here: each server gets a free one.
    const onFreePort = (args: string[]) => args.map((a, i) => (args[i - 1] === "--http" ? "0" : a));
    const servers: ListeningProcess[] = [];
    try {
      const [, ...loopbackArgs] = await shellWords(lines[0]!, { cwd: dir, env });
      const loopback = await spawnListening(onFreePort(loopbackArgs), { what: "mcp --http", cwd: dir, env });
      servers.push(loopback);
      const plain = await connectHttp(loopback.url);
      expect((await plain.listTools()).tools.map((x) => x.name)).toEqual(["run_code"]);
      await plain.close();

      const exported = /^export TS_CODE_MODE_TOKEN=(.+)$/.exec(lines[1]!)?.[1];
      expect(exported, "the block exports the token").toBeDefined();
      env["TS_CODE_MODE_TOKEN"] = (await shellWords(exported!, { cwd: dir, env }))[0];
      const [, ...openArgs] = await shellWords(lines[2]!, { cwd: dir, env });
      const open = await spawnListening(onFreePort(openArgs), { what: "mcp --http --host 0.0.0.0", cwd: dir, env });
      servers.push(open);
      const port = new URL(open.url).port;

      // What `claude mcp add` would be given: its URL (on this port) and its header, the variable expanded.
      const claude = docCommands(await readDoc("docs/mcp.md").then((doc) => /<!-- docs: not run: needs the claude CLI[^\n]*\n```sh\n([\s\S]*?)```/.exec(doc)?.[1] ?? ""))[0];
      const words = await shellWords(claude!, { cwd: dir, env });
      const url = words.find((w) => w.startsWith("http://"))!.replace(":8765/", `:${port}/`);
      const header = words[words.indexOf("--header") + 1]!;
      expect(header).toBe(`Authorization: Bearer ${env["TS_CODE_MODE_TOKEN"]}`);
      await expect(connectHttp(url)).rejects.toThrow(/401|Unauthorized|token/i);
      const client = await connectHttp(url, header.replace("Authorization: Bearer ", ""));
      const r = await callTool(client, "run_code", { code: "1 + 1" });
      expect(structuredOf(r)).toMatchObject({ ok: true, value: 2 });
      await client.close();
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }, 120_000);

  it("lists every MCP tool the server offers and every flag of the command", async () => {
    const section = await mcpSection();
    conn = await connectStdio(["--base", path.join(dir, "base"), "--surface", "full"], { cwd: dir });
    for (const tool of (await conn.client.listTools()).tools) expect(section).toContain(`\`${tool.name}`);
    for (const flag of ["--base", "--tools", "--storage", "--redis", "--prefix", "--workspace", "--executor", "--timeout", "--no-runtime-deps", "--max-output", "--http", "--host", "--token", "--no-auth", "--surface", "--idle-timeout", "--require-approval"]) {
      expect(section).toContain(`\`${flag}`);
    }
  });
});
