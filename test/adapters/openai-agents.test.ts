/**
 * ts-code-mode/openai-agents in a full Agents SDK loop: a Runner with a scripted `Model` (the SDK's
 * own Model interface; the model is the one stand-in these tests allow), the adapter's function
 * tools, and a real session whose snippets call real CLI tools in a child process.
 */
import { Agent, Runner, Usage, type AgentInputItem, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeModeSystemPrompt, codeModeTools } from "../../src/adapters/openai-agents.js";
import { durableJournal, ECHO_SNIPPET, PAYING_SNIPPET, testSession, type TestSession } from "./session.js";

let t: TestSession;
// A first run may build dist (the child runtime) on a busy machine.
beforeAll(async () => {
  t = await testSession();
}, 180_000);
afterAll(async () => {
  await t?.close();
});

type Output = ModelResponse["output"];
const call = (name: string, args: Record<string, unknown>, callId = `call-${name}`): Output[number] => ({ type: "function_call", callId, name, arguments: JSON.stringify(args), status: "completed" });
const say = (text: string): Output[number] => ({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] });

/** The text of the last function_call_result in the model's input. */
function lastToolResult(request: ModelRequest): string {
  const items = typeof request.input === "string" ? [] : request.input;
  const result = items.filter((i: AgentInputItem) => i.type === "function_call_result").at(-1);
  if (!result || result.type !== "function_call_result") throw new Error("no tool result in the input");
  const out = result.output;
  if (typeof out === "string") return out;
  if (!Array.isArray(out) && out.type === "text") return out.text;
  return JSON.stringify(out);
}

/** A Model that plays `script` one response at a time, recording each request. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  private step = 0;
  constructor(private readonly script: Array<(request: ModelRequest) => Output>) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const next = this.script[this.step++];
    if (!next) throw new Error(`the scripted model has no step ${this.step}`);
    return { usage: new Usage(), output: next(request) };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not streamed in these tests");
  }
}

const runner = new Runner({ tracingDisabled: true });

describe("ts-code-mode/openai-agents: a full Runner loop", () => {
  it("the agent calls run_code, the snippet runs real tools, the model reads the trimmed result", async () => {
    const model = new ScriptedModel([() => [call("run_code", { code: ECHO_SNIPPET })], (r) => [say(`the tool said: ${lastToolResult(r)}`)]]);
    const agent = new Agent({ name: "coder", instructions: await codeModeSystemPrompt(t.session), model, tools: codeModeTools(t.session) });
    const result = await runner.run(agent, "say code mode", { maxTurns: 5 });
    expect(result.finalOutput).toBe("the tool said: --- value ---\nCODE MODE");
    expect(await t.session.loadArtifact("said.txt")).toBe("code mode");
    // The model was offered run_code with its schema and the system prompt.
    expect(model.requests[0]!.tools.map((tool) => tool.name)).toEqual(["run_code"]);
    expect(model.requests[0]!.systemInstructions).toContain("run_code");
  });

  it("a failing snippet comes back as text naming the mistake; a malformed input is a tool error the model reads", async () => {
    const model = new ScriptedModel([
      () => [call("run_code", { code: 'await tools.ech.say({ text: ["x"] })' })],
      () => [call("run_code", { timeout_ms: 5 }, "c2")],
      () => [say("done")],
    ]);
    const agent = new Agent({ name: "coder", model, tools: codeModeTools(t.session) });
    const result = await runner.run(agent, "go", { maxTurns: 5 });
    expect(result.finalOutput).toBe("done");
    expect(lastToolResult(model.requests[1]!)).toMatch(/--- error ---\nNotFoundError: tools\.ech\.say: Unknown tool: ech\. Did you mean: echo/);
    expect(lastToolResult(model.requests[2]!)).toBe("--- error ---\nValidationError: run_code: invalid input: ✖ Invalid input: expected string, received undefined   → at code");
  });

  it("discovery tools are function tools too", async () => {
    const model = new ScriptedModel([() => [call("search_tools", { query: "count lines in files" })], () => [say("ok")]]);
    const tools = codeModeTools(t.session, { discovery: true });
    expect(tools.map((tool) => tool.name)).toEqual(["run_code", "search_tools", "describe_tool", "search_workflows"]);
    await runner.run(new Agent({ name: "coder", model, tools }), "go", { maxTurns: 5 });
    expect(lastToolResult(model.requests[1]!)).toContain("tools.wc.lines(");
  });
});

describe("ts-code-mode/openai-agents: approval through the SDK's needsApproval", () => {
  const snippet = 'await artifacts.save("agents-approved.txt", "yes"); "saved"';

  async function interrupted() {
    const model = new ScriptedModel([() => [call("run_code", { code: snippet })], (r) => [say(`after: ${lastToolResult(r)}`)]]);
    const agent = new Agent({ name: "coder", model, tools: codeModeTools(t.session, { needsApproval: (code) => code.includes("artifacts.save") }) });
    const first = await runner.run(agent, "save it", { maxTurns: 5 });
    expect(first.interruptions).toHaveLength(1);
    await expect(t.session.loadArtifact("agents-approved.txt")).rejects.toThrow(/agents-approved/);
    return { agent, first, interruption: first.interruptions[0]! };
  }

  it("a rejected run_code never runs; the model reads the rejection", async () => {
    const { agent, first, interruption } = await interrupted();
    first.state.reject(interruption, { message: "not today" });
    const second = await runner.run(agent, first.state, { maxTurns: 5 });
    expect(second.finalOutput).toBe("after: not today");
    await expect(t.session.loadArtifact("agents-approved.txt")).rejects.toThrow(/agents-approved/);
  });

  it("an approved run_code runs", async () => {
    const { agent, first, interruption } = await interrupted();
    first.state.approve(interruption);
    const second = await runner.run(agent, first.state, { maxTurns: 5 });
    expect(second.finalOutput).toBe("after: --- value ---\nsaved");
    expect(await t.session.loadArtifact("agents-approved.txt")).toBe("yes");
    await t.session.deleteArtifact("agents-approved.txt");
  });
});

describe("ts-code-mode/openai-agents with a durable session: a pause inside the code is a run interruption", () => {
  /** The snippet runs to its pause; the model relays it as a resume call proposing `decision`; the Runner stops with an interruption. */
  async function interrupted(decision: Record<string, unknown>) {
    const j = await durableJournal();
    let pauseText = "";
    const model = new ScriptedModel([
      () => [call("run_code", { code: PAYING_SNIPPET }, "run")],
      (r) => {
        pauseText = lastToolResult(r);
        const continuation = /continuation: "(tcm1\.[^"]+)"/.exec(pauseText)?.[1] ?? "";
        return [call("run_code", { code: PAYING_SNIPPET, resume: { continuation, decisions: [{ id: "call-2", ...decision }] } }, "resume")];
      },
      (r) => [say(`after: ${lastToolResult(r)}`)],
    ]);
    const agent = new Agent({ name: "coder", model, tools: codeModeTools(j.session) });
    const first = await runner.run(agent, "pay", { maxTurns: 6 });
    return { j, agent, first, pauseText, continuation: /continuation: "(tcm1\.[^"]+)"/.exec(pauseText)?.[1] ?? "" };
  }

  it("approved, the run goes on with the proposed decisions; the calls before the pause are not repeated", async () => {
    const { j, agent, first, pauseText } = await interrupted({ decision: "approve" });
    try {
      expect(pauseText).toMatch(/The run paused: 1 call waits[\s\S]*call-2: tools\.journal\.pay\(\{"line":"pay 7"\}\)[\s\S]*A person reviews your resume call/);
      expect(first.interruptions).toHaveLength(1);
      const interruption = first.interruptions[0]!;
      expect(interruption.name).toBe("run_code");
      expect(JSON.parse(interruption.arguments ?? "{}")).toMatchObject({ resume: { decisions: [{ id: "call-2", decision: "approve" }] } });
      expect(await j.lines()).toEqual(["a", "b"]);
      first.state.approve(interruption);
      const second = await runner.run(agent, first.state, { maxTurns: 6 });
      expect(second.finalOutput).toMatch(/^after: --- value ---\n\{[\s\S]*paid: '3'/);
      expect(await j.lines()).toEqual(["a", "b", "pay 7"]);
    } finally {
      await j.close();
    }
  }, 120_000);

  it("an approved edit runs the call with the edited arguments; a run state saved while interrupted resumes too", async () => {
    const { j, agent, first } = await interrupted({ decision: "edit", args: { line: "pay 6" } });
    try {
      // The state survives serialisation (a human may answer in another process).
      const { RunState } = await import("@openai/agents");
      const state = await RunState.fromString(agent, first.state.toString());
      state.approve(state.getInterruptions()[0]!);
      await runner.run(agent, state, { maxTurns: 6 });
      expect(await j.lines()).toEqual(["a", "b", "pay 6"]);
    } finally {
      await j.close();
    }
  }, 120_000);

  it("rejected, the run stays paused and the model reads the message; the application can still decide it", async () => {
    const { j, agent, first, continuation } = await interrupted({ decision: "approve" });
    try {
      first.state.reject(first.interruptions[0]!, { message: "not this month" });
      const second = await runner.run(agent, first.state, { maxTurns: 6 });
      expect(second.finalOutput).toBe("after: not this month");
      expect(await j.lines()).toEqual(["a", "b"]);
      const done = await j.session.resume(continuation, [{ id: "call-2", decision: "reject", reason: "not this month" }]);
      expect(done.value).toMatchObject({ paid: "refused: tools.journal.pay was rejected by a reviewer: not this month" });
      expect(await j.lines()).toEqual(["a", "b"]);
    } finally {
      await j.close();
    }
  }, 120_000);
});
