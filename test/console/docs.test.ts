/**
 * docs/console.md, run: each `ts-code-mode` command in its sh blocks starts (ports made free), and
 * the done-when holds: on `console --base ./demo`, a paused run's approval answered the
 * way the browser's form sends it finishes the run.
 */
import { copyFile, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { cli, spawnListening, tempDir, type ListeningProcess } from "../cli/harness.js";
import { cleanup, consoleBase, ensureBuilt, REPO, SECRET, TOKEN, type JournalFixture } from "./harness.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { Session } from "../../src/session.js";

let dir: string;
let fx: JournalFixture;
let commands: string[][];
const running: ListeningProcess[] = [];

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  fx = await consoleBase();
  const doc = await readFile(path.join(REPO, "docs/console.md"), "utf8");
  commands = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split("\n")).filter((l) => l.startsWith("ts-code-mode ")).map((l) => l.split(/\s+/).slice(1));
}, 120_000);
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  await cleanup(dir);
  await cleanup(fx.dir);
});

/** A server command from the doc, on a free port. */
async function start(args: string[], token: string | null): Promise<ListeningProcess> {
  const i = args.indexOf("--port");
  const free = i >= 0 ? args.map((a, j) => (j === i + 1 ? "0" : a)) : [...args, "--port", "0"];
  const env: NodeJS.ProcessEnv = { ...process.env, TS_CODE_MODE_RUNS_SECRET: SECRET };
  delete env["TS_CODE_MODE_TOKEN"];
  if (token !== null) env["TS_CODE_MODE_TOKEN"] = token;
  const p = await spawnListening([...free, "--executor", "in-process"], { what: args[0]!, cwd: dir, env });
  running.push(p);
  return p;
}

test("docs/console.md shows init, then console (loopback, token) and serve --console", () => {
  expect(commands.map((c) => c.slice(0, 1).join(" "))).toEqual(["init", "console", "console", "serve"]);
});

test("console --base ./demo: open the printed address and answer a paused run's approval", async () => {
  const init = await cli(commands[0]!, { cwd: dir });
  expect(init.code, init.stderr).toBe(0);
  await copyFile(path.join(fx.tools, "journal.yaml"), path.join(dir, "demo/tools/journal.yaml"));
  const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "demo") }), executor: new InProcessExecutor({ toolsPath: path.join(dir, "demo/tools") }), durable: { secret: SECRET } });
  const paused = await session.run(`(await tools.journal.pay({ line: "pay 100" })).trim()`);
  await session.close();
  expect(paused.status).toBe("paused");

  const server = await start(commands[1]!, null);
  const page = await fetch(new URL("/console/approvals", server.url));
  expect(page.status).toBe(200);
  expect(await page.text()).toContain(`run-${paused.runId}`);
  const answer = await fetch(new URL(`/console/approvals/${paused.runId}`, server.url), {
    method: "POST",
    redirect: "manual",
    headers: { origin: server.url, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ "decision-0": "edit", "args-0": '{ "line": "pay 90" }' }),
  });
  expect(answer.status).toBe(303);
  const run = await (await fetch(new URL(answer.headers.get("location")!, server.url))).text();
  expect(run).toContain("status-completed");
  expect(await fx.lines()).toEqual(["pay 90"]);
}, 120_000);

test("console on another address wants the token; its login link sets the cookie", async () => {
  const server = await start(commands[2]!, TOKEN);
  const url = server.url.replace("0.0.0.0", "127.0.0.1");
  const anonymous = await fetch(new URL("/console/approvals", url), { redirect: "manual" });
  expect([anonymous.status, anonymous.headers.get("location")]).toEqual([303, "/console/login"]);
  const login = await fetch(new URL(`/console/login?token=${TOKEN}`, url), { redirect: "manual" });
  expect(login.status).toBe(303);
  expect(login.headers.get("set-cookie")).toMatch(/^tcm_console=[^;]+;.*HttpOnly.*SameSite=Strict/i);
}, 120_000);

test("serve --console: the console under /console, with the same token", async () => {
  const server = await start(commands[3]!, TOKEN);
  expect((await fetch(new URL("/console/sessions", server.url), { redirect: "manual" })).status).toBe(303);
  const page = await fetch(new URL("/console/sessions", server.url), { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(page.status).toBe(200);
  expect(await page.text()).toContain("<h1>Sessions</h1>");
}, 120_000);
