/**
 * ts-code-mode/ai in a full AI SDK loop: generateText with the SDK's own MockLanguageModelV3 (a
 * scripted model: the one stand-in these tests allow), the adapter's tools and a real session
 * whose snippets call real CLI tools in a child process.
 */
import { generateText, stepCountIs, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import type { LanguageModelV3CallOptions, LanguageModelV3Content, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeModeSystemPrompt, codeModeTools } from "../../src/adapters/ai.js";
import { durableJournal, ECHO_SNIPPET, PAYING_SNIPPET, testSession, type TestSession } from "./session.js";

let t: TestSession;
// A first run may build dist (the child runtime) on a busy machine.
beforeAll(async () => {
  t = await testSession();
}, 180_000);
afterAll(async () => {
  await t?.close();
});

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

function turn(content: LanguageModelV3Content[]): LanguageModelV3GenerateResult {
  const calls = content.some((c) => c.type === "tool-call");
  return { content, finishReason: { unified: calls ? "tool-calls" : "stop", raw: undefined }, usage, warnings: [] };
}

const call = (toolName: string, input: Record<string, unknown>, id = `call-${toolName}`): LanguageModelV3Content => ({ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) });

/** The text of the last tool result the model was sent, and whether it was an error result. */
function lastToolResult(options: LanguageModelV3CallOptions): { text: string; isError: boolean } {
  const tool = options.prompt.filter((m) => m.role === "tool").at(-1);
  const part = tool?.content.filter((p) => p.type === "tool-result").at(-1);
  if (!part || part.type !== "tool-result") throw new Error("no tool result in the prompt");
  const out = part.output;
  if (out.type === "text" || out.type === "error-text") return { text: out.value, isError: out.type === "error-text" };
  throw new Error(`unexpected tool output type ${out.type}`);
}

/** A model that plays `script` one step at a time; each step may look at what the previous tool returned. */
function scripted(script: Array<(options: LanguageModelV3CallOptions) => LanguageModelV3Content[]>): MockLanguageModelV3 {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      const next = script[step++];
      if (!next) throw new Error(`the scripted model has no step ${step}`);
      return turn(next(options));
    },
  });
}

describe("ts-code-mode/ai: a full generateText loop", () => {
  it("the model calls run_code, the snippet runs real tools in the session, the model reads the trimmed result", async () => {
    const model = scripted([
      () => [call("run_code", { code: ECHO_SNIPPET })],
      (options) => [{ type: "text", text: `the tool said: ${lastToolResult(options).text}` }],
    ]);
    const result = await generateText({ model, tools: codeModeTools(t.session), system: await codeModeSystemPrompt(t.session), prompt: "say code mode", stopWhen: stepCountIs(5) });
    expect(result.steps).toHaveLength(2);
    expect(result.text).toBe("the tool said: --- value ---\nCODE MODE");
    // The output for programs: the structured result, as MCP's structuredContent.
    const toolResult = result.steps[0]!.toolResults[0]!;
    expect(toolResult.output).toMatchObject({ isError: false, structured: { ok: true, value: "CODE MODE", cutChars: 0 } });
    // It really ran: the artifact is in the store, and the REPL variable persists into the next run.
    expect(await t.session.loadArtifact("said.txt")).toBe("code mode");
    expect((await t.session.run("said")).value).toBe("code mode");
    // The system prompt went to the model.
    expect(JSON.stringify(model.doGenerateCalls[0]!.prompt[0])).toContain("run_code");
  });

  it("a failing snippet comes back to the model as an error result naming the mistake; the loop goes on", async () => {
    let seen: { text: string; isError: boolean } | undefined;
    const model = scripted([
      () => [call("run_code", { code: 'await tools.ech.say({ text: ["x"] })' })],
      (options) => {
        seen = lastToolResult(options);
        return [{ type: "text", text: "fixed it" }];
      },
    ]);
    const result = await generateText({ model, tools: codeModeTools(t.session), prompt: "go", stopWhen: stepCountIs(5) });
    expect(result.text).toBe("fixed it");
    expect(seen?.isError).toBe(true);
    expect(seen?.text).toMatch(/--- error ---\nNotFoundError: tools\.ech\.say: Unknown tool: ech\. Did you mean: echo/);
  });

  it("output past maxOutput is cut for the model, with a note naming the option", async () => {
    const model = scripted([() => [call("run_code", { code: '"x".repeat(50_000)' })], () => [{ type: "text", text: "ok" }]]);
    const result = await generateText({ model, tools: codeModeTools(t.session, { maxOutput: 1_000 }), prompt: "go", stopWhen: stepCountIs(5) });
    const sent = lastToolResult(model.doGenerateCalls[1]!).text;
    expect(sent.length).toBeLessThanOrEqual(1_000);
    expect(sent).toContain("(maxOutput)");
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({ structured: { ok: true } });
  });

  it("aborting the loop stops a running snippet (the SDK's abortSignal reaches the session)", { timeout: 30_000 }, async () => {
    const controller = new AbortController();
    const model = scripted([
      () => {
        // The model's turn is over; the run starts right after it. Abort while the loop spins.
        setTimeout(() => controller.abort(), 300);
        return [call("run_code", { code: "while (true) {}", timeout_ms: 120_000 })];
      },
    ]);
    await expect(generateText({ model, tools: codeModeTools(t.session), prompt: "spin", abortSignal: controller.signal, stopWhen: stepCountIs(3) })).rejects.toThrow();
    // Without the signal the loop would hold the session for two minutes and this run would wait behind it.
    expect((await t.session.run("1 + 1")).value).toBe(2);
  });

  it("discovery tools find and describe the session's real tools", async () => {
    const model = scripted([
      () => [call("search_tools", { query: "print text", limit: 2 }, "c1")],
      () => [call("describe_tool", { name: "echo" }, "c2")],
      () => [call("describe_tool", { name: "ecko" }, "c3")],
      () => [{ type: "text", text: "done" }],
    ]);
    const tools = codeModeTools(t.session, { discovery: true });
    expect(Object.keys(tools)).toEqual(["run_code", "search_tools", "describe_tool", "search_workflows"]);
    await generateText({ model, tools, prompt: "go", stopWhen: stepCountIs(6) });
    expect(lastToolResult(model.doGenerateCalls[1]!).text).toContain("tools.echo.say(");
    expect(lastToolResult(model.doGenerateCalls[2]!).text).toContain("say(");
    const unknown = lastToolResult(model.doGenerateCalls[3]!);
    expect(unknown).toMatchObject({ isError: true });
    expect(unknown.text).toMatch(/Did you mean: echo/);
  });
});

describe("ts-code-mode/ai: approval through the SDK's needsApproval", () => {
  const snippet = 'await artifacts.save("approved.txt", "yes"); "saved"';

  async function askThenAnswer(approved: boolean) {
    const model = scripted([() => [call("run_code", { code: snippet }, "a1")], () => [{ type: "text", text: "after" }]]);
    const asked: string[] = [];
    const tools = codeModeTools(t.session, { needsApproval: (code) => (asked.push(code), code.includes("artifacts.save")) });
    const first = await generateText({ model, tools, prompt: "save it", stopWhen: stepCountIs(5) });
    const request = first.content.find((c) => c.type === "tool-approval-request");
    expect(request, "the step ends with an approval request").toBeDefined();
    expect(asked).toEqual([snippet]);
    // Nothing ran while the question was open.
    await expect(t.session.loadArtifact("approved.txt")).rejects.toThrow(/approved\.txt/);
    const messages: ModelMessage[] = [
      { role: "user", content: "save it" },
      ...first.response.messages,
      { role: "tool", content: [{ type: "tool-approval-response", approvalId: request!.approvalId, approved, ...(approved ? {} : { reason: "not today" }) }] },
    ];
    const second = await generateText({ model, tools, messages, stopWhen: stepCountIs(5) });
    return { second, model };
  }

  it("a rejected run_code never runs its code", async () => {
    const { second } = await askThenAnswer(false);
    expect(second.text).toBe("after");
    await expect(t.session.loadArtifact("approved.txt")).rejects.toThrow(/approved\.txt/);
  });

  it("an approved run_code runs", async () => {
    const { second } = await askThenAnswer(true);
    expect(second.text).toBe("after");
    expect(await t.session.loadArtifact("approved.txt")).toBe("yes");
    await t.session.deleteArtifact("approved.txt");
  });

  it("code the function does not flag runs without asking", async () => {
    const model = scripted([() => [call("run_code", { code: "1 + 1" })], () => [{ type: "text", text: "two" }]]);
    const result = await generateText({ model, tools: codeModeTools(t.session, { needsApproval: (code) => code.includes("artifacts") }), prompt: "add", stopWhen: stepCountIs(5) });
    expect(result.content.some((c) => c.type === "tool-approval-request")).toBe(false);
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({ structured: { value: 2 } });
  });

  it("bad options fail when the tools are made", () => {
    expect(() => codeModeTools(t.session, { maxOutput: 10 })).toThrow(/maxOutput must be a whole number of characters >= 500/);
    expect(() => codeModeTools(t.session, { needsApproval: "yes" as unknown as boolean })).toThrow(/needsApproval must be/);
    expect(() => codeModeTools(t.session, { approveResume: "yes" as unknown as boolean })).toThrow(/approveResume must be true or false/);
  });
});

describe("ts-code-mode/ai with a durable session: a pause inside the code", () => {
  it("run_code's result says the run paused and how to resume; the model's resume finishes it, a second one is refused", async () => {
    const { journalFixture, SECRET } = await import("../runs/fixture.js");
    const { FileStorage, Session, SubprocessExecutor } = await import("../../src/index.js");
    const fx = await journalFixture();
    const session = new Session({ storage: new FileStorage({ basePath: fx.storage }), executor: new SubprocessExecutor({ toolsPath: fx.tools }), durable: { secret: SECRET } });
    try {
      const code = `await tools.journal.add({ line: "a" }); (await tools.journal.pay({ line: "pay 7" })).trim()`;
      let pauseText = "";
      let continuation = "";
      let refusal = { text: "", isError: false };
      const model = scripted([
        () => [call("run_code", { code })],
        (options) => {
          pauseText = lastToolResult(options).text;
          continuation = /continuation: "(tcm1\.[^"]+)"/.exec(pauseText)?.[1] ?? "";
          return [call("run_code", { code, resume: { continuation, decisions: [{ id: "call-1", decision: "edit", args: { line: "pay 6" } }] } }, "resume-1")];
        },
        () => [call("run_code", { code, resume: { continuation, decisions: [{ id: "call-1", decision: "approve" }] } }, "resume-2")],
        (options) => {
          refusal = lastToolResult(options);
          return [{ type: "text", text: "done" }];
        },
      ]);
      // approveResume: false — the model's resume goes on at once, as MCP's run_code (the default asks a human: below).
      const result = await generateText({ model, tools: codeModeTools(session, { approveResume: false }), prompt: "pay", stopWhen: stepCountIs(6) });
      expect(pauseText).toMatch(/The run paused: 1 call waits for a decision[\s\S]*call-1: tools\.journal\.pay\(\{"line":"pay 7"\}\) — payments need a human's approval[\s\S]*call run_code again with resume/);
      // What a program (the application, not the model) reads: the pause, structured.
      expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({ isError: true, structured: { status: "paused", pending: [{ id: "call-1", tool: "journal", callable: "pay" }], continuation } });
      expect(result.steps[1]!.toolResults[0]!.output).toMatchObject({ isError: false, structured: { ok: true, status: "completed", value: "2" } });
      expect(await fx.lines()).toEqual(["a", "pay 6"]);
      expect(refusal.isError).toBe(true);
      expect(refusal.text).toMatch(/ContinuationUsedError/);
      // A session that is not durable keeps run_code's arguments as they were.
      const keys = (s: typeof session) => Object.keys((codeModeTools(s).run_code.inputSchema as unknown as { shape: object }).shape);
      expect(keys(session)).toEqual(["code", "timeout_ms", "resume"]);
      expect(keys(t.session)).toEqual(["code", "timeout_ms"]);
    } finally {
      await session.close();
      await rm(fx.dir, { recursive: true, force: true, maxRetries: 5 });
    }
  }, 120_000);
});

describe("ts-code-mode/ai with a durable session: a pause inside the code is the SDK's tool approval", () => {
  /** The pause's proposal the model relays: its resume call, with the continuation from run_code's text. */
  const resumeCall = (options: LanguageModelV3CallOptions, decision: Record<string, unknown>): LanguageModelV3Content => {
    const continuation = /continuation: "(tcm1\.[^"]+)"/.exec(lastToolResult(options).text)?.[1] ?? "";
    return call("run_code", { code: PAYING_SNIPPET, resume: { continuation, decisions: [{ id: "call-2", ...decision }] } }, "resume");
  };

  /** Runs the snippet to its pause and the model's resume call; returns what the SDK asked. */
  async function paused(decision: Record<string, unknown>, after: (options: LanguageModelV3CallOptions) => LanguageModelV3Content[]) {
    const j = await durableJournal();
    let pauseText = "";
    const model = scripted([
      () => [call("run_code", { code: PAYING_SNIPPET }, "run")],
      (options) => {
        pauseText = lastToolResult(options).text;
        return [resumeCall(options, decision)];
      },
      after,
    ]);
    const tools = codeModeTools(j.session);
    const first = await generateText({ model, tools, prompt: "pay", stopWhen: stepCountIs(6) });
    const request = first.content.find((c) => c.type === "tool-approval-request");
    return { j, model, tools, first, request, pauseText };
  }

  async function answer(p: Awaited<ReturnType<typeof paused>>, approved: boolean, reason?: string) {
    const messages: ModelMessage[] = [
      { role: "user", content: "pay" },
      ...p.first.response.messages,
      { role: "tool", content: [{ type: "tool-approval-response", approvalId: p.request!.approvalId, approved, ...(reason ? { reason } : {}) }] },
    ];
    return generateText({ model: p.model, tools: p.tools, messages, stopWhen: stepCountIs(6) });
  }

  it("the model's resume call waits for a tool-approval-response; approved, the run goes on without repeating its calls", async () => {
    const p = await paused({ decision: "approve" }, (options) => [{ type: "text", text: `done: ${lastToolResult(options).text}` }]);
    try {
      expect(p.pauseText).toMatch(/A person reviews your resume call/);
      // The step ended with the SDK's own approval request for the resumption, and nothing ran past the pause.
      expect(p.request?.toolCall).toMatchObject({ toolName: "run_code", input: { resume: { decisions: [{ id: "call-2", decision: "approve" }] } } });
      expect(p.first.steps[0]!.toolResults[0]!.output).toMatchObject({ structured: { status: "paused", pending: [{ id: "call-2", tool: "journal", callable: "pay", args: { line: "pay 7" } }] } });
      expect(await p.j.lines()).toEqual(["a", "b"]);
      const second = await answer(p, true);
      // The SDK ran the approved call before the model's next step; the model read the finished run.
      expect(second.text).toMatch(/^done: --- value ---\n\{[\s\S]*paid: '3'/);
      // "a" and "b" ran once each: the resumed run was served them from the ledger.
      expect(await p.j.lines()).toEqual(["a", "b", "pay 7"]);
    } finally {
      await p.j.close();
    }
  }, 120_000);

  it("approving an edit the model proposes runs the call with the edited arguments", async () => {
    const p = await paused({ decision: "edit", args: { line: "pay 6" } }, () => [{ type: "text", text: "done" }]);
    try {
      expect(await p.j.lines()).toEqual(["a", "b"]);
      await answer(p, true);
      expect(await p.j.lines()).toEqual(["a", "b", "pay 6"]);
    } finally {
      await p.j.close();
    }
  }, 120_000);

  it("a denied resumption leaves the run paused and tells the model why; the application can still decide it", async () => {
    let denial: unknown;
    const p = await paused({ decision: "approve" }, (options) => {
      denial = options.prompt.filter((m) => m.role === "tool").at(-1)?.content.at(-1);
      return [{ type: "text", text: "waiting for the reviewer" }];
    });
    try {
      const second = await answer(p, false, "not this month");
      expect(second.text).toBe("waiting for the reviewer");
      expect(denial).toMatchObject({ type: "tool-result", toolName: "run_code", output: { type: "execution-denied", reason: "not this month" } });
      expect(await p.j.lines()).toEqual(["a", "b"]);
      // The continuation was not used: the application (or a later approval) decides the call.
      const { continuation } = p.first.steps[0]!.toolResults[0]!.output.structured as { continuation: string };
      const done = await p.j.session.resume(continuation, [{ id: "call-2", decision: "reject", reason: "not this month" }]);
      expect(done.value).toEqual({ a: "1", b: "2", paid: "refused: tools.journal.pay was rejected by a reviewer: not this month" });
      expect(await p.j.lines()).toEqual(["a", "b"]);
    } finally {
      await p.j.close();
    }
  }, 120_000);
});
