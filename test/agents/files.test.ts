/** Project and agent files: every mistake is an error naming the file and the line. */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AgentFileError, loadAgentProject, runAgent } from "../../src/index.js";
import { removeProject, writeProject, type AgentDef } from "./project.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await removeProject(d);
});

async function problem(agents: AgentDef[], config: Record<string, unknown> = {}, extra: Record<string, string> = {}): Promise<string> {
  const dir = await writeProject(agents, config, extra);
  dirs.push(dir);
  const err = await loadAgentProject(dir).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentFileError);
  return (err as Error).message.replace(`${dir}${path.sep}`, "");
}

describe("agent project files", () => {
  it("loads a valid project with defaults", async () => {
    const dir = await writeProject([{ name: "main", tools: ["code", "helper"] }, { name: "helper", description: "Helps" }]);
    dirs.push(dir);
    const p = await loadAgentProject(path.join(dir, "project.json"));
    expect(p.entry).toEqual({ kind: "agent", name: "main" });
    expect(p.config.max_depth).toBe(5);
    expect(p.config.agent_calls_need_approval).toBe(true);
    expect(p.agents.get("helper")).toMatchObject({ description: "Helps", model: "openai:test-model", tools: [], instructions: "You are helper." });
  });

  it("names file and line: unknown tool, bad model string, duplicate name, bad name", async () => {
    expect(await problem([{ name: "main", tools: ["code", "nope"] }])).toMatch(/^main\.agent\.md:4: unknown tool "nope": not a toolset \(code, .*\) nor an agent \(agents: main\)/);
    expect(await problem([{ name: "main", model: "gpt-4o" }])).toMatch(/^main\.agent\.md:3: model: expected "provider:model"/);
    expect(await problem([{ name: "main", model: "mystery:m1" }])).toMatch(/^main\.agent\.md:3: unknown model provider "mystery"/);
    expect(await problem([{ name: "Main" }])).toMatch(/^Main\.agent\.md:2: name: expected a lower-case name/);
    expect(await problem([{ name: "main", input: { type: "objekt" } }])).toMatch(/^main\.agent\.md:5: input is not a usable JSON Schema: Unsupported type: objekt/);
    const dup = await writeProject([{ name: "main" }, { name: "other" }]);
    dirs.push(dup);
    await writeFile(path.join(dup, "other.agent.md"), "---\nname: main\nmodel: openai:x\n---\nhi\n");
    await expect(loadAgentProject(dup)).rejects.toThrow(/other\.agent\.md:2: duplicate agent name "main"/);
  });

  it("names file and line in project.json: unknown keys, wrong version, unknown entry, bad JSON", async () => {
    expect(await problem([{ name: "main" }], { colour: "blue" })).toMatch(/^project\.json:\d+: unknown key "colour"/);
    const msg = await problem([{ name: "main" }], { max_depth: 0 });
    expect(msg).toMatch(/^project\.json:(\d+): max_depth: /);
    expect(await problem([{ name: "main" }], { version: 2 })).toMatch(/^project\.json:2: version: expected version 1/);
    expect(await problem([{ name: "main" }], { entry: "ghost" })).toMatch(/project\.json:\d+: entry: unknown agent "ghost"/);
    expect(await problem([{ name: "main" }], { entry: "flow.ts#run" })).toMatch(/entry: flow\.ts is not listed under "code"/);
    expect(await problem([{ name: "main" }], { agents: ["../outside.agent.md"] })).toMatch(/project\.json:4: "\.\.\/outside\.agent\.md" is outside the project folder/);
    const bad = await writeProject([{ name: "main" }]);
    dirs.push(bad);
    await writeFile(path.join(bad, "project.json"), '{\n  "version": 1,\n  "agents": [\n}\n');
    await expect(loadAgentProject(bad)).rejects.toThrow(/project\.json:4: not valid JSON/);
  });

  it("a frontmatter mistake names the line inside the Markdown file", async () => {
    const dir = await writeProject([{ name: "main" }]);
    dirs.push(dir);
    await writeFile(path.join(dir, "main.agent.md"), "---\nname: main\nmodel: openai:x\ntools: [code]\nmax_steps: lots\n---\nhi\n");
    await expect(loadAgentProject(dir)).rejects.toThrow(/main\.agent\.md:5: max_steps: /);
    await writeFile(path.join(dir, "main.agent.md"), "no frontmatter\n");
    await expect(loadAgentProject(dir)).rejects.toThrow(/main\.agent\.md:1: expected YAML frontmatter/);
  });

  it("a missing API key is an error naming the variable, the agent and its model line", async () => {
    const dir = await writeProject([{ name: "main", model: "anthropic:claude-haiku-4-5" }]);
    dirs.push(dir);
    await expect(runAgent(dir, "hi", { env: {} })).rejects.toThrow(/main\.agent\.md:3: agent main: model anthropic:claude-haiku-4-5 needs the environment variable ANTHROPIC_API_KEY/);
    const compat = await writeProject([{ name: "main", model: "local:llama" }], { providers: { local: { base_url: "http://127.0.0.1:9/v1", api_key_env: "LOCAL_KEY" } } });
    dirs.push(compat);
    await expect(runAgent(compat, "hi", { env: {} })).rejects.toThrow(/needs the environment variable LOCAL_KEY/);
  });

  it("a code entry receives the input and a context that calls agents (tools only with entry_tools)", async () => {
    const source = [
      "export async function run(input: { topic: string }, ctx: { callAgent(name: string, input: unknown): Promise<string> }) {",
      "  const keys = Object.keys(ctx);",
      "  const answer = await ctx.callAgent('helper', `about ${input.topic}`);",
      "  return { keys, answer };",
      "}",
    ].join("\n");
    const dir = await writeProject([{ name: "helper" }], { code: ["flow.ts"], entry: "flow.ts#run" }, { "flow.ts": source });
    dirs.push(dir);
    const { scripted } = await import("./scripted.js");
    const helper = scripted([{ text: "helped" }]);
    const result = await runAgent(dir, { topic: "bees" }, { model: helper });
    expect(JSON.parse(result.answer)).toEqual({ keys: ["callAgent", "agents"], answer: "helped" });
    expect(JSON.stringify(helper.prompts[0]!.prompt)).toContain("about bees");
    expect(result.events[0]).toMatchObject({ agent: "helper", depth: 1 });
  });
});
