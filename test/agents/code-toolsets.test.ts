/**
 * Toolsets written in code (issue 38 item 1): project.json lists TypeScript modules (loaded without
 * a build step) whose named exports are toolsets of defineTool tools; agents name them in `tools`.
 * A defineToolset({ create }) toolset gets a fresh instance per agent call — state local to the
 * call, closed when it ends — and its needs_approval tools wait for approval.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentFileError, loadAgentProject, runAgent } from "../../src/index.js";
import { ensureBuilt, REPO } from "../cli/harness.js";
import { projectsRemovedAfterEach } from "./project.js";
import { scripted, toolResults } from "./scripted.js";

const project = projectsRemovedAfterEach(afterEach);
// The module imports the built package by path: the project lives in a temp folder, outside the repo.
const PKG = pathToFileURL(path.join(REPO, "dist/index.js")).href;

const COUNTER = `
import { appendFileSync } from "node:fs";
import { defineTool, defineToolset } from ${JSON.stringify(PKG)};

interface Call { agent: string; depth: number; projectDir: string }

export const counter = defineToolset({
  needs_approval: ["reset"],
  create: ({ agent, depth, projectDir }: Call) => {
    let n: number = 0;
    const bump = defineTool({
      name: "bump",
      description: "Add to this call's counter",
      input: { type: "object", properties: { by: { type: "integer" } }, required: ["by"] },
      execute: ({ by }: { by: number }) => (n += by),
    });
    const reset = defineTool({ name: "reset", description: "Set the counter to 0", input: { type: "object", properties: {} }, execute: () => (n = 0) });
    return { tools: [bump, reset], close: () => appendFileSync(projectDir + "/closed.log", agent + "@" + depth + " at " + n + "\\n") };
  },
});

export const stateless = [defineTool({ name: "hello", description: "Greets", input: { type: "object", properties: { who: { type: "string" } } }, execute: ({ who }: { who?: string }) => "hello " + (who ?? "you") })];
export const notATool = 42;
`;

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

describe("code toolsets", () => {
  it("per-call instances: state is the call's own and closed at its end; needs_approval tools wait for approval", async () => {
    const dir = await project([{ name: "main", tools: ["counter", "stateless", "helper"] }, { name: "helper", tools: ["counter"] }], { toolsets: ["./tools/counter.ts"], agent_calls_need_approval: false }, { "tools/counter.ts": COUNTER });
    const main = scripted([
      { tool: "bump", args: { by: 1 } },
      { tool: "bump", args: { by: 2 } },
      { tool: "helper", args: { input: "count" } },
      { tools: [{ tool: "hello", args: { who: "ada" } }, { tool: "reset", args: {} }, { tool: "bump", args: { by: "x" } }] },
      { text: "done" },
    ]);
    const helper = scripted([{ tool: "bump", args: { by: 5 } }, { text: "helper counted" }]);
    await runAgent(dir, "go", { model: (a) => (a.name === "main" ? main : helper), approvalMode: "reject_all" });
    expect(toolResults(main.prompts[1])).toEqual(["1"]);
    expect(toolResults(main.prompts[2])).toEqual(["1", "3"]);
    // The helper's call got its own instance: it starts at 0, not at main's 3.
    expect(toolResults(helper.prompts[1])).toEqual(["5"]);
    const [, , , hello, reset, bad] = toolResults(main.prompts[4]);
    expect(hello).toBe("hello ada");
    expect(reset).toMatch(/Tool call reset was not run/);
    expect(bad).toMatch(/Invalid input for tool bump|by/);
    // Each instance was closed when its call ended: the helper's first, then main's (reset was rejected: still 3).
    expect(await readFile(path.join(dir, "closed.log"), "utf8")).toBe("helper@1 at 5\nmain@0 at 3\n");
  }, 60_000);

  it("a module that fails to load, exports no toolset or shadows a built-in is an error naming project.json's line", async () => {
    const cases: Array<[string, RegExp]> = [
      ["export const x = ;", /project\.json:\d+: toolsets: \.\/tools\/t\.ts failed to load/],
      ["export const n = 1;", /project\.json:\d+: toolsets: \.\/tools\/t\.ts exports no toolset/],
      [`import { defineTool } from ${JSON.stringify(PKG)};\nexport const code = [defineTool({ name: "a", description: "", input: {}, execute: () => 1 })];`, /exports code, the name of a built-in toolset/],
    ];
    for (const [source, message] of cases) {
      const dir = await project([{ name: "main" }], { toolsets: ["./tools/t.ts"] }, { "tools/t.ts": source });
      const err = await loadAgentProject(dir).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AgentFileError);
      expect((err as Error).message).toMatch(message);
    }
    const dir = await project([{ name: "main", tools: ["countr"] }], { toolsets: ["./tools/counter.ts"] }, { "tools/counter.ts": COUNTER });
    await expect(loadAgentProject(dir)).rejects.toThrow(/unknown tool "countr": not a toolset \(.*counter, stateless\)/);
  }, 60_000);
});
