/**
 * The worked example of docs/agents-from-code.md (issue 38 item 4), end to end through the built
 * CLI and the real @ai-sdk/openai provider against a fake OpenAI API on 127.0.0.1: the reviewer
 * lists src/, fans out to one analyst per file from ONE run_code (agents.analyst in a
 * Promise.all), and merges their structured answers into its own structured answer. The doc's
 * command, answer and usage report are checked against this run.
 */
import { cp, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, REPO, tempDir } from "../cli/harness.js";
import { startFakeOpenAI, type FakeRequest, type FakeStep } from "./fake-openai.js";

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
});
afterAll(async () => {
  if (dir) await cleanup(dir);
});

/** The code the reviewer's model writes (as in the doc). */
const FAN_OUT = 'const files = ["math.ts", "strings.ts"].map((name) => `src/${name}`);\nawait Promise.all(files.map((f) => agents.analyst({ input: { file: f } })))';

/** What the analyst's model says about each file it reads. */
const REVIEWS: Record<string, { issues: string[]; score: number }> = {
  "src/math.ts": { issues: ["the loop reads one past the end (i <= xs.length), so the total is NaN", "an empty array divides by zero"], score: 2 },
  "src/strings.ts": { issues: [], score: 5 },
};

function script(req: FakeRequest): FakeStep {
  const body = JSON.stringify(req.body);
  if (req.tools.includes("run_code")) {
    // The reviewer.
    if (req.lastToolOutput === undefined) return { tool: "list_files", args: {} };
    if (req.lastToolOutput.startsWith("math.ts")) return { tool: "run_code", args: { code: FAN_OUT } };
    const findings = Object.entries(REVIEWS).map(([file, r]) => ({ file, ...r }));
    if (!req.lastToolOutput.includes("one past the end")) return { text: `the analysts' answers did not arrive: ${req.lastToolOutput}` };
    return { text: JSON.stringify({ summary: "src/math.ts needs the most work: its average reads past the end of the array.", findings }) };
  }
  // An analyst: read its file, then answer in its output schema.
  const file = /src\/(math|strings)\.ts/.exec(body)?.[0] ?? "?";
  if (req.lastToolOutput === undefined) return { tool: "read_file", args: { path: file } };
  return { text: JSON.stringify({ file, ...REVIEWS[file] }) };
}

describe("docs/agents-from-code.md: the reviewer example", () => {
  it("fans out to per-file analysts from code and merges their structured results", async () => {
    await cp(path.join(REPO, "examples/reviewer"), path.join(dir, "reviewer"), { recursive: true });
    const server = await startFakeOpenAI(script);
    const saved = { key: process.env.OPENAI_API_KEY, base: process.env.OPENAI_BASE_URL };
    process.env.OPENAI_API_KEY = "sk-test-key";
    process.env.OPENAI_BASE_URL = server.url;
    let r;
    try {
      r = await cli(["agent", "run", ".", "Review the code in src/", "-v"], { cwd: path.join(dir, "reviewer"), timeoutMs: 120_000 });
    } finally {
      for (const [k, v] of [["OPENAI_API_KEY", saved.key], ["OPENAI_BASE_URL", saved.base]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await server.close();
    }
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    const answer = JSON.parse(r.stdout) as { summary: string; findings: Array<{ file: string; issues: string[]; score: number }> };
    expect(answer.findings.map((f) => [f.file, f.score])).toEqual([["src/math.ts", 2], ["src/strings.ts", 5]]);
    // Both analysts ran at depth 1, from the reviewer's one run_code.
    expect(r.stderr.match(/ {2}▸ analyst \(depth 1\)/g)).toHaveLength(2);
    expect(r.stderr.match(/→ run_code /g)).toHaveLength(1);
    // The analysts were asked for structured output of their schema (the Responses API's text.format).
    const analystRequests = server.requests.filter((q) => !q.tools.includes("run_code"));
    expect(analystRequests).toHaveLength(4);
    expect(JSON.stringify(analystRequests[0]!.body)).toMatch(/"format":\{"type":"json_schema"/);
    const usage = /usage: .*/.exec(r.stderr)?.[0];
    expect(usage).toBe("usage: 7 model requests (reviewer 3, analyst 4), 700 input + 140 output tokens");

    process.stdout.write(`--- transcript ---\n${r.stderr}${r.stdout}`);
    // The doc shows this command, this answer and this usage report.
    const doc = await readFile(path.join(REPO, "docs/agents-from-code.md"), "utf8");
    expect(doc).toContain("ts-code-mode agent run examples/reviewer 'Review the code in src/' -v");
    expect(doc).toContain(usage!);
    expect(doc).toContain(FAN_OUT);
    for (const f of answer.findings) for (const issue of f.issues) expect(doc).toContain(issue);
  }, 180_000);
});
