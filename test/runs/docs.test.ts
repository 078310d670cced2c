/**
 * docs/durable-runs.md, run: its program (the package import pointed at dist/) pauses and resumes a
 * real run, and each of its shell commands works on the ledger that run left.
 */
import { spawn } from "node:child_process";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, test } from "vitest";
import { promisify } from "node:util";
import { execFile } from "node:child_process";
import { cleanup, cli, ensureBuilt, REPO, spawnListening, tempDir } from "../cli/harness.js";
import { TOKEN } from "../server/harness.js";
import { journalFixture, SECRET, type JournalFixture } from "./fixture.js";

let dir: string;
let fx: JournalFixture;
let doc: string;
beforeAll(async () => {
  await ensureBuilt();
  doc = await readFile(path.join(REPO, "docs/durable-runs.md"), "utf8");
  dir = await tempDir();
  fx = await journalFixture();
  await mkdir(path.join(dir, ".code-mode/tools"), { recursive: true });
  await copyFile(path.join(fx.tools, "journal.yaml"), path.join(dir, ".code-mode/tools/journal.yaml"));
}, 120_000);
afterAll(async () => {
  await cleanup(dir);
  await cleanup(fx.dir);
});

const blocks = (lang: string) => [...doc.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);

test("the program in docs/durable-runs.md pauses, then resumes with the edited payment", async () => {
  const program = blocks("js")[0]!.replace('"ts-code-mode"', JSON.stringify(pathToFileURL(path.join(REPO, "dist/index.js")).href));
  await writeFile(path.join(dir, "example.mjs"), program);
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ["example.mjs"], { cwd: dir, env: { ...process.env, TS_CODE_MODE_RUNS_SECRET: SECRET } });
    let text = "";
    child.stdout.on("data", (d: Buffer) => (text += d.toString()));
    child.stderr.on("data", (d: Buffer) => (text += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(text) : reject(new Error(`example exited ${code}: ${text}`))));
  });
  expect(out).toMatch(/^paused \[\s*\{\s*id: 'call-3',\s*tool: 'journal',\s*callable: 'pay',\s*args: \{ line: 'pay 100' \},/m);
  expect(out).toMatch(/completed \{ counts: \[ '1', '2', '3' \], paid: '4' \}/);
  expect(await fx.lines()).toEqual(["a", "b", "c", "pay 90"]);
}, 120_000);

test("the shell commands in docs/durable-runs.md work on that ledger", async () => {
  const commands = blocks("sh").flatMap((b) => b.split("\n")).filter((l) => l.startsWith("ts-code-mode "));
  expect(commands).toHaveLength(3);
  for (const line of commands) {
    const r = await cli(line.split(/\s+/).slice(1), { cwd: dir });
    expect(r.code, `${line}\n${r.stderr}`).toBe(0);
    if (line.includes("--json")) {
      const runs = JSON.parse(r.stdout) as Array<{ status: string; calls: number }>;
      expect(runs.map((x) => [x.status, x.calls])).toEqual([["completed", 4]]);
    } else if (line.includes("prune")) expect(r.stdout).toMatch(/^removed 0 runs/);
    else expect(r.stdout).toMatch(/completed/);
  }
}, 120_000);

test("the serve --durable walk-through in docs/durable-runs.md: each curl line, in order, against the server the doc starts", async () => {
  const [start, calls] = blocks("bash") as [string, string];
  const serveLine = start.split("\n").find((l) => l.startsWith("ts-code-mode serve"))!;
  const args = serveLine.replace(/#.*$/, "").trim().split(/\s+/).slice(1).map((a) => (a === '"$TOKEN"' ? TOKEN : a === "8787" ? "0" : a));
  const server = await spawnListening(args, { what: "serve", cwd: dir, env: { ...process.env, TS_CODE_MODE_RUNS_SECRET: SECRET } });
  try {
    const vars: Record<string, string> = { SERVER: server.url, TOKEN };
    const replies: Array<Record<string, unknown>> = [];
    for (const line of calls.split("\n").filter((l) => l.startsWith("curl "))) {
      const { stdout } = await promisify(execFile)("bash", ["-c", line], { env: { ...process.env, ...vars }, timeout: 60_000 });
      const reply = JSON.parse(stdout) as Record<string, unknown>;
      replies.push(reply);
      if (typeof reply["id"] === "string") vars["SESSION"] = reply["id"];
      if (reply["status"] === "paused") {
        vars["RUN"] = String(reply["runId"]);
        vars["CONTINUATION"] = String(reply["continuation"]);
      }
    }
    expect(replies).toHaveLength(5);
    expect(replies[1]).toMatchObject({ status: "paused", pending: [{ id: "call-0", tool: "journal", callable: "pay", args: { line: "pay 100" } }] });
    expect((replies[2]!["runs"] as Array<{ id: string; status: string }>)[0]).toMatchObject({ id: vars["RUN"], status: "paused" });
    expect(replies[3]).toMatchObject({ run: { id: vars["RUN"], status: "paused" }, pending: [{ id: "call-0" }] });
    expect(replies[4]).toMatchObject({ ok: true, status: "completed", runId: vars["RUN"] });
    expect((await fx.lines()).at(-1)).toBe("pay 90");
  } finally {
    await server.stop();
  }
}, 120_000);

test("the run --durable / --resume lines in docs/durable-runs.md: a pause (exit 3) then a rejection", async () => {
  const lines = blocks("shell")[0]!.split("\n").filter((l) => l.startsWith("ts-code-mode "));
  expect(lines).toHaveLength(2);
  const env = { ...process.env, TS_CODE_MODE_RUNS_SECRET: SECRET };
  const sh = (line: string, extra: Record<string, string> = {}) =>
    promisify(execFile)("bash", ["-c", line.replace(/^ts-code-mode /, `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(REPO, "dist/cli/main.js"))} `)], { cwd: dir, env: { ...env, ...extra }, timeout: 60_000 }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
  const paused = await sh(lines[0]!);
  expect(paused.code, paused.stderr).toBe(3);
  expect(paused.stdout).toMatch(/The run paused: 1 call waits for a decision/);
  const continuation = /--resume (tcm1\.\S+)/.exec(paused.stderr)?.[1];
  expect(continuation, paused.stderr).toBeDefined();
  const rejected = await sh(lines[1]!, { CONTINUATION: continuation! });
  expect(rejected.code).toBe(1);
  expect(rejected.stderr).toMatch(/ToolError: tools\.journal\.pay was rejected by a reviewer: not today/);
}, 120_000);
