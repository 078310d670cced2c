/**
 * The command-line front ends of durable runs, each a real process of the built CLI: `run
 * --durable` pauses (exit 3, the continuation printed) and `run --resume` goes on in a later
 * process; `run --remote` against `serve --durable` does both through the server; `mcp --durable`
 * offers run_code's `resume`, and a second server process on the same base resumes the run the
 * first one paused. Refusals are usage errors (exit 2) or the continuation's stable names.
 */
import { copyFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { cleanup, cli, ensureBuilt, tempDir } from "../cli/harness.js";
import { callTool, connectStdio, structuredOf, textOf } from "../mcp/harness.js";
import { setEnv } from "../helpers/env.js";
import { startServe, TOKEN } from "../server/harness.js";
import { journalFixture, SECRET, type JournalFixture } from "./fixture.js";

let dir: string;
let fx: JournalFixture;
let restoreEnv: (() => void) | undefined;
const PAY = `const n = (await tools.journal.add({ line: "a" })).trim(); [n, (await tools.journal.pay({ line: "pay 100" })).trim()]`;

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  fx = await journalFixture();
  await mkdir(path.join(dir, ".code-mode/tools"), { recursive: true });
  await copyFile(path.join(fx.tools, "journal.yaml"), path.join(dir, ".code-mode/tools/journal.yaml"));
  // cli() spawns with this process's environment: the key every process of the test shares.
  restoreEnv = setEnv({ TS_CODE_MODE_RUNS_SECRET: SECRET });
}, 180_000);
afterAll(async () => {
  restoreEnv?.();
  await cleanup(dir);
  await cleanup(fx.dir);
});

test("run --durable pauses with exit code 3 and how to go on; run --resume in a later process finishes it", async () => {
  const paused = await cli(["run", "--durable", PAY], { cwd: dir, timeoutMs: 60_000 });
  expect(paused.code, paused.stderr).toBe(3);
  expect(paused.stdout).toMatch(/The run paused: 1 call waits for a decision[\s\S]*call-1: tools\.journal\.pay\(\{"line":"pay 100"\}\)/);
  const hint = /To go on: ts-code-mode run --resume (tcm1\.\S+) --decisions '(.*)'/.exec(paused.stderr);
  expect(hint, paused.stderr).not.toBeNull();
  expect(JSON.parse(hint![2]!)).toEqual([{ id: "call-1", decision: "approve" }]);
  expect(await fx.lines()).toEqual(["a"]);

  const done = await cli(["run", "--resume", hint![1]!, "--decisions", '[{"id":"call-1","decision":"edit","args":{"line":"pay 90"}}]', "--json"], { cwd: dir, timeoutMs: 60_000 });
  expect(done.code, done.stderr).toBe(0);
  expect(JSON.parse(done.stdout)).toMatchObject({ ok: true, status: "completed", value: ["1", "2"] });
  expect(await fx.lines()).toEqual(["a", "pay 90"]);

  const again = await cli(["run", "--resume", hint![1]!, "--decisions", '[{"id":"call-1","decision":"approve"}]'], { cwd: dir, timeoutMs: 60_000 });
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/ContinuationUsedError/);
}, 180_000);

test("run --durable --json carries the pause; usage errors are refused before anything runs", async () => {
  const paused = await cli(["run", "--durable", "--json", `await tools.journal.pay({ line: "x" })`], { cwd: dir, timeoutMs: 60_000 });
  expect(paused.code).toBe(3);
  const json = JSON.parse(paused.stdout) as Record<string, unknown>;
  expect(json).toMatchObject({ ok: false, status: "paused", pending: [{ id: "call-0", tool: "journal", callable: "pay", args: { line: "x" } }] });
  expect(String(json["continuation"])).toMatch(/^tcm1\./);

  const usage: Array<[string[], RegExp]> = [
    [["run", "--resume", String(json["continuation"]), "1 + 1", "--decisions", "[]"], /--resume takes no code/],
    [["run", "--resume", String(json["continuation"])], /--resume needs --decisions/],
    [["run", "--resume", String(json["continuation"]), "--decisions", "{"], /--decisions: expected a JSON array/],
    [["run", "--decisions", "[]", "1"], /--decisions goes with --resume/],
    [["run", "--durable", "--remote", "http://127.0.0.1:9", "1"], /--durable with --remote/],
    [["mcp", "--durable", "--remote", "http://127.0.0.1:9"], /--durable with --remote/],
  ];
  for (const [args, message] of usage) {
    const r = await cli(args, { cwd: dir });
    expect([r.code, r.stderr], args.join(" ")).toEqual([2, expect.stringMatching(message)]);
  }
  delete process.env["TS_CODE_MODE_RUNS_SECRET"];
  try {
    const noKey = await cli(["run", "--durable", "1"], { cwd: dir });
    expect([noKey.code, noKey.stderr]).toEqual([2, expect.stringMatching(/--durable: Durable runs need a key/)]);
  } finally {
    process.env["TS_CODE_MODE_RUNS_SECRET"] = SECRET;
  }
}, 180_000);

test("run --remote against serve --durable: the pause comes back (exit 3), run --remote --resume finishes it on the server", async () => {
  const server = await startServe(["--token", TOKEN, "--durable", "--base", path.join(dir, "served"), "--tools", path.join(dir, ".code-mode/tools")], { env: { ...process.env, TS_CODE_MODE_RUNS_SECRET: SECRET } });
  try {
    const remote = ["--remote", server.url, "--token", TOKEN];
    const paused = await cli(["run", ...remote, "--json", `(await tools.journal.pay({ line: "remote" })).trim()`], { cwd: dir, timeoutMs: 60_000 });
    expect(paused.code, paused.stderr).toBe(3);
    const { continuation } = JSON.parse(paused.stdout) as { continuation: string };
    const done = await cli(["run", ...remote, "--json", "--resume", continuation, "--decisions", '[{"id":"call-0","decision":"approve"}]'], { cwd: dir, timeoutMs: 60_000 });
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ ok: true, status: "completed" });
    expect((await fx.lines()).at(-1)).toBe("remote");
  } finally {
    await server.stop();
  }
}, 180_000);

const MCP_CODE = `(await tools.journal.pay({ line: "mcp" })).trim()`;

test("mcp --durable: run_code pauses in one server process and a second one on the same base resumes it", async () => {
  const env = { TS_CODE_MODE_RUNS_SECRET: SECRET };
  const first = await connectStdio(["--durable"], { cwd: dir, env });
  let continuation: string;
  try {
    const paused = await callTool(first.client, "run_code", { code: MCP_CODE });
    expect(paused.isError).toBe(true);
    expect(textOf(paused)).toMatch(/call run_code again with resume/);
    continuation = structuredOf<{ continuation: string }>(paused).continuation;
  } finally {
    await first.close();
  }
  const second = await connectStdio(["--durable"], { cwd: dir, env });
  try {
    const done = await callTool(second.client, "run_code", { code: MCP_CODE, resume: { continuation, decisions: [{ id: "call-0", decision: "approve" }] } });
    expect(structuredOf(done), textOf(done)).toMatchObject({ ok: true, status: "completed" });
    expect((await fx.lines()).at(-1)).toBe("mcp");
  } finally {
    await second.close();
  }
  // Without --durable the surface has no resume argument.
  const plain = await connectStdio([], { cwd: dir });
  try {
    const tools = await plain.client.listTools();
    expect(JSON.stringify(tools.tools.find((t) => t.name === "run_code")?.inputSchema)).not.toContain("resume");
  } finally {
    await plain.close();
  }
}, 180_000);
