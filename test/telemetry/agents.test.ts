/**
 * Agent calls as gen_ai `invoke_agent` spans (scripted models, real runs): the entry agent and the
 * agent it calls, their depth, model and tokens, the child's span inside the parent's, and the
 * child's run and its tool call inside the child's span.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createRuntime, type AgentSpec } from "../../src/index.js";
import { projectsRemovedAfterEach } from "../agents/project.js";
import { scripted } from "../agents/scripted.js";
import { parentId, registerInMemoryOtel, type InMemoryOtel } from "../helpers/otel.js";

const project = projectsRemovedAfterEach(afterEach);
let otel: InMemoryOtel;
beforeAll(() => {
  otel = registerInMemoryOtel();
});
afterAll(async () => {
  await otel.stop();
});

describe("agent spans", () => {
  it("invoke_agent spans nest by call, with agent, depth, model and tokens; the child's run is inside its span", async () => {
    const dir = await project(
      [
        { name: "main", tools: ["analyst"] },
        { name: "analyst", tools: ["code"], description: "Computes things" },
      ],
      { agent_calls_need_approval: false, code_mode: { base: ".code-mode", executor: "in-process" } },
    );
    const main = scripted([{ tool: "analyst", args: { input: "what is 6*7?" } }, { text: "42." }]);
    const analyst = scripted([{ tool: "run_code", args: { code: "6 * 7" } }, { text: "42" }]);
    const models = { main, analyst };
    const runtime = await createRuntime(dir, { model: (a: AgentSpec) => models[a.name as keyof typeof models] });
    expect((await runtime.run("Ask the analyst.")).answer).toBe("42.");
    const [mainSpan] = otel.named("invoke_agent main");
    const [childSpan] = otel.named("invoke_agent analyst");
    expect(mainSpan!.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "main", "code_mode.agent.depth": 0 });
    expect(typeof mainSpan!.attributes["gen_ai.request.model"]).toBe("string");
    expect(childSpan!.attributes).toMatchObject({ "gen_ai.agent.name": "analyst", "code_mode.agent.depth": 1 });
    expect(Number(childSpan!.attributes["gen_ai.usage.input_tokens"])).toBeGreaterThanOrEqual(0);
    expect(childSpan!.spanContext().traceId).toBe(mainSpan!.spanContext().traceId);
    // The child's span is under the parent's (through the AI SDK's tool-call span when it makes one).
    const ancestors = (span: typeof childSpan) => {
      const ids: string[] = [];
      let p = parentId(span!);
      while (p) {
        ids.push(p);
        p = parentId(otel.spans().find((s) => s.spanContext().spanId === p)!);
      }
      return ids;
    };
    expect(ancestors(childSpan)).toContain(mainSpan!.spanContext().spanId);
    const run = otel.named("code_mode.session.run")[0]!;
    expect(ancestors(run)).toContain(childSpan!.spanContext().spanId);
  }, 120_000);
});
