/**
 * docs/durable-runs.md, run: its program (the package import pointed at dist/) pauses and resumes a
 * real run, and each of its shell commands works on the ledger that run left.
 */
import { spawn } from "node:child_process";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, test } from "vitest";
import { cleanup, cli, ensureBuilt, REPO, tempDir } from "../cli/harness.js";
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
