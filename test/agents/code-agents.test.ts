/**
 * agents.* inside code mode (issue 38 item 2): an agent's run_code calls other agents as
 * `agents.<name>({ input })`, host-side like tools, on every executor. Each call is a child in the
 * call tree exactly as a tool call to that agent: events, depth, approvals, usage; bounded by
 * max_depth (checked before anyone is asked to approve) and the run's max_agent_calls. A code
 * entry calls agents the same way and, with `entry_tools: true`, tools.
 */
import { fileURLToPath } from "node:url";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime, runAgent, type AgentApprovalRequest, type AgentSpec } from "../../src/index.js";
import { ensureTestImage } from "../helpers/container.js";
import { projectsRemovedAfterEach } from "./project.js";
import { result, scripted, toolResults } from "./scripted.js";

const EXAMPLE_TOOLS = fileURLToPath(new URL("../../examples/tools/", import.meta.url));
const project = projectsRemovedAfterEach(afterEach);

const FINDING = { type: "object", properties: { file: { type: "string" }, lines: { type: "integer" } }, required: ["file", "lines"], additionalProperties: false };

/** The text of the user message the model was sent (the agent's input). */
function userText(call: LanguageModelV3CallOptions): string {
  const user = call.prompt.find((m) => m.role === "user");
  return user ? user.content.map((p) => (p.type === "text" ? p.text : "")).join("") : "";
}

/** An analyst answering each request (calls run in parallel) with a finding about the file named in its input. */
function analystModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      const file = /"file": "([^"]+)"/.exec(userText(options))?.[1] ?? "?";
      return result({ text: JSON.stringify({ file, lines: file.length }) });
    },
  });
}

const FAN_OUT = "const files = ['a.ts', 'src/bb.ts', 'lib/ccc.ts'];\nawait Promise.all(files.map((f) => agents.analyst({ input: { file: f } })))";

describe("agents.* in code mode", () => {
  it("fans out from run_code: each call is a child call with its events, approval, depth and usage; the code gets the typed values", async () => {
    const dir = await project(
      [
        { name: "main", tools: ["code"], agents: ["analyst"] },
        { name: "analyst", description: "Reads one file", input: { type: "object", properties: { file: { type: "string" } }, required: ["file"] }, output: FINDING },
      ],
      { code_mode: { base: ".code-mode", executor: "in-process" } },
    );
    const main = scripted([{ tool: "run_code", args: { code: FAN_OUT } }, { text: "merged" }]);
    const analyst = analystModel();
    const res = await runAgent(dir, "review", { model: (a: AgentSpec) => (a.name === "main" ? main : analyst) });
    expect(res.answer).toBe("merged");
    expect(toolResults(main.prompts[1])).toEqual(["--- value ---\n[ { file: 'a.ts', lines: 4 }, { file: 'src/bb.ts', lines: 9 }, { file: 'lib/ccc.ts', lines: 10 } ]"]);
    // run_code's description tells the model which agents it may call and how.
    const runCode = main.prompts[0]!.tools?.find((t) => t.name === "run_code");
    expect(JSON.stringify(runCode)).toContain("agents.analyst: Reads one file");
    // Each call: tool_call, approval (approve_all), the child's run at depth 1, tool_result: as a tool call to the agent.
    const mainEvents = res.events.filter((e) => e.agent === "main" && ["tool_call", "approval", "tool_result"].includes(e.event.type) && "tool" in e.event && e.event.tool === "analyst");
    expect(mainEvents.map((e) => e.event.type).sort()).toEqual(["approval", "approval", "approval", "tool_call", "tool_call", "tool_call", "tool_result", "tool_result", "tool_result"]);
    expect(res.events.filter((e) => e.agent === "analyst" && e.event.type === "agent_start").map((e) => e.depth)).toEqual([1, 1, 1]);
    expect(res.usage.agents["analyst"]).toEqual({ inputTokens: 30, outputTokens: 15, requests: 3 });
    expect(res.usage.total.requests).toBe(5);
    // The child was asked for structured output of its schema.
    expect(analyst.doGenerateCalls[0]!.responseFormat).toMatchObject({ type: "json", schema: { type: "object", required: ["file", "lines"] } });
  });

  it("a call past max_depth fails with MaxDepthError before approval is asked", async () => {
    const dir = await project([{ name: "main", tools: ["code"], agents: ["helper"] }, { name: "helper", tools: ["code"], agents: ["helper"] }], {
      approval_mode: "prompt",
      max_depth: 1,
      code_mode: { base: ".code-mode", executor: "in-process" },
    });
    const asked: AgentApprovalRequest[] = [];
    const main = scripted([{ tool: "run_code", args: { code: "await agents.helper({ input: 'go deeper' })" } }, { text: "done" }]);
    const helper = scripted([{ tool: "run_code", args: { code: "let r; try { await agents.helper({ input: 'deeper still' }) } catch (e) { r = e.name + ': ' + e.message } r" } }, { text: "helper done" }]);
    const res = await runAgent(dir, "go", {
      model: (a) => (a.name === "main" ? main : helper),
      onApproval: (req) => (asked.push(req), { kind: "approve" }),
    });
    expect(res.answer).toBe("done");
    expect(toolResults(helper.prompts[1])[0]).toMatch(/^--- value ---\nMaxDepthError: agents\.helper: calling agent helper would run at depth 2, past max_depth 1/);
    // Only the first call (depth 1) was put to the user.
    expect(asked.map((r) => `${r.agent}@${r.depth}→${r.tool}`)).toEqual(["main@0→helper"]);
  });

  it("the tool-call path checks depth before approval too", async () => {
    const dir = await project([{ name: "loop", tools: ["loop"] }], { approval_mode: "prompt", max_depth: 1 });
    const asked: string[] = [];
    const model = scripted([{ tool: "loop", args: { input: "deeper" } }, { tool: "loop", args: { input: "deeper" } }, { text: "depth 1 gave up" }, { text: "done" }]);
    await runAgent(dir, "go", { model, onApproval: (req) => (asked.push(`${req.depth}`), { kind: "approve" }) });
    expect(asked).toEqual(["0"]);
    expect(toolResults(model.prompts[2]).join("\n")).toMatch(/MaxDepthError|past max_depth 1/);
  });

  it("max_agent_calls caps the agent calls of one run; a rejected call is an AgentCallRejectedError in the code", async () => {
    const dir = await project([{ name: "main", tools: ["code"], agents: ["analyst"] }, { name: "analyst", output: FINDING }], {
      max_agent_calls: 2,
      code_mode: { base: ".code-mode", executor: "in-process" },
    });
    const code = "const r = await Promise.allSettled(['a', 'b', 'c'].map((f) => agents.analyst({ input: JSON.stringify({ file: f }) })));\nr.map((x) => x.status === 'fulfilled' ? 'ok' : x.reason.name)";
    const main = scripted([{ tool: "run_code", args: { code } }, { text: "done" }]);
    await runAgent(dir, "go", { model: (a) => (a.name === "main" ? main : analystModel()) });
    const out = toolResults(main.prompts[1])[0]!;
    expect(out.match(/'ok'/g)).toHaveLength(2);
    expect(out).toContain("'AgentCallLimitError'");

    const rejected = scripted([{ tool: "run_code", args: { code: "let r; try { await agents.analyst({ input: 'x' }) } catch (e) { r = e.name } r" } }, { text: "done" }]);
    await runAgent(dir, "go", { model: (a) => (a.name === "main" ? rejected : analystModel()), approvalMode: "reject_all" });
    expect(toolResults(rejected.prompts[1])).toEqual(["--- value ---\nAgentCallRejectedError"]);
  });

  it("refuses an agent not listed under agents:, and bad arguments, with errors the code reads", async () => {
    const dir = await project([{ name: "main", tools: ["code"], agents: ["analyst"] }, { name: "analyst" }, { name: "other" }], { code_mode: { base: ".code-mode", executor: "in-process" } });
    const code = "const out = []; for (const f of [() => agents.other({ input: 'x' }), () => agents.analyst({ nope: 1 }), () => agents.list()]) { try { out.push(await f()) } catch (e) { out.push(e.name + ': ' + e.message) } } out";
    const main = scripted([{ tool: "run_code", args: { code } }, { text: "done" }]);
    await runAgent(dir, "go", { model: main });
    const out = toolResults(main.prompts[1])[0]!;
    expect(out).toContain("NotFoundError: agents.other: not an agent this code may call (analyst)");
    expect(out).toMatch(/ValidationError: agents\.analyst: expected \{ input, attachments\? \}/);
    expect(out).toContain("name: 'analyst'");
  });

  it("a code entry fans out with agents.* and, with entry_tools, calls tools; its result is the run's output", async () => {
    const entry = [
      "export async function review(input, { agents, tools }) {",
      "  const findings = await Promise.all(input.files.map((f) => agents.analyst({ input: { file: f } })));",
      "  const said = tools ? await tools.echo.say({ text: ['merged', String(findings.length)] }) : 'no tools';",
      "  return { findings, said: said.trim() };",
      "}",
    ].join("\n");
    const agents = [{ name: "analyst", input: { type: "object", properties: { file: { type: "string" } } }, output: FINDING }];
    const config = (entryTools: boolean) => ({ entry: "review.ts#review", code: ["review.ts"], entry_tools: entryTools, code_mode: { base: ".code-mode", tools: EXAMPLE_TOOLS, executor: "in-process" } });
    const withTools = await project(agents, config(true), { "review.ts": entry });
    const res = await runAgent<{ findings: Array<{ file: string; lines: number }>; said: string }>(withTools, { files: ["x.ts", "yy.ts"] }, { model: analystModel() });
    expect(res.output).toEqual({ findings: [{ file: "x.ts", lines: 4 }, { file: "yy.ts", lines: 5 }], said: "merged 2" });
    expect(res.usage.agents["analyst"]!.requests).toBe(2);
    const without = await project(agents, config(false), { "review.ts": entry });
    expect((await runAgent(without, { files: ["x.ts"] }, { model: analystModel() })).output).toMatchObject({ said: "no tools" });
  });
});

describe("agents.* on every executor", () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["subprocess", { executor: "subprocess" }, "await Promise.all(['a', 'b'].map((f) => agents.echoer({ input: f })))"],
    ["sandbox (QuickJS)", { executor: "sandbox" }, "await Promise.all(['a', 'b'].map((f) => agents.echoer({ input: f })))"],
    ["sandbox (deno)", { executor: "sandbox", engine: "deno" }, "await Promise.all(['a', 'b'].map((f) => agents.echoer({ input: f })))"],
    ["python (CPython)", { executor: "subprocess", language: "python" }, "[agents.echoer(input='a'), agents.echoer(input='b')]"],
    ["python (Pyodide sandbox)", { executor: "sandbox", language: "python" }, "[agents.echoer(input='a'), await agents.echoer.call_async(input='b')]"],
  ];
  for (const [label, codeMode, code] of cases) {
    it(`${label}: agents.* reaches the agent runtime through the host`, async () => {
      const dir = await project([{ name: "main", tools: ["code"], agents: ["echoer"] }, { name: "echoer" }], { code_mode: { base: ".code-mode", ...codeMode } });
      const main = scripted([{ tool: "run_code", args: { code } }, { text: "done" }]);
      const echoer = new MockLanguageModelV3({ doGenerate: async (o) => result({ text: `echo ${userText(o)}` }) });
      const runtime = await createRuntime(dir, { model: (a) => (a.name === "main" ? main : echoer) });
      const res = await runtime.run("go");
      expect(toolResults(main.prompts[1])[0]).toMatch(/echo a.*echo b/s);
      expect(res.usage.agents["echoer"]!.requests).toBe(2);
    }, 120_000);
  }

  it("container: agents.* from code inside the container is answered on the host", async () => {
    const image = await ensureTestImage();
    const dir = await project([{ name: "main", tools: ["code"], agents: ["echoer"] }, { name: "echoer" }], { code_mode: { base: ".code-mode", executor: "container", image } });
    const main = scripted([{ tool: "run_code", args: { code: "await agents.echoer({ input: 'from the container' })" } }, { text: "done" }]);
    const echoer = new MockLanguageModelV3({ doGenerate: async (o) => result({ text: `echo ${userText(o)}` }) });
    await runAgent(dir, "go", { model: (a) => (a.name === "main" ? main : echoer) });
    expect(toolResults(main.prompts[1])[0]).toBe("--- value ---\necho from the container");
  }, 240_000);
});
