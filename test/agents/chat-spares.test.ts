/**
 * `ts-code-mode agent run --chat` (the built CLI, a fake OpenAI API on 127.0.0.1): each turn's code
 * runs in its own child process (spares from pooledSessionFactory, never one an earlier turn had),
 * and the chat still exits when stdin ends, leaving no child behind (the pool is closed with it).
 */
import { cp } from "node:fs/promises";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, REPO, tempDir } from "../cli/harness.js";
import { isAlive } from "../mcp/harness.js";
import { startFakeOpenAI } from "./fake-openai.js";
import { agentFile } from "./project.js";

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
});
afterAll(async () => {
  if (dir) await cleanup(dir);
});

it("--chat: each turn's code runs in its own child, and the chat exits with none left", async () => {
  await cp(path.join(REPO, "examples/agents/notes"), path.join(dir, "notes"), { recursive: true });
  await writeFile(path.join(dir, "project.json"), JSON.stringify({ version: 1, agents: ["main.agent.md"], entry: "main", approval_mode: "approve_all", code_mode: { base: ".code-mode", executor: "subprocess" } }));
  await writeFile(path.join(dir, "main.agent.md"), agentFile({ name: "main", model: "openai:gpt-4o-mini", tools: ["code"] }));
  // A turn starts with the user's line: run code that tells its process; then answer with what it printed.
  const server = await startFakeOpenAI((req) => {
    const input = req.body.input as Array<{ role?: string }>;
    if (input.at(-1)?.role === "user") return { tool: "run_code", args: { code: "const seen = typeof earlier; var earlier = 1; `pid ${process.pid} ${seen}`" } };
    return { text: `answer: ${/pid \d+ \w+/.exec(req.lastToolOutput ?? "")?.[0] ?? "none"}` };
  });
  const saved = { key: process.env.OPENAI_API_KEY, base: process.env.OPENAI_BASE_URL };
  process.env.OPENAI_API_KEY = "sk-test-key";
  process.env.OPENAI_BASE_URL = server.url;
  try {
    const r = await cli(["agent", "run", ".", "--chat"], { cwd: dir, input: "first\nsecond\n", timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const answers = [...r.stdout.matchAll(/answer: pid (\d+) (\w+)/g)].map((m) => [Number(m[1]), m[2]] as const);
    expect(answers).toHaveLength(2);
    // Each turn's session is new: no variable from the turn before, another process.
    expect(answers.map(([, seen]) => seen)).toEqual(["undefined", "undefined"]);
    expect(answers[0]![0]).not.toBe(answers[1]![0]);
    for (const [pid] of answers) expect(isAlive(pid)).toBe(false);
  } finally {
    process.env.OPENAI_API_KEY = saved.key;
    process.env.OPENAI_BASE_URL = saved.base;
    if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
    if (saved.base === undefined) delete process.env.OPENAI_BASE_URL;
    await server.close();
  }
});
