/**
 * `ts-code-mode agent …` as users run it (the built CLI), against a fake OpenAI API on 127.0.0.1
 * through the real @ai-sdk/openai provider: the example project end to end (main delegates to the
 * analyst, which runs real code against the real wc tool), --json, agent new/check, and the
 * interactive approval prompt driven through a pseudo-terminal (python3's pty module).
 */
import { spawn, spawnSync } from "node:child_process";
import { cp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, REPO, tempDir } from "../cli/harness.js";
import { startFakeOpenAI, type FakeOpenAI, type FakeRequest, type FakeStep } from "./fake-openai.js";
import { agentFile } from "./project.js";
import { inPty } from "./pty.js";

let dir: string;
let server: FakeOpenAI | null = null;
beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
});
afterEach(async () => {
  await server?.close();
  server = null;
});
afterAll(async () => {
  if (dir) await cleanup(dir);
});

function withEnv<T>(url: string, fn: () => Promise<T>): Promise<T> {
  const saved = { key: process.env.OPENAI_API_KEY, base: process.env.OPENAI_BASE_URL };
  process.env.OPENAI_API_KEY = "sk-test-key";
  process.env.OPENAI_BASE_URL = url;
  return fn().finally(() => {
    if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved.key;
    if (saved.base === undefined) delete process.env.OPENAI_BASE_URL;
    else process.env.OPENAI_BASE_URL = saved.base;
  });
}

/** The analyst's snippet: the words with the wc tool, the hours with the csv-summary skill's script. */
const ANALYST_CODE = [
  'const counts = await tools.wc.words({ files: ["notes/ideas.md", "notes/todo.md"] });',
  'const hours = JSON.parse(await skills.run("csv-summary", "scripts/summary.py", ["notes/hours.csv"]));',
  '`${counts.trim().split("\\n").at(-1)}; ${hours.rows} tasks, ${hours.numeric.hours.min}-${hours.numeric.hours.max} hours`',
].join("\n");

/**
 * The example's scripted conversation: main lists the notes, asks the analyst; the analyst, seeing
 * the skills catalog in its system prompt, loads csv-summary, runs one snippet (wc + the skill's
 * script), and answers; main reports its answer.
 */
function exampleScript(req: FakeRequest): FakeStep {
  if (req.tools.includes("run_code")) {
    if (req.lastToolOutput === undefined) {
      if (!JSON.stringify(req.body).includes("<available_skills>")) return { text: "no skills catalog in the analyst's system prompt" };
      return { tool: "load_skill", args: { name: "csv-summary" } };
    }
    if (req.lastToolOutput.startsWith("# Skill csv-summary")) {
      if (!req.lastToolOutput.includes('skills.run("csv-summary", "scripts/summary.py"')) return { text: "load_skill did not return the instructions" };
      return { tool: "run_code", args: { code: ANALYST_CODE } };
    }
    return { text: `Counted with wc: ${req.lastToolOutput.replace(/\s+/g, " ").trim()}` };
  }
  if (req.lastToolOutput === undefined) return { tool: "list_files", args: { pattern: "notes/*.md" } };
  if (req.lastToolOutput.includes("notes/ideas.md")) {
    return { tool: "analyst", args: { input: { question: "How many words in total?", files: req.lastToolOutput.split("\n") } } };
  }
  return { text: `The notes hold these words. Analyst: ${req.lastToolOutput}` };
}

describe("ts-code-mode agent", () => {
  it("runs the example project end to end through the real OpenAI provider (Responses API)", async () => {
    await cp(path.join(REPO, "examples/agents"), path.join(dir, "agents"), { recursive: true });
    await cp(path.join(REPO, "examples/tools"), path.join(dir, "tools"), { recursive: true });
    await cp(path.join(REPO, "examples/skills"), path.join(dir, "skills"), { recursive: true });
    server = await startFakeOpenAI(exampleScript);
    const r = await withEnv(server.url, () => cli(["agent", "run", ".", "How many words are in the notes?", "-v"], { cwd: path.join(dir, "agents"), timeoutMs: 60_000 }));
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    // wc's own total for the two notes, computed by the analyst's run_code on the real tool.
    const words = spawnSync("wc", ["-w", "notes/ideas.md", "notes/todo.md"], { cwd: path.join(dir, "agents"), encoding: "utf8" }).stdout.trim().split("\n").at(-1)!.trim().split(/\s+/)[0]!;
    expect(r.stdout).toBe(`The notes hold these words. Analyst: Counted with wc: --- value --- ${words} total; 3 tasks, 1.5-3.5 hours\n`);
    expect(r.stderr).toContain("▸ main\n");
    expect(r.stderr).toContain("  ▸ analyst (depth 1)\n");
    expect(r.stderr).toContain("    → load_skill ");
    expect(r.stderr).toContain("    → run_code ");
    expect(r.stderr).toMatch(/usage: 6 model requests \(main 3, analyst 3\), 600 input \+ 120 output tokens/);
    expect(server.requests.every((q) => q.path === "/v1/responses" && q.authorization === "Bearer sk-test-key")).toBe(true);
    // agent check accepts the example, whose analyst names the skills toolset.
    const check = await cli(["agent", "check", "."], { cwd: path.join(dir, "agents") });
    expect(check.stderr).toBe("");
    expect(check.stdout).toMatch(/^ok: 2 agents \(main, analyst\), entry main\n$/);
    process.stdout.write(`--- transcript: agent run examples/agents -v ---\n$ ts-code-mode agent run . 'How many words are in the notes?' -v\n${r.stderr}${r.stdout}`);
  });

  it("--json prints answer, usage and the event log; a prompt can come from stdin", async () => {
    server = await startFakeOpenAI(exampleScript);
    const r = await withEnv(server.url, () => cli(["agent", "run", path.join(dir, "agents"), "--json"], { cwd: path.join(dir, "agents"), input: "How many words?", timeoutMs: 60_000 }));
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { answer: string; usage: { total: { requests: number } }; events: Array<{ agent: string; depth: number; event: { type: string } }> };
    expect(out.answer).toMatch(/total/);
    expect(out.usage.total.requests).toBe(6);
    expect(out.events.filter((e) => e.event.type === "agent_start").map((e) => `${e.agent}@${e.depth}`)).toEqual(["main@0", "analyst@1"]);
    const first = server.requests[0]!.body.input as Array<{ role?: string; content?: unknown }>;
    expect(JSON.stringify(first)).toContain("How many words?");
  });

  it("agent new creates a project that agent check accepts; check names file and line of a mistake", async () => {
    const r = await cli(["agent", "new", "my-agent"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/created my-agent\/project\.json and my-agent\.agent\.md/);
    const ok = await cli(["agent", "check", "my-agent"], { cwd: dir });
    expect(ok.stdout).toBe("ok: 1 agent (my-agent), entry my-agent\n");
    const good = await readFile(path.join(dir, "my-agent/my-agent.agent.md"), "utf8");
    await writeFile(path.join(dir, "my-agent/my-agent.agent.md"), good.replace("[code, ", "[code, shell_everything, "));
    const bad = await cli(["agent", "check", "my-agent"], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/my-agent\.agent\.md:5: unknown tool "shell_everything"/);
    await writeFile(path.join(dir, "my-agent/my-agent.agent.md"), good);
    const missingKey = await cli(["agent", "run", "my-agent", "hi"], { cwd: dir });
    expect(missingKey.code).toBe(1);
    expect(missingKey.stderr).toMatch(/needs the environment variable OPENAI_API_KEY/);
  });
});

describe("chat, providers and lazy loading", () => {
  it("--chat answers one prompt per line of piped stdin; the entry keeps its history", async () => {
    const p = path.join(dir, "chat");
    await cp(path.join(REPO, "examples/agents/notes"), path.join(p, "notes"), { recursive: true });
    await writeFile(path.join(p, "project.json"), JSON.stringify({ version: 1, agents: ["main.agent.md"], entry: "main" }));
    await writeFile(path.join(p, "main.agent.md"), agentFile({ name: "main", model: "openai:gpt-4o-mini" }));
    server = await startFakeOpenAI((req) => {
      const users = (req.body.input as Array<{ role?: string; content?: unknown }>).filter((m) => m.role === "user");
      return { text: `turn ${users.length}: ${users.map((u) => JSON.stringify(u.content).match(/(first|second)/)?.[0]).join("+")}` };
    });
    const r = await withEnv(server.url, () => cli(["agent", "run", ".", "--chat"], { cwd: p, input: "first\nsecond\n" }));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("turn 1: first\nturn 2: first+second\n");
  });

  it("an OpenAI-compatible provider from project.json is called through /chat/completions with its key", async () => {
    server = await startFakeOpenAI((req) => (req.lastToolOutput === undefined ? { tool: "list_files", args: { pattern: "*.md" } } : { text: `files: ${req.lastToolOutput}` }));
    const p = path.join(dir, "compat");
    await cp(path.join(REPO, "examples/agents/notes"), p, { recursive: true });
    await writeFile(
      path.join(p, "project.json"),
      JSON.stringify({ version: 1, agents: ["main.agent.md"], entry: "main", providers: { local: { base_url: server.url, api_key_env: "LOCAL_LLM_KEY" } } }),
    );
    await writeFile(path.join(p, "main.agent.md"), agentFile({ name: "main", model: "local:llama-3", tools: ["filesystem_project_ro"] }));
    process.env.LOCAL_LLM_KEY = "local-secret";
    try {
      const r = await cli(["agent", "run", ".", "list"], { cwd: p });
      expect(r.stdout).toBe("files: ideas.md\nmain.agent.md\ntodo.md\n");
    } finally {
      delete process.env.LOCAL_LLM_KEY;
    }
    expect(server.requests.map((q) => [q.path, q.authorization, q.body.model])).toEqual([
      ["/v1/chat/completions", "Bearer local-secret", "llama-3"],
      ["/v1/chat/completions", "Bearer local-secret", "llama-3"],
    ]);
  });

  it("importing ts-code-mode and its CLI commands does not load the AI SDK", async () => {
    const hook = `data:text/javascript,${encodeURIComponent(
      "export async function resolve(s, c, next) { const r = await next(s, c); if (/node_modules\\/(ai|@ai-sdk)\\//.test(r.url)) console.log('LOADED ' + r.url); return r; }",
    )}`;
    const code = `import { register } from "node:module"; register(${JSON.stringify(hook)}); await import(${JSON.stringify(path.join(REPO, "dist/index.js"))}); await import(${JSON.stringify(path.join(REPO, "dist/cli/commands/agent.js"))}); console.log("imported");`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8" });
    expect(r.stdout).toBe("imported\n");
  });
});

describe("examples/agents/embed.mjs", () => {
  it("runs the example project through the library with onApproval and onEvent", async () => {
    server = await startFakeOpenAI(exampleScript);
    const script = path.join(REPO, "examples/agents/embed.mjs");
    try {
      const r = await new Promise<{ stdout: string; code: number | null }>((resolve, reject) => {
        const child = spawn(process.execPath, [script], { env: { ...process.env, OPENAI_API_KEY: "k", OPENAI_BASE_URL: server!.url } });
        let stdout = "";
        child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
        child.on("error", reject);
        child.on("close", (code) => resolve({ stdout, code }));
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^main → list_files\nmain → analyst\n {2}analyst → load_skill\n {2}analyst → run_code\nanswer: The notes hold these words\. Analyst: Counted with wc: --- value --- \d+ total; 3 tasks, 1\.5-3\.5 hours\nusage: \{"inputTokens":600,"outputTokens":120,"requests":6\}\n$/);
    } finally {
      await rm(path.join(REPO, "examples/agents/.code-mode"), { recursive: true, force: true, maxRetries: 5 });
    }
  });
});

describe("interactive approval through a pseudo-terminal", () => {
  function writerScript(req: FakeRequest): FakeStep {
    if (req.lastToolOutput === undefined) return { tool: "write_file", args: { path: "out.txt", content: "from the model" } };
    return { text: `tool said: ${req.lastToolOutput}` };
  }

  async function writerProject(): Promise<string> {
    const p = path.join(dir, `writer-${Math.random().toString(36).slice(2)}`);
    await cp(path.join(REPO, "examples/agents/notes"), path.join(p, "notes"), { recursive: true });
    await writeFile(path.join(p, "project.json"), JSON.stringify({ version: 1, agents: ["main.agent.md"], entry: "main" }));
    await writeFile(path.join(p, "main.agent.md"), agentFile({ name: "main", tools: ["filesystem_project"], model: "openai:gpt-4o-mini" }));
    return p;
  }

  it("n + reason: the call is not run and the model reads the reason", async () => {
    server = await startFakeOpenAI(writerScript);
    const p = await writerProject();
    const r = await inPty(["agent", "run", ".", "write it"], p, ["n", "not today"], { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url });
    expect(r.output).toContain("main (depth 0) wants to call write_file with:");
    expect(r.output).toMatch(/tool said: Tool call write_file was not run: the user rejected it: not today/);
    expect(r.code).toBe(0);
    await expect(readFile(path.join(p, "out.txt"), "utf8")).rejects.toThrow();
  });

  it("e + JSON: the edited arguments run; a stray answer asks again", async () => {
    server = await startFakeOpenAI(writerScript);
    const p = await writerProject();
    const r = await inPty(["agent", "run", ".", "write it"], p, ["maybe", "e", '{"path":"out.txt","content":"from the human"}'], { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url });
    expect(r.output).toContain("answer y, s, e or n");
    expect(r.output).toMatch(/tool said: wrote 14 characters to out\.txt/);
    expect(await readFile(path.join(p, "out.txt"), "utf8")).toBe("from the human");
  });

  it("y approves once; without a terminal the same call is rejected and the model told why", async () => {
    server = await startFakeOpenAI(writerScript);
    const p = await writerProject();
    const r = await inPty(["agent", "run", ".", "write it"], p, ["y"], { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url });
    expect(r.output).toMatch(/tool said: wrote 14 characters/);
    expect(await readFile(path.join(p, "out.txt"), "utf8")).toBe("from the model");
    const other = await writerProject();
    const headless = await withEnv(server.url, () => cli(["agent", "run", ".", "write it"], { cwd: other }));
    expect(headless.stdout).toMatch(/tool said: Tool call write_file was not run: no one can approve it/);
    expect(headless.stderr).toMatch(/✗ rejected write_file/);
  });
});
