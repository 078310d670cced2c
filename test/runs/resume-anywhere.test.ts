/**
 * The "done when": a run needing approval in the middle of 50 tool calls pauses, its host
 * process is killed, a different process on the same Redis resumes it after approval with edited
 * arguments; the first 49 calls are not repeated (a real CLI tool appends a line per call), and the
 * result equals an uninterrupted run's.
 */
import { spawn } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, test } from "vitest";
import { approval, InProcessExecutor, RedisStorage, Session } from "../../src/index.js";
import { startRedis, type RedisServer } from "../helpers/redis.js";
import { journalFixture, SECRET, type JournalFixture } from "./fixture.js";

const DIST = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/index.js")).href;

const CODE = `
const counts = [];
for (let i = 1; i <= 49; i++) counts.push((await tools.journal.add({ line: "step " + i })).trim());
const paid = (await tools.journal.pay({ line: "pay 100" })).trim();
({ counts: counts.length, last: counts.at(-1), paid, stamp: typeof Date.now() })
`;

/** One process of the fleet: pauses (`run`) or resumes (`resume`), prints the result as JSON, and (run) waits to be killed. */
const HOST = `
import { RedisStorage, Session, SubprocessExecutor } from ${JSON.stringify(DIST)};
const [mode, url, tools, arg, decisions] = process.argv.slice(2);
const session = new Session({
  storage: new RedisStorage({ url, prefix: "fleet" }),
  executor: new SubprocessExecutor({ toolsPath: tools }),
  durable: true,
});
const r = mode === "run" ? await session.run(arg) : await session.resume(arg, JSON.parse(decisions)).catch((e) => ({ thrown: e.name }));
process.stdout.write(JSON.stringify(r) + "\\n");
if (mode === "run") setInterval(() => {}, 1000); // holds nothing the resume needs: it is killed
else { await session.close(); process.exit(0); }
`;

let redis: RedisServer;
let fx: JournalFixture;
let host: string;
beforeAll(async () => {
  redis = await startRedis();
  fx = await journalFixture();
  host = path.join(fx.dir, "host.mjs");
  await writeFile(host, HOST);
}, 60_000);
afterAll(async () => {
  await redis?.close();
  await rm(fx.dir, { recursive: true, force: true, maxRetries: 5 });
});

function start(args: string[]): { done: Promise<Record<string, unknown>>; kill: () => void } {
  const child = spawn(process.execPath, [host, ...args], { env: { ...process.env, TS_CODE_MODE_RUNS_SECRET: SECRET }, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  const done = new Promise<Record<string, unknown>>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const line = out.split("\n").find((l) => l.trim().startsWith("{"));
      if (out.includes("\n") && line) resolve(JSON.parse(line) as Record<string, unknown>);
    });
    child.on("exit", (code) => reject(new Error(`host exited (${code}) before answering: ${out}`)));
  });
  return { done, kill: () => child.kill("SIGKILL") };
}

test("a run paused in one process resumes in another on the same Redis; logged calls are not repeated", async () => {
  const first = start(["run", redis.url, fx.tools, CODE]);
  const paused = await first.done;
  first.kill();
  expect(paused["status"]).toBe("paused");
  expect(paused["pending"]).toEqual([{ id: "call-49", tool: "journal", callable: "pay", args: { line: "pay 100" }, reason: "payments need a human's approval" }]);
  expect(await fx.lines()).toHaveLength(49);

  const decisions = JSON.stringify([{ id: "call-49", decision: "edit", args: { line: "pay 90" } }]);
  const resumed = await start(["resume", redis.url, fx.tools, paused["continuation"] as string, decisions]).done;
  expect(resumed["error"]).toBeNull();
  expect(resumed["status"]).toBe("completed");
  const journal = await fx.lines();
  // 49 steps once each, then the edited payment: nothing was repeated.
  expect(journal).toEqual([...Array.from({ length: 49 }, (_, i) => `step ${i + 1}`), "pay 90"]);

  // Refusals, from yet another process: used twice, and altered.
  expect((await start(["resume", redis.url, fx.tools, paused["continuation"] as string, decisions]).done)["thrown"]).toBe("ContinuationUsedError");
  const altered = (paused["continuation"] as string).slice(0, -2) + "AA";
  expect((await start(["resume", redis.url, fx.tools, altered, decisions]).done)["thrown"]).toBe("ContinuationInvalidError");

  // The same run without interruption (approved with the same edit at once) ends with the same value and journal.
  await writeFile(fx.file, "");
  const uninterrupted = new Session({
    storage: new RedisStorage({ url: redis.url, prefix: "fleet-2" }),
    executor: new InProcessExecutor({ toolsPath: fx.tools, middleware: [approval(() => ({ approve: true, args: { line: "pay 90" } }), { only: ["journal.pay"] })] }),
    durable: { secret: SECRET },
  });
  const straight = await uninterrupted.run(CODE);
  await uninterrupted.close();
  expect(straight.status).toBe("completed");
  expect(straight.value).toEqual(resumed["value"]);
  expect(await fx.lines()).toEqual(journal);
}, 180_000);
