/**
 * `--sampler provider:model` on `run`, `mcp` and `serve`: a toolable tool's sampling request is
 * answered by that model (a fake OpenAI API on 127.0.0.1 behind the real @ai-sdk/openai provider);
 * a missing key, a malformed model and --sampler with --remote are usage errors (exit 2).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../agents/fake-openai.js";
import { startServe, TOKEN } from "../server/harness.js";
import { PYTOOL } from "../tools/toolable/fixture.js";
import { runCli } from "../mcp/harness.js";
import { cleanup, ensureBuilt, MAIN, tempDir, type CliResult } from "./harness.js";

let dir: string;
let tools: string;
let fake: FakeOpenAI;
let env: NodeJS.ProcessEnv;
const ASK = "await tools.py.ask({ question: '2+2?' })";

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  tools = path.join(dir, "tools");
  await mkdir(tools);
  await writeFile(path.join(tools, "py.yaml"), `type: toolable\nname: py\ncommand: ${JSON.stringify(PYTOOL)}\ndiscover_timeout: 60\n`);
  fake = await startFakeOpenAI(() => ({ text: "four, from the fake model" }));
  env = { ...process.env, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.url };
}, 60_000);
afterAll(async () => {
  await fake?.close();
  await cleanup(dir);
});

/** The built CLI with the fake provider's environment (or `withEnv`). */
function run(args: string[], withEnv: NodeJS.ProcessEnv = env): Promise<CliResult> {
  return runCli(args, { cwd: dir, env: withEnv, timeoutMs: 60_000 });
}

describe("--sampler", () => {
  it("run: the model answers the tool's sampling request", async () => {
    const before = fake.requests.length;
    const r = await run(["run", "--base", dir, "--tools", tools, "--sampler", "openai:fake-model", ASK]);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.stdout).toContain("four, from the fake model");
    const request = fake.requests[before]!;
    expect(request.authorization).toBe("Bearer sk-test");
    expect(JSON.stringify(request.body)).toContain("2+2?");
  }, 60_000);

  it("run without --sampler: the sampling request is refused, not left waiting", async () => {
    const r = await run(["run", "--base", dir, "--tools", tools, `let r; try { r = ${ASK} } catch (e) { r = e.message } r`]);
    expect(r.stdout).toMatch(/no sampler/);
  }, 60_000);

  it("usage errors: a missing key names its variable; a malformed model; --sampler with --remote", async () => {
    const noKey = { ...env };
    delete noKey.OPENAI_API_KEY;
    const missing = await run(["run", "--base", dir, "--tools", tools, "--sampler", "openai:fake-model", "1"], noKey);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--sampler: .*OPENAI_API_KEY/);
    const bad = await run(["run", "--base", dir, "--sampler", "gpt-4o", "1"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected provider:model/);
    const remote = await run(["run", "--remote", "http://127.0.0.1:9", "--token", TOKEN, "--sampler", "openai:m", "1"]);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/drop --sampler/);
  }, 60_000);

  it("serve: sessions' sampling requests are answered by the server's model", async () => {
    const server = await startServe(["--token", TOKEN, "--base", path.join(dir, "served"), "--tools", tools, "--sampler", "openai:fake-model"], { env });
    try {
      const r = await run(["run", "--remote", server.url, "--token", TOKEN, ASK]);
      expect(r.stdout).toContain("four, from the fake model");
    } finally {
      await server.stop();
    }
  }, 90_000);

  it("mcp: --sampler answers instead of the client (which offers no sampling here)", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, "mcp", "--base", dir, "--tools", tools, "--sampler", "openai:fake-model"],
      cwd: dir,
      env: { ...getDefaultEnvironment(), OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.url },
      stderr: "pipe",
    });
    const client = new Client({ name: "sampler-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const result = (await client.callTool({ name: "run_code", arguments: { code: ASK } })) as { content: Array<{ type: string; text?: string }> };
      expect(result.content[0]?.text).toContain("four, from the fake model");
    } finally {
      await client.close();
    }
  }, 90_000);
});
