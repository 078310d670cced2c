/**
 * ts-code-mode/langchain in a full createAgent loop: LangChain's own fake chat model (`fakeModel()`,
 * scripted; the model is the one stand-in these tests allow), the adapter's tools and a real
 * session whose snippets call real CLI tools in a child process.
 */
import { Command, MemorySaver } from "@langchain/langgraph";
import { AIMessage, createAgent, fakeModel, ToolMessage, type BaseMessage } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeModeApproval, codeModePauses, codeModeSystemPrompt, codeModeTools } from "../../src/adapters/langchain.js";
import { durableJournal, ECHO_SNIPPET, PAYING_SNIPPET, testSession, type TestSession } from "./session.js";

let t: TestSession;
// A first run may build dist (the child runtime) on a busy machine.
beforeAll(async () => {
  t = await testSession();
}, 180_000);
afterAll(async () => {
  await t?.close();
});

function lastTool(messages: BaseMessage[]): ToolMessage {
  const m = messages.filter((x): x is ToolMessage => ToolMessage.isInstance(x)).at(-1);
  if (!m) throw new Error("no ToolMessage");
  return m;
}

const text = (m: BaseMessage) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));

describe("ts-code-mode/langchain: a full createAgent loop", () => {
  it("the agent calls run_code, the snippet runs real tools, the model reads the text and programs get the artifact", async () => {
    const model = fakeModel()
      .respondWithTools([{ name: "run_code", args: { code: ECHO_SNIPPET }, id: "c1" }])
      .respond((messages) => new AIMessage(`the tool said: ${text(lastTool(messages))}`));
    const agent = createAgent({ model, tools: codeModeTools(t.session), systemPrompt: await codeModeSystemPrompt(t.session) });
    const result = await agent.invoke({ messages: [{ role: "user", content: "say code mode" }] });
    expect(text(result.messages.at(-1)!)).toBe("the tool said: --- value ---\nCODE MODE");
    expect(lastTool(result.messages).artifact).toMatchObject({ isError: false, ok: true, value: "CODE MODE" });
    expect(await t.session.loadArtifact("said.txt")).toBe("code mode");
    expect(text(model.calls[0]!.messages[0]!)).toContain("run_code");
  });

  it("a failing snippet comes back as text naming the mistake", async () => {
    const model = fakeModel()
      .respondWithTools([{ name: "run_code", args: { code: 'await tools.ech.say({ text: ["x"] })' }, id: "c1" }])
      .respond(new AIMessage("done"));
    const result = await createAgent({ model, tools: codeModeTools(t.session) }).invoke({ messages: [{ role: "user", content: "go" }] });
    expect(text(lastTool(result.messages))).toMatch(/--- error ---\nNotFoundError: tools\.ech\.say: Unknown tool: ech\. Did you mean: echo/);
    expect(lastTool(result.messages).artifact).toMatchObject({ isError: true, ok: false });
  });

  it("discovery tools describe the session's real tools", async () => {
    const model = fakeModel()
      .respondWithTools([{ name: "describe_tool", args: { name: "wc" }, id: "c1" }])
      .respond(new AIMessage("ok"));
    const tools = codeModeTools(t.session, { discovery: true });
    expect(tools.map((tool) => tool.name)).toEqual(["run_code", "search_tools", "describe_tool", "search_workflows"]);
    const result = await createAgent({ model, tools }).invoke({ messages: [{ role: "user", content: "go" }] });
    expect(text(lastTool(result.messages))).toContain("lines(");
  });

  it("needsApproval is refused with the way to do it in LangChain", () => {
    expect(() => codeModeTools(t.session, { needsApproval: true } as never)).toThrow(/codeModeApproval\(\)/);
  });
});

describe("ts-code-mode/langchain: approval through the human-in-the-loop middleware", () => {
  const snippet = 'await artifacts.save("lc-approved.txt", "yes"); "saved"';

  async function interrupted(threadId: string) {
    const model = fakeModel()
      .respondWithTools([{ name: "run_code", args: { code: snippet }, id: "a1" }])
      .respond((messages) => new AIMessage(`after: ${text(lastTool(messages))}`));
    const agent = createAgent({ model, tools: codeModeTools(t.session), middleware: [codeModeApproval((code) => code.includes("artifacts.save"))], checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: threadId } };
    const first = await agent.invoke({ messages: [{ role: "user", content: "save it" }] }, config);
    expect(first.__interrupt__, "the run stops with an interrupt").toBeDefined();
    await expect(t.session.loadArtifact("lc-approved.txt")).rejects.toThrow(/lc-approved/);
    return { agent, config };
  }

  it("a rejected run_code never runs; the model reads the reason", async () => {
    const { agent, config } = await interrupted("reject");
    const second = await agent.invoke(new Command({ resume: { decisions: [{ type: "reject", message: "not today" }] } }), config);
    expect(text(second.messages.at(-1)!)).toContain("not today");
    await expect(t.session.loadArtifact("lc-approved.txt")).rejects.toThrow(/lc-approved/);
  });

  it("an approved run_code runs", async () => {
    const { agent, config } = await interrupted("approve");
    const second = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
    expect(text(second.messages.at(-1)!)).toBe("after: --- value ---\nsaved");
    expect(await t.session.loadArtifact("lc-approved.txt")).toBe("yes");
    await t.session.deleteArtifact("lc-approved.txt");
  });
});

describe("ts-code-mode/langchain with a durable session: a pause inside the code is a LangChain interrupt", () => {
  const continuationIn = (messages: BaseMessage[]) => /continuation: "(tcm1\.[^"]+)"/.exec(text(lastTool(messages)))?.[1] ?? "";

  /** The snippet runs to its pause; the model relays it as a resume call proposing approval; codeModeApproval() interrupts. */
  async function interrupted(threadId: string) {
    const j = await durableJournal();
    const model = fakeModel()
      .respondWithTools([{ name: "run_code", args: { code: PAYING_SNIPPET }, id: "run" }])
      .respond((messages) => new AIMessage({ content: "", tool_calls: [{ name: "run_code", args: { code: PAYING_SNIPPET, resume: { continuation: continuationIn(messages), decisions: [{ id: "call-2", decision: "approve" }] } }, id: "resume", type: "tool_call" }] }))
      .respond((messages) => new AIMessage(`after: ${text(lastTool(messages))}`));
    // codeModeApproval(false): plain runs go ahead, resumptions of paused runs wait for a human.
    const agent = createAgent({ model, tools: codeModeTools(j.session, { approveResume: true }), middleware: [codeModeApproval(false)], checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: threadId } };
    const first = await agent.invoke({ messages: [{ role: "user", content: "pay" }] }, config);
    const paused = lastTool(first.messages);
    return { j, agent, config, first, paused, continuation: continuationIn(first.messages) };
  }

  it("the interrupt describes the pending calls; approved, the run goes on and the calls before the pause are not repeated", async () => {
    const { j, agent, config, first, paused } = await interrupted("approve");
    try {
      expect(text(paused)).toMatch(/The run paused[\s\S]*A person reviews your resume call/);
      expect(paused.artifact).toMatchObject({ status: "paused", pending: [{ id: "call-2", tool: "journal", callable: "pay" }] });
      const request = (first.__interrupt__ as Array<{ value: { actionRequests: Array<{ name: string; args: Record<string, unknown>; description: string }> } }>)[0]!.value.actionRequests[0]!;
      expect(request.name).toBe("run_code");
      expect(request.description).toMatch(/call-2: tools\.journal\.pay\(\{"line":"pay 7"\}\) — payments need a human's approval[\s\S]*The agent proposes: \[\{"id":"call-2","decision":"approve"\}\]/);
      expect(await j.lines()).toEqual(["a", "b"]);
      const second = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
      expect(text(second.messages.at(-1)!)).toMatch(/^after: --- value ---/);
      expect(lastTool(second.messages).artifact).toMatchObject({ status: "completed", value: { a: "1", b: "2", paid: "3" } });
      expect(await j.lines()).toEqual(["a", "b", "pay 7"]);
    } finally {
      await j.close();
    }
  }, 120_000);

  it("edited, the run goes on with the reviewer's decisions (here: other arguments)", async () => {
    const { j, agent, config, continuation } = await interrupted("edit");
    try {
      const args = { code: PAYING_SNIPPET, resume: { continuation, decisions: [{ id: "call-2", decision: "edit", args: { line: "pay 6" } }] } };
      await agent.invoke(new Command({ resume: { decisions: [{ type: "edit", editedAction: { name: "run_code", args } }] } }), config);
      expect(await j.lines()).toEqual(["a", "b", "pay 6"]);
    } finally {
      await j.close();
    }
  }, 120_000);

  it("a reviewer's reject decision reaches the code as the call's ToolError", async () => {
    const { j, agent, config, continuation } = await interrupted("reject-inside");
    try {
      const args = { code: PAYING_SNIPPET, resume: { continuation, decisions: [{ id: "call-2", decision: "reject", reason: "not this month" }] } };
      const second = await agent.invoke(new Command({ resume: { decisions: [{ type: "edit", editedAction: { name: "run_code", args } }] } }), config);
      expect(lastTool(second.messages).artifact).toMatchObject({ status: "completed", value: { paid: "refused: tools.journal.pay was rejected by a reviewer: not this month" } });
      expect(await j.lines()).toEqual(["a", "b"]);
    } finally {
      await j.close();
    }
  }, 120_000);

  it("rejected, the resumption does not run: the run stays paused and the model reads the message", async () => {
    const { j, agent, config, continuation } = await interrupted("reject");
    try {
      const second = await agent.invoke(new Command({ resume: { decisions: [{ type: "reject", message: "not this month" }] } }), config);
      expect(text(second.messages.at(-1)!)).toBe("after: not this month");
      expect(await j.lines()).toEqual(["a", "b"]);
      // Still paused: a later decision (here the application's) goes on.
      const done = await j.session.resume(continuation, [{ id: "call-2", decision: "approve" }]);
      expect(done.value).toEqual({ a: "1", b: "2", paid: "3" });
      expect(await j.lines()).toEqual(["a", "b", "pay 7"]);
    } finally {
      await j.close();
    }
  }, 120_000);
});

describe("ts-code-mode/langchain: codeModePauses() — a pause inside the code interrupts before the model reads it", () => {
  type Request = { name: string; args: unknown; description: string };
  const requestsOf = (result: { __interrupt__?: unknown }) => ((result.__interrupt__ as Array<{ value: { actionRequests: Request[] } }> | undefined)?.[0]?.value.actionRequests ?? []);

  async function interrupted(threadId: string, code = PAYING_SNIPPET) {
    const j = await durableJournal();
    const model = fakeModel()
      .respondWithTools([{ name: "run_code", args: { code }, id: "run" }])
      .respond((messages) => new AIMessage(`after: ${text(lastTool(messages))}`));
    const agent = createAgent({ model, tools: codeModeTools(j.session), middleware: [codeModePauses(j.session)], checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: threadId } };
    const first = await agent.invoke({ messages: [{ role: "user", content: "pay" }] }, config);
    return { j, agent, config, first, model };
  }

  it("one action request per pending call; approved, the run goes on from the ledger and the model reads only its result", async () => {
    const { j, agent, config, first, model } = await interrupted("pauses-approve");
    try {
      expect(requestsOf(first)).toEqual([{ name: "tools.journal.pay", args: { line: "pay 7" }, description: "payments need a human's approval" }]);
      expect(await j.lines()).toEqual(["a", "b"]);
      expect(model.calls).toHaveLength(1); // the model has not seen the pause
      const second = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
      expect(text(second.messages.at(-1)!)).toBe("after: --- value ---\n{ a: '1', b: '2', paid: '3' }");
      // The paused ToolMessage was replaced, not followed: one tool result for the one call.
      expect(second.messages.filter((m) => ToolMessage.isInstance(m))).toHaveLength(1);
      expect(lastTool(second.messages).artifact).toMatchObject({ status: "completed", isError: false });
      expect(JSON.stringify(model.calls[1]!.messages)).not.toContain("The run paused");
      expect(await j.lines()).toEqual(["a", "b", "pay 7"]);
    } finally {
      await j.close();
    }
  }, 120_000);

  it("edit runs the call with the reviewer's arguments", async () => {
    const { j, agent, config } = await interrupted("pauses-edit");
    try {
      await agent.invoke(new Command({ resume: { decisions: [{ type: "edit", editedAction: { name: "tools.journal.pay", args: { line: "pay 6" } } }] } }), config);
      expect(await j.lines()).toEqual(["a", "b", "pay 6"]);
    } finally {
      await j.close();
    }
  }, 120_000);

  it("a run that pauses again after its resume reaches the model as a pause (one interrupt per model step)", async () => {
    const code = 'await tools.journal.pay({ line: "pay 1" });\nawait tools.journal.pay({ line: "pay 2" });\n"both"';
    const { j, agent, config, first } = await interrupted("pauses-twice", code);
    try {
      expect(requestsOf(first).map((r) => r.args)).toEqual([{ line: "pay 1" }]);
      const second = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
      expect(second.__interrupt__).toBeUndefined();
      expect(text(second.messages.at(-1)!)).toMatch(/^after: [\s\S]*The run paused: 1 call waits[\s\S]*call-1: tools\.journal\.pay\(\{"line":"pay 2"\}\)/);
      expect(await j.lines()).toEqual(["pay 1"]);
    } finally {
      await j.close();
    }
  }, 120_000);

  it("calls paused together (Promise.all) are decided together; a reject reaches the code as the call's ToolError", async () => {
    const code = 'await tools.journal.add({ line: "a" });\nconst r = await Promise.allSettled([tools.journal.pay({ line: "pay 1" }), tools.journal.pay({ line: "pay 2" })]);\nr.map((x) => x.status === "fulfilled" ? "paid" : x.reason.message)';
    const { j, agent, config, first } = await interrupted("pauses-reject", code);
    try {
      expect(requestsOf(first).map((r) => r.args)).toEqual([{ line: "pay 1" }, { line: "pay 2" }]);
      // A malformed answer is asked again, naming the problem; nothing ran.
      const again = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
      expect((again.__interrupt__ as Array<{ value: { error?: string } }>)[0]!.value.error).toMatch(/one per pending call in order \(2: call-1, call-2\)/);
      expect(await j.lines()).toEqual(["a"]);
      const second = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }, { type: "reject", message: "not this month" }] } }), config);
      expect(lastTool(second.messages).artifact).toMatchObject({ status: "completed", value: ["paid", "tools.journal.pay was rejected by a reviewer: not this month"] });
      expect(await j.lines()).toEqual(["a", "pay 1"]);
    } finally {
      await j.close();
    }
  }, 120_000);
});
