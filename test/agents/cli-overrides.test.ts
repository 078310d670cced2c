/**
 * `agent run --model --entry`, `agent run file.agent.md` and `agent check` listing every problem
 * at once (issue 38 item 3), through the built CLI against a fake OpenAI API on 127.0.0.1.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, tempDir } from "../cli/harness.js";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.js";
import { agentFile } from "./project.js";

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

/** The CLI reads the key and base URL from the environment it inherits. */
async function withEnv<T>(url: string, fn: () => Promise<T>): Promise<T> {
  const saved = { key: process.env.OPENAI_API_KEY, base: process.env.OPENAI_BASE_URL };
  process.env.OPENAI_API_KEY = "sk-test-key";
  process.env.OPENAI_BASE_URL = url;
  try {
    return await fn();
  } finally {
    for (const [k, v] of [["OPENAI_API_KEY", saved.key], ["OPENAI_BASE_URL", saved.base]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe("agent run overrides and single files", () => {
  it("--entry runs another agent and --model replaces every agent's model", async () => {
    const p = path.join(dir, "overrides");
    await mkdir(p);
    await writeFile(path.join(p, "project.json"), JSON.stringify({ version: 1, agents: ["main.agent.md", "helper.agent.md"], entry: "main" }));
    await writeFile(path.join(p, "main.agent.md"), agentFile({ name: "main", model: "openai:main-model" }));
    await writeFile(path.join(p, "helper.agent.md"), agentFile({ name: "helper", model: "openai:helper-model", body: "You are the helper." }));
    server = await startFakeOpenAI((req) => ({ text: `${String(req.body.model)} says: ${JSON.stringify(req.body).includes("You are the helper.") ? "helper" : "main"}` }));
    const r = await withEnv(server.url, () => cli(["agent", "run", ".", "--entry", "helper", "--model", "openai:other-model", "hi"], { cwd: p }));
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.stdout).toBe("other-model says: helper\n");
    const bad = await withEnv(server.url, () => cli(["agent", "run", ".", "--entry", "ghost", "hi"], { cwd: p }));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/entry: unknown agent "ghost"/);
  });

  it("runs one .agent.md without a project.json, with the default settings", async () => {
    const p = path.join(dir, "single");
    await mkdir(p);
    await writeFile(path.join(p, "solo.agent.md"), agentFile({ name: "solo", model: "openai:solo-model", tools: ["filesystem_project_ro"] }));
    await writeFile(path.join(p, "note.txt"), "the note");
    let step = 0;
    server = await startFakeOpenAI((req) => (step++ === 0 ? { tool: "read_file", args: { path: "note.txt" } } : { text: `read: ${req.lastToolOutput ?? ""}` }));
    const r = await withEnv(server.url, () => cli(["agent", "run", "solo.agent.md", "read the note"], { cwd: p }));
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.stdout).toBe("read: the note\n");
  });
});

describe("agent check", () => {
  it("reports every problem of every file at once, each with its file and line", async () => {
    const p = path.join(dir, "broken");
    await mkdir(p);
    await writeFile(path.join(p, "project.json"), JSON.stringify({ version: 1, agents: ["a.agent.md", "b.agent.md"], entry: "a", max_depth: 0, colour: "blue" }, null, 2));
    await writeFile(path.join(p, "a.agent.md"), agentFile({ name: "a", tools: ["code", "nope"], agents: ["ghost"] }));
    await writeFile(path.join(p, "b.agent.md"), "---\nname: B\nmodel: gpt\n---\nhi\n");
    const r = await cli(["agent", "check", "."], { cwd: p });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(/^project\.json:\d+: max_depth: /),
      expect.stringMatching(/^project\.json:\d+: unknown key "colour"/),
      expect.stringMatching(/^a\.agent\.md:4: unknown tool "nope"/),
      expect.stringMatching(/^a\.agent\.md:5: agents: unknown agent "ghost"/),
      expect.stringMatching(/^b\.agent\.md:2: name: expected a lower-case name/),
      expect.stringMatching(/^b\.agent\.md:3: model: expected "provider:model"/),
      "6 problems",
    ]);
  });

  it("one file's problems of every kind at once: schema, toolset options, output schema, references", async () => {
    const p = path.join(dir, "broken-one");
    await mkdir(p);
    await writeFile(path.join(p, "project.json"), JSON.stringify({ version: 1, agents: ["c.agent.md"], entry: "c" }, null, 2));
    await writeFile(
      path.join(p, "c.agent.md"),
      [
        "---",
        "name: c",
        "model: nonsense",
        "tools: [code, nosuch, { shell_readonly: { allowed_commands: [rm] } }]",
        "agents: [ghost]",
        "colour: blue",
        "output: { type: objekt }",
        "shell_readonly: { allowed_commands: [ls] }",
        "---",
        "hi",
      ].join("\n"),
    );
    const r = await cli(["agent", "check", "."], { cwd: p });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^c\.agent\.md:3: model: expected "provider:model"/),
      expect.stringMatching(/^c\.agent\.md:4: tools: shell_readonly\.allowed_commands\.0: /),
      expect.stringMatching(/^c\.agent\.md:4: unknown tool "nosuch"/),
      expect.stringMatching(/^c\.agent\.md:5: agents: unknown agent "ghost"/),
      expect.stringMatching(/^c\.agent\.md:6: unknown key "colour"/),
      expect.stringMatching(/^c\.agent\.md:7: output is not a usable JSON Schema/),
      'c.agent.md:8: unknown key "shell_readonly": a toolset\'s options go in its tools entry, tools: [{ shell_readonly: { ... } }]',
      "7 problems",
    ]);
  });
});
