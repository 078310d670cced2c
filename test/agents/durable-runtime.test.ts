/**
 * Durable code runs in the runtime (library form, scripted models, a real command-line tool):
 * with nobody to ask, the entry's run ends with AgentRunPausedError once the step's other tool
 * calls are done; its state, through JSON, resumes in a new runtime (another process in real use)
 * where the code's earlier calls are not made again and the model reads every result of the step.
 * A child agent's paused code, with nobody to ask, has its calls rejected with the reason.
 */
import { copyFile, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentRunPausedError, createRuntime, type PausedAgentRun } from "../../src/index.js";
import { journalFixture, SECRET, type JournalFixture } from "../runs/fixture.js";
import { setEnv } from "../helpers/env.js";
import { projectsRemovedAfterEach } from "./project.js";
import { scripted, toolResults } from "./scripted.js";

const project = projectsRemovedAfterEach(afterEach);
const CODE = `const n = (await tools.journal.add({ line: "a" })).trim(); [n, (await tools.journal.pay({ line: "pay 100" })).trim()]`;
let fx: JournalFixture;

let restoreEnv: (() => void) | undefined;
beforeAll(() => {
  restoreEnv = setEnv({ TS_CODE_MODE_RUNS_SECRET: SECRET });
});
afterAll(() => {
  restoreEnv?.();
});
afterEach(async () => {
  await rm(fx.dir, { recursive: true, force: true, maxRetries: 5 });
});

async function withJournal(dir: string): Promise<string> {
  await mkdir(path.join(dir, ".code-mode/tools"), { recursive: true });
  await copyFile(path.join(fx.tools, "journal.yaml"), path.join(dir, ".code-mode/tools/journal.yaml"));
  return dir;
}

describe("durable code runs in the agent runtime", () => {
  it("suspends after the step's sibling call ends; the state resumes through JSON in a new runtime", async () => {
    fx = await journalFixture();
    const dir = await withJournal(
      await project([{ name: "main", tools: ["code", "filesystem_project_ro"] }], { approval_mode: "prompt", code_mode: { base: ".code-mode", executor: "in-process", durable: true } }, { "note.txt": "hello from the note" }),
    );
    const first = scripted([{ tools: [{ tool: "run_code", args: { code: CODE } }, { tool: "read_file", args: { path: "note.txt" } }] }]);
    const runtime = await createRuntime(dir, { model: first });
    const err = await runtime.run("pay").then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AgentRunPausedError);
    const state = JSON.parse(JSON.stringify((err as AgentRunPausedError).state)) as PausedAgentRun;
    expect(state.code?.pending).toMatchObject([{ id: "call-1", tool: "journal", callable: "pay", args: { line: "pay 100" } }]);
    expect(state.results).toMatchObject([{ toolName: "read_file", output: { type: "text", value: expect.stringContaining("hello from the note") } }]);
    expect(await fx.lines()).toEqual(["a"]);

    const second = scripted([{ text: "paid" }]);
    const later = await createRuntime(dir, { model: second });
    const done = await later.resume(state, [{ id: "call-1", decision: "approve" }]);
    expect(done.answer).toBe("paid");
    expect(await fx.lines()).toEqual(["a", "pay 100"]);
    const results = toolResults(second.prompts[0]);
    expect(results).toHaveLength(2);
    expect(results.join("\n")).toContain("hello from the note");
    expect(results.join("\n")).toMatch(/--- value ---\s*\[ '1', '2' \]/);

    // The continuation is single-use: the same state cannot be resumed twice.
    const third = await createRuntime(dir, { model: scripted([{ text: "again" }]) });
    await expect(third.resume(state, [{ id: "call-1", decision: "approve" }])).rejects.toThrow(/ContinuationUsed|already/);
    expect(await fx.lines()).toEqual(["a", "pay 100"]);
  }, 60_000);

  it("a state that is not one is refused by name; onApproval decides a pause in place", async () => {
    fx = await journalFixture();
    const dir = await withJournal(await project([{ name: "main", tools: ["code"] }], { approval_mode: "prompt", code_mode: { base: ".code-mode", executor: "in-process", durable: true } }));
    const runtime = await createRuntime(dir, { model: scripted([{ text: "x" }]) });
    await expect(runtime.resume({ version: 2 } as unknown as PausedAgentRun)).rejects.toMatchObject({ name: "ValidationError" });

    const asked: string[] = [];
    const model = scripted([{ tool: "run_code", args: { code: CODE } }, { text: "done" }]);
    const inPlace = await createRuntime(dir, { model, onApproval: (req) => (asked.push(`${req.tool} ${JSON.stringify(req.args)}`), { kind: "edit", args: { line: "pay 7" } }) });
    expect((await inPlace.run("pay")).answer).toBe("done");
    expect(asked).toEqual(['journal.pay {"line":"pay 100"}']);
    expect(await fx.lines()).toEqual(["a", "pay 7"]);
  }, 60_000);

  it("a child agent's paused code, with nobody to ask, has its calls rejected with the reason", async () => {
    fx = await journalFixture();
    const dir = await withJournal(
      await project([{ name: "main", tools: ["payer"] }, { name: "payer", tools: ["code"], description: "pays" }], { approval_mode: "prompt", agent_calls_need_approval: false, code_mode: { base: ".code-mode", executor: "in-process", durable: true } }),
    );
    const main = scripted([{ tool: "payer", args: { input: "pay" } }, { text: "main done" }]);
    const payer = scripted([{ tool: "run_code", args: { code: CODE } }, { text: "payer done" }]);
    const runtime = await createRuntime(dir, { model: (spec) => (spec.name === "main" ? main : payer) });
    expect((await runtime.run("go")).answer).toBe("main done");
    expect(toolResults(payer.prompts[1]).join("\n")).toMatch(/rejected by a reviewer: no one can approve it/);
    expect(await fx.lines()).toEqual(["a"]);
  }, 60_000);
});
