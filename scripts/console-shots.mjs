/**
 * Screenshots of every console page for docs/console/ (npm run docs:console-shots, after a build):
 * a throwaway base with a paused run, a finished one, an untrusted workflow, artifacts, a skill and
 * the journal tool; `ts-code-mode console` for the pages and `serve --console` for the sessions
 * page; headless Chromium at 1280×800, and the approvals page at a phone's width too.
 */
/* global fetch */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OUT = path.join(ROOT, "docs/console");
const MAIN = path.join(ROOT, "dist/cli/main.js");
const SECRET = "docs-secret-0123456789abcdef0123456789abcdef";
const lib = await import(pathToFileURL(path.join(ROOT, "dist/index.js")).href);

const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-console-shots-"));
const base = path.join(dir, "demo");
const journal = path.join(dir, "journal.txt");
await mkdir(path.join(base, "tools"), { recursive: true });
await mkdir(path.join(base, "skills/release-notes"), { recursive: true });
await writeFile(journal, "");
const script = `f=${JSON.stringify(journal)}; printf '%s\\n' "$1" >> "$f"; wc -l < "$f" | tr -d ' '`;
await writeFile(
  path.join(base, "tools/journal.yaml"),
  [
    "name: journal",
    "description: Appends lines to the team's journal",
    `command: [sh, -c, ${JSON.stringify(script)}]`,
    "schema:",
    "  positional:",
    "    - { name: action, type: string, required: true }",
    "    - { name: line, type: string, required: true }",
    "recipes:",
    "  add: { description: Append a line, preset: { action: add }, params: { line: {} } }",
    "  pay: { description: Record a payment, needs_approval: payments need a human's approval, preset: { action: pay }, params: { line: {} } }",
    "",
  ].join("\n"),
);
await writeFile(path.join(base, "skills/release-notes/SKILL.md"), "---\nname: release-notes\ndescription: Write release notes from merged changes\n---\n# Release notes\n\n1. List the merged changes.\n2. Group them by area.\n3. Save the notes as an artifact.\n");

const storage = new lib.FileStorage({ basePath: base });
const session = new lib.Session({ storage, executor: new lib.InProcessExecutor({ toolsPath: path.join(base, "tools") }), durable: { secret: SECRET } });
const done = await session.run(`const n = await tools.journal.add({ line: "weekly sync" }); await artifacts.save("summary.md", "# Week 48\\n\\n- 3 releases\\n- 1 incident", { description: "weekly summary" }); n.trim()`);
const paused = await session.run(`const n = (await tools.journal.add({ line: "invoice 17" })).trim();\nconst paid = (await tools.journal.pay({ line: "pay 1200 EUR to ACME" })).trim();\n({ n, paid })`);
await storage.artifacts.save("metrics.json", { releases: 3, incidents: 1, p95_ms: 182 }, { description: "weekly metrics" });
// Saved by a sandbox session: untrusted, so the workflow page offers its approval.
const sandboxed = new lib.Session({ storage, executor: new lib.SandboxExecutor({ toolsPath: path.join(base, "tools") }) });
await sandboxed.addWorkflow({
  name: "weekly_report",
  source: `/** Collects the week's journal lines into a report */\nexport async function run({ week }: { week: number }) {\n  const lines = await tools.journal.add({ line: \`report \${week}\` });\n  return { week, lines };\n}\n`,
});
await sandboxed.close();
await session.close();
console.log(`runs: ${done.status}, ${paused.status}`);

function start(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, TS_CODE_MODE_RUNS_SECRET: SECRET, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve({ url: m[1], child });
    });
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

const token = "docs-token-0123456789abcdef";
const consoleProc = await start(["console", "--base", base, "--port", "0", "--executor", "in-process"], { TS_CODE_MODE_TOKEN: "" });
const serveProc = await start(["serve", "--base", base, "--port", "0", "--executor", "in-process", "--token", token, "--console", "--spare-executors", "0"], {});
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
try {
  await mkdir(OUT, { recursive: true });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
  const page = await context.newPage();
  const shot = async (url, name, prepare) => {
    await page.goto(url);
    if (prepare) await prepare(page);
    await page.screenshot({ path: path.join(OUT, `${name}.png`) });
    console.log(`docs/console/${name}.png`);
  };
  const c = consoleProc.url;
  await shot(`${c}/console/approvals`, "approvals", async (p) => {
    await p.getByRole("radio", { name: "Approve with the edited arguments" }).check();
    await p.getByLabel("Arguments (JSON; used when you edit)").fill('{\n  "line": "pay 1150 EUR to ACME"\n}');
  });
  await shot(`${c}/console/runs`, "runs");
  await shot(`${c}/console/runs/${done.runId}`, "run");
  await shot(`${c}/console/workflows`, "workflows");
  await shot(`${c}/console/workflow?name=weekly_report`, "workflow");
  await shot(`${c}/console/artifacts`, "artifacts");
  await shot(`${c}/console/artifact?name=metrics.json`, "artifact");
  await shot(`${c}/console/skills`, "skills");
  await shot(`${c}/console/skill?name=release-notes`, "skill");
  await shot(`${c}/console/tools`, "tools");
  await shot(`${c}/console/tool?name=journal`, "tool");
  // serve --console: a client's session with a run in progress.
  const s = serveProc.url;
  const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const { id } = await (await fetch(`${s}/sessions`, { method: "POST", headers: auth, body: "{}" })).json();
  const run = fetch(`${s}/sessions/${id}/run`, { method: "POST", headers: auth, body: JSON.stringify({ code: `for (let i = 1; i <= 3; i++) console.log("step " + i + " of 4"); while (!(await artifacts.exists("go"))) await new Promise((r) => setTimeout(r, 50)); "done"` }) });
  await page.goto(`${s}/console/login?token=${token}`);
  await shot(`${s}/console/sessions/${id}`, "session", (p) => p.locator("#output", { hasText: "step 3" }).waitFor());
  await storage.artifacts.save("go", "1");
  await run;
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: "light" });
  const small = await phone.newPage();
  await small.goto(`${c}/console/approvals`);
  await small.screenshot({ path: path.join(OUT, "approvals-phone.png"), fullPage: false });
  console.log("docs/console/approvals-phone.png");
} finally {
  await browser.close();
  consoleProc.child.kill("SIGTERM");
  serveProc.child.kill("SIGTERM");
  await storage.close();
  await rm(dir, { recursive: true, force: true });
}
