/**
 * The runtime with scripted models: delegation (the child starts with a fresh history and the
 * parent sees only the call and its result), the entry's history across chat turns, max depth,
 * usage per agent and per run, events, and the code toolset running real snippets on real tools.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime, runAgent, type AgentSpec } from "../../src/index.js";
import { defaultSessionFactory } from "../../src/agents/session-factory.js";
import { projectsRemovedAfterEach } from "./project.js";
import { scripted, toolResults } from "./scripted.js";

const EXAMPLE_TOOLS = fileURLToPath(new URL("../../examples/tools/", import.meta.url));
const EXAMPLE_SKILLS = fileURLToPath(new URL("../../examples/skills/", import.meta.url));
const project = projectsRemovedAfterEach(afterEach);

describe("agent runtime", () => {
  it("delegates to a child agent with a fresh history; the parent sees only the call and result; usage is summed", async () => {
    const dir = await project(
      [
        { name: "main", tools: ["analyst"] },
        { name: "analyst", tools: ["code"], description: "Computes things" },
      ],
      { agent_calls_need_approval: false, code_mode: { base: ".code-mode", executor: "in-process" } },
    );
    const main = scripted([
      { tool: "analyst", args: { input: "what is 6*7?" } },
      { text: "The answer is 42." },
      { tool: "analyst", args: { input: "is secret set?" } },
      { text: "Still 42." },
    ]);
    const analyst = scripted([{ tool: "run_code", args: { code: "const secret = 'child-only'; 6 * 7" } }, { text: "42" }, { tool: "run_code", args: { code: "typeof secret" } }, { text: "fresh" }]);
    const models = { main, analyst };
    const runtime = await createRuntime(dir, { model: (a: AgentSpec) => models[a.name as keyof typeof models] });

    const first = await runtime.run("Ask the analyst.");
    expect(first.answer).toBe("The answer is 42.");
    // The child's first request: its instructions and the input only, nothing of the parent's conversation.
    const childFirst = analyst.prompts[0]!.prompt;
    expect(childFirst.map((m) => m.role)).toEqual(["system", "user"]);
    expect(JSON.stringify(childFirst)).toContain("what is 6*7?");
    expect(JSON.stringify(childFirst)).not.toContain("Ask the analyst.");
    // The parent sees the analyst call and its answer, not the child's run_code.
    expect(toolResults(main.prompts[1])).toEqual(["42"]);
    expect(JSON.stringify(main.prompts[1]!.prompt)).not.toContain("run_code");
    expect(JSON.stringify(main.prompts[1]!.prompt)).not.toContain("child-only");

    // Second turn of a chat: the entry keeps its history.
    const second = await runtime.run("And again?");
    expect(second.answer).toBe("Still 42.");
    const again = JSON.stringify(main.prompts[2]!.prompt);
    // The second call of the child starts fresh again: nothing of the parent's chat, nothing of its first call.
    expect(analyst.prompts[2]!.prompt.map((m) => m.role)).toEqual(["system", "user"]);
    expect(JSON.stringify(analyst.prompts[2]!.prompt)).not.toMatch(/6\*7|Ask the analyst|child-only/);
    expect(toolResults(analyst.prompts[3])).toEqual(["--- value ---\nundefined"]);
    expect(again).toContain("Ask the analyst.");
    expect(again).toContain("The answer is 42.");
    expect(again).toContain("And again?");

    expect(second.usage.total).toEqual({ inputTokens: 80, outputTokens: 40, requests: 8 });
    expect(second.usage.agents).toEqual({
      main: { inputTokens: 40, outputTokens: 20, requests: 4 },
      analyst: { inputTokens: 40, outputTokens: 20, requests: 4 },
    });
    const kinds = first.events.map((e) => `${e.agent}@${e.depth}:${e.event.type}`);
    expect(kinds).toEqual([
      "main@0:agent_start",
      "main@0:model_request",
      "main@0:model_response",
      "main@0:tool_call",
      "analyst@1:agent_start",
      "analyst@1:model_request",
      "analyst@1:model_response",
      "analyst@1:tool_call",
      "analyst@1:tool_result",
      "analyst@1:model_request",
      "analyst@1:model_response",
      "analyst@1:agent_end",
      "main@0:tool_result",
      "main@0:model_request",
      "main@0:model_response",
      "main@0:agent_end",
    ]);
  });

  it("a child call gets its own code session: variables of one call are not in the next", async () => {
    const dir = await project([{ name: "main", tools: ["analyst"] }, { name: "analyst", tools: ["code"] }], {
      agent_calls_need_approval: false,
      code_mode: { base: ".code-mode", executor: "in-process" },
    });
    const main = scripted([{ tool: "analyst", args: { input: "one" } }, { tool: "analyst", args: { input: "two" } }, { text: "ok" }]);
    const analyst = scripted([{ tool: "run_code", args: { code: "var kept = 1; kept" } }, { text: "set" }, { tool: "run_code", args: { code: "typeof kept" } }, { text: "checked" }]);
    await runAgent(dir, "go", { model: (a) => (a.name === "main" ? main : analyst) });
    expect(toolResults(analyst.prompts[3])).toEqual(["--- value ---\nundefined"]);
  });

  it("stops recursion at max_depth with an error the calling model reads", async () => {
    const dir = await project([{ name: "loop", tools: ["loop"] }], { max_depth: 2, agent_calls_need_approval: false });
    const model = scripted([
      { tool: "loop", args: { input: "deeper" } },
      { tool: "loop", args: { input: "deeper" } },
      { tool: "loop", args: { input: "deeper" } },
      { text: "depth 2 gave up" },
      { text: "depth 1 done" },
      { text: "depth 0 done" },
    ]);
    const result = await runAgent(dir, "start", { model });
    expect(result.answer).toBe("depth 0 done");
    const starts = result.events.filter((e) => e.event.type === "agent_start").map((e) => e.depth);
    expect(starts).toEqual([0, 1, 2]);
    const atDepth2 = toolResults(model.prompts[3]);
    expect(atDepth2.join("\n")).toMatch(/calling agent loop would run at depth 3, past max_depth 2.*loop → loop → loop → loop/);
  });

  it("the code toolset runs real snippets against real tools in a subprocess session", async () => {
    const dir = await project([{ name: "main", tools: ["code"] }], { code_mode: { base: ".code-mode", tools: EXAMPLE_TOOLS } });
    const model = scripted([
      { tool: "run_code", args: { code: 'const found = await tools.search("print text"); const said = await tools.echo.say({ text: ["hi", "there"] }); [found.length > 0, said.trim()]' } },
      { tool: "run_code", args: { code: "await artifacts.save('note.txt', 'kept'); throw new Error('boom')" } },
      { text: "done" },
    ]);
    const result = await runAgent(dir, "use code", { model });
    expect(result.answer).toBe("done");
    const [first, second] = toolResults(model.prompts[2]);
    expect(first).toBe("--- value ---\n[ true, 'hi there' ]");
    expect(second).toMatch(/--- error ---\nError: boom/);
    // The session's storage is the project's code_mode.base: the artifact outlives the call.
    expect(await readFile(path.join(dir, ".code-mode/artifacts/note.txt"), "utf8").catch(() => "missing")).not.toBe("missing");
  });

  it("the skills toolset: the catalog in the system prompt, load_skill / read_skill_file / skills.run on the code toolset's one session", async () => {
    const codeMode = { base: ".code-mode", tools: EXAMPLE_TOOLS, skills: [EXAMPLE_SKILLS] };
    const dir = await project([{ name: "main", tools: ["code", "skills"], body: "You are main." }], { code_mode: codeMode }, { "data.csv": "a,b\n1,x\n3,y\n" });
    let sessions = 0;
    const model = scripted([
      { tool: "load_skill", args: { name: "csv-summary" } },
      { tools: [{ tool: "read_skill_file", args: { name: "csv-summary", path: "references/columns.md" } }, { tool: "read_skill_file", args: { name: "csv-summary", path: "../commit-message/SKILL.md" } }] },
      { tool: "run_code", args: { code: `JSON.parse(await skills.run("csv-summary", "scripts/summary.py", [${JSON.stringify(path.join(dir, "data.csv"))}])).numeric` } },
      { text: "done" },
    ]);
    const result = await runAgent(dir, "summarise data.csv", { model, createSession: (p) => (sessions++, defaultSessionFactory(p)) });
    expect(result.answer).toBe("done");
    expect(sessions).toBe(1); // skills and code share the call's session
    const system = JSON.stringify(model.prompts[0]!.prompt[0]);
    expect(system).toMatch(/^\{"role":"system","content":"You are main\.\\n\\nSkills are instructions/);
    expect(system).toContain("<available_skills>");
    expect(system).toContain("csv-summary");
    const [loaded, columns, escaped, ran] = toolResults(model.prompts[3]);
    expect(loaded).toMatch(/^# Skill csv-summary\n\n# CSV summary\n[^]*--- files of this skill ---\nreferences\/columns\.md\nscripts\/summary\.py$/);
    expect(columns).toBe(await readFile(path.join(EXAMPLE_SKILLS, "csv-summary/references/columns.md"), "utf8"));
    expect(escaped).toMatch(/Invalid path in a skill "..\/commit-message\/SKILL.md": it has a ".." segment/);
    expect(ran).toBe("--- value ---\n{ a: { min: 1, max: 3, mean: 2 } }");

    // An agent without the skills toolset gets no catalog, even when the project has skills.
    const plain = scripted([{ text: "ok" }]);
    await runAgent(await project([{ name: "plain", tools: ["code"] }], { code_mode: codeMode }), "hi", { model: plain });
    expect(JSON.stringify(plain.prompts[0]!.prompt)).not.toContain("available_skills");
  });

  it("a called agent's input schema validates the caller's input; a bad input is the caller's tool error", async () => {
    const dir = await project(
      [{ name: "main", tools: ["counter"] }, { name: "counter", input: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } }],
      { agent_calls_need_approval: false },
    );
    const main = scripted([{ tool: "counter", args: { input: { n: "three" } } }, { tool: "counter", args: { input: { n: 3 } } }, { text: "ok" }]);
    const counter = scripted([{ text: "counted" }]);
    await runAgent(dir, "go", { model: (a) => (a.name === "main" ? main : counter) });
    const [bad, good] = toolResults(main.prompts[2]);
    expect(bad).toMatch(/Invalid input for tool counter/);
    expect(good).toBe("counted");
    expect(JSON.stringify(counter.prompts[0]!.prompt)).toContain('\\"n\\": 3');
  });

  it("the tools toolset exposes each ts-code-mode tool callable as a plain tool call", async () => {
    const dir = await project([{ name: "main", tools: ["tools"] }], { code_mode: { base: ".code-mode", tools: EXAMPLE_TOOLS, executor: "in-process" } });
    const model = scripted([{ tool: "echo__say", args: { text: ["plain", "call"] } }, { text: "ok" }]);
    await runAgent(dir, "go", { model });
    const offered = model.prompts[0]!.tools?.map((t) => t.name) ?? [];
    expect(offered).toContain("echo__say");
    expect(offered).toContain("wc__words");
    expect(toolResults(model.prompts[1])).toEqual(["plain call\n"]);
  });

  it("the shell toolset runs an argv on the host after approval, and not without it", async () => {
    const dir = await project([{ name: "main", tools: ["shell"] }], { code_mode: { base: ".code-mode", executor: "in-process" } });
    const ran = scripted([{ tool: "shell", args: { argv: ["sh", "-c", "echo $0", "a b;c"] } }, { text: "ok" }]);
    await runAgent(dir, "go", { model: ran });
    expect(toolResults(ran.prompts[1])).toEqual(["exit code 0\na b;c\n"]);
    const refused = scripted([{ tool: "shell", args: { argv: ["touch", "made"] } }, { text: "ok" }]);
    await runAgent(dir, "go", { model: refused, approvalMode: "reject_all" });
    expect(toolResults(refused.prompts[1])[0]).toMatch(/Tool call shell was not run/);
    await expect(readFile(path.join(dir, "made"))).rejects.toThrow();
  });

  it("a child's answer reaches the caller cut to the output limit", async () => {
    const dir = await project([{ name: "main", tools: ["talker"] }, { name: "talker" }], { agent_calls_need_approval: false });
    const main = scripted([{ tool: "talker", args: { input: "talk" } }, { text: "ok" }]);
    const talker = scripted([{ text: "blah ".repeat(10_000) }]);
    await runAgent(dir, "go", { model: (a) => (a.name === "main" ? main : talker), maxOutputChars: 1_000 });
    const [seen] = toolResults(main.prompts[1]);
    expect(seen!.length).toBeLessThanOrEqual(1_000);
    expect(seen).toMatch(/text cut to 1,000 characters/);
  });

  it("attachments: project files are given to the called agent; paths out of the project are refused", async () => {
    const dir = await project([{ name: "main", tools: ["reader"] }, { name: "reader" }], { agent_calls_need_approval: false }, { "docs/plan.md": "step one, step two" });
    const main = scripted([
      { tool: "reader", args: { input: "summarise", attachments: ["docs/plan.md"] } },
      { tool: "reader", args: { input: "steal", attachments: ["../../etc/passwd"] } },
      { text: "ok" },
    ]);
    const reader = scripted([{ text: "two steps" }, { text: "never" }]);
    await runAgent(dir, "go", { model: (a) => (a.name === "main" ? main : reader) });
    expect(JSON.stringify(reader.prompts[0]!.prompt)).toContain("summarise\\n\\nAttachment docs/plan.md:\\nstep one, step two");
    expect(reader.prompts).toHaveLength(1);
    const [first, second] = toolResults(main.prompts[2]);
    expect(first).toBe("two steps");
    expect(second).toMatch(/outside the allowed folder/);
  });

  it("the entry's input is checked against its input schema before any model request", async () => {
    const dir = await project([{ name: "main", input: { type: "object", properties: { deck: { type: "string" } }, required: ["deck"] } }]);
    const model = scripted([{ text: "read it" }]);
    await expect(runAgent(dir, { slides: 3 }, { model })).rejects.toThrow(/the input does not match agent main's input schema: .*deck/);
    expect(model.prompts).toHaveLength(0);
    expect((await runAgent(dir, { deck: "q3.pdf" }, { model })).answer).toBe("read it");
  });
});
