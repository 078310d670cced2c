/**
 * Durable code runs in the agent runner, as users run it (the built CLI against a fake OpenAI API
 * on 127.0.0.1 through the real @ai-sdk/openai provider, a real command-line tool with side
 * effects): without a terminal `agent run --durable` stops at a call that needs approval (exit 3,
 * the run saved), and `agent run --resume ID` in a later process goes on, the earlier calls of the
 * code not made again; in a terminal the person is asked and the run goes on in place.
 */
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, REPO, tempDir } from "../cli/harness.js";
import { journalFixture, SECRET, type JournalFixture } from "../runs/fixture.js";
import { setEnv } from "../helpers/env.js";
import { startFakeOpenAI, type FakeOpenAI, type FakeRequest, type FakeStep } from "./fake-openai.js";
import { agentFile } from "./project.js";
import { inPty } from "./pty.js";

const CODE = `const n = (await tools.journal.add({ line: "a" })).trim(); [n, (await tools.journal.pay({ line: "pay 100" })).trim()]`;

let dir: string;
let fx: JournalFixture;
let server: FakeOpenAI | null = null;
/** Put back what each useServer() set in process.env, latest first, so the file leaves it as it found it. */
const restoreEnv: Array<() => void> = [];

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
}, 180_000);
afterEach(async () => {
  await server?.close();
  server = null;
  await cleanup(fx.dir);
});
afterAll(async () => {
  for (const restore of restoreEnv.splice(0).reverse()) restore();
  await cleanup(dir);
});

/** The model: run_code with CODE, then an answer quoting what run_code returned. */
function script(req: FakeRequest): FakeStep {
  if (req.lastToolOutput === undefined) return { tool: "run_code", args: { code: CODE } };
  return { text: `tool said: ${req.lastToolOutput}` };
}

/** A project whose entry runs code against the journal tool (journal.pay needs approval). */
async function project(config: Record<string, unknown> = {}): Promise<string> {
  fx = await journalFixture();
  const p = path.join(dir, `payments-${Math.random().toString(36).slice(2)}`);
  await mkdir(path.join(p, ".code-mode/tools"), { recursive: true });
  await copyFile(path.join(fx.tools, "journal.yaml"), path.join(p, ".code-mode/tools/journal.yaml"));
  await writeFile(path.join(p, "project.json"), JSON.stringify({ version: 1, agents: ["main.agent.md"], entry: "main", ...config }));
  await writeFile(path.join(p, "main.agent.md"), agentFile({ name: "main", tools: ["code"], model: "openai:gpt-4o-mini" }));
  return p;
}

async function useServer(): Promise<FakeOpenAI> {
  server = await startFakeOpenAI(script);
  // cli() spawns with this process's environment.
  restoreEnv.push(setEnv({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: server.url, TS_CODE_MODE_RUNS_SECRET: SECRET }));
  return server;
}

/** docs/durable-runs.md's agent runner commands, as they are written there. */
async function docCommands(): Promise<string[]> {
  const doc = await readFile(path.join(REPO, "docs/durable-runs.md"), "utf8");
  const section = doc.slice(doc.indexOf("## In the agent runner"));
  return /```shell\n([\s\S]*?)```/.exec(section)![1]!.trim().split("\n");
}

it("without a terminal the run stops at the call (exit 3); --resume in a later process goes on without repeating the code's calls", async () => {
  const EDIT = '[{"id":"call-1","decision":"edit","args":{"line":"pay 90"}}]';
  // The documented commands are the ones run here (stdin is not a terminal in cli()).
  expect(await docCommands()).toEqual(["ts-code-mode agent run . --durable 'pay the invoice' < /dev/null", `ts-code-mode agent run . --resume "$ID" --decisions '${EDIT}'`]);
  const s = await useServer();
  const p = await project();
  const paused = await cli(["agent", "run", ".", "--durable", "pay the invoice"], { cwd: p, timeoutMs: 90_000 });
  expect(paused.code, paused.stderr).toBe(3);
  expect(paused.stdout).toBe("");
  expect(paused.stderr).toMatch(/paused: call-1 journal\.pay \{"line":"pay 100"\} \(payments need a human's approval\)/);
  const hint = /To go on: ts-code-mode agent run --resume (\S+) --decisions '(.*)'/.exec(paused.stderr);
  expect(hint, paused.stderr).not.toBeNull();
  const id = hint![1]!;
  expect(JSON.parse(hint![2]!)).toEqual([{ id: "call-1", decision: "approve" }]);
  expect(await fx.lines()).toEqual(["a"]);
  expect(await readdir(path.join(p, ".code-mode/agent-runs"))).toEqual([`${id}.json`]);
  expect(s.requests).toHaveLength(1);

  // No terminal and no decisions: refused before anything runs, naming what waits.
  const refused = await cli(["agent", "run", ".", "--resume", id], { cwd: p, timeoutMs: 60_000 });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/give --decisions[\s\S]*call-1 journal\.pay/);

  const savedRun = path.join(p, ".code-mode/agent-runs", `${id}.json`);
  const copy = await readFile(savedRun, "utf8");
  const done = await cli(["agent", "run", ".", "--resume", id, "--decisions", EDIT], { cwd: p, timeoutMs: 90_000 });
  expect(done.code, done.stderr).toBe(0);
  expect(done.stdout).toMatch(/tool said: --- value ---\s*\[ '1', '2' \]/);
  // The code ran again from the start, but journal.add was answered from the ledger: one "a".
  expect(await fx.lines()).toEqual(["a", "pay 90"]);
  expect(s.requests).toHaveLength(2);
  // The model went on from its own tool call: the second request holds the call and its output.
  const input = s.requests[1]!.body["input"] as Array<Record<string, unknown>>;
  const call = input.find((i) => i["type"] === "function_call");
  expect(call).toMatchObject({ name: "run_code", call_id: "call_1" });
  expect(input.find((i) => i["type"] === "function_call_output")).toMatchObject({ call_id: "call_1" });
  expect(await readdir(path.join(p, ".code-mode/agent-runs"))).toEqual([]);

  const again = await cli(["agent", "run", ".", "--resume", id, "--decisions", '[{"id":"call-1","decision":"approve"}]'], { cwd: p, timeoutMs: 60_000 });
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/no paused agent run/);
  // A copy of the saved run cannot resume it twice: its continuation is used, and the copy goes.
  await writeFile(savedRun, copy);
  const replayed = await cli(["agent", "run", ".", "--resume", id, "--decisions", '[{"id":"call-1","decision":"approve"}]'], { cwd: p, timeoutMs: 60_000 });
  expect(replayed.code).toBe(1);
  expect(replayed.stderr).toMatch(/cannot go on \(ContinuationUsedError\); it was removed/);
  expect(await readdir(path.join(p, ".code-mode/agent-runs"))).toEqual([]);
  expect(await fx.lines()).toEqual(["a", "pay 90"]);
}, 240_000);

it("a rejection reaches the code as a PERMISSION error; project.json's code_mode.durable is the same as --durable", async () => {
  await useServer();
  const p = await project({ code_mode: { durable: true, executor: "in-process" } });
  const paused = await cli(["agent", "run", ".", "pay the invoice"], { cwd: p, timeoutMs: 90_000 });
  expect(paused.code, paused.stderr).toBe(3);
  const id = /--resume (\S+)/.exec(paused.stderr)![1]!;
  const done = await cli(["agent", "run", ".", "--resume", id, "--decisions", '[{"id":"call-1","decision":"reject","reason":"not this month"}]'], { cwd: p, timeoutMs: 90_000 });
  expect(done.code, done.stderr).toBe(0);
  expect(done.stdout).toMatch(/tool said:[\s\S]*journal\.pay was rejected by a reviewer: not this month/);
  expect(await fx.lines()).toEqual(["a"]);
}, 240_000);

it("usage errors: --decisions without --resume, --resume with a prompt, no key, an id that is not one", async () => {
  await useServer();
  const p = await project();
  const decisionsAlone = await cli(["agent", "run", ".", "hi", "--decisions", "[]"], { cwd: p });
  expect(decisionsAlone.code).toBe(2);
  expect(decisionsAlone.stderr).toMatch(/--decisions goes with --resume/);
  const withPrompt = await cli(["agent", "run", ".", "hi", "--resume", "abc"], { cwd: p });
  expect(withPrompt.code).toBe(2);
  expect(withPrompt.stderr).toMatch(/give no prompt/);
  const badId = await cli(["agent", "run", ".", "--resume", "../../etc/passwd", "--decisions", "[]"], { cwd: p });
  expect(badId.code).not.toBe(0);
  expect(badId.stderr).toMatch(/is not a paused run id/);
  delete process.env["TS_CODE_MODE_RUNS_SECRET"];
  const noKey = await cli(["agent", "run", ".", "--durable", "hi"], { cwd: p });
  expect(noKey.code).toBe(2);
  expect(noKey.stderr).toMatch(/--durable: .*TS_CODE_MODE_RUNS_SECRET/);
}, 120_000);

it("in a terminal the person is asked about the call inside the code and the run goes on in place", async () => {
  const s = await useServer();
  const p = await project();
  const r = await inPty(["agent", "run", ".", "--durable", "pay the invoice"], p, ["e", '{"line":"pay 80"}'], {});
  expect(r.output).toContain("main (depth 0) wants to call journal.pay with:");
  expect(r.output).toMatch(/tool said: --- value ---\s*\[ '1', '2' \]/);
  expect(r.code).toBe(0);
  expect(await fx.lines()).toEqual(["a", "pay 80"]);
  expect(s.requests).toHaveLength(2);
}, 180_000);
