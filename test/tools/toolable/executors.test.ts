/**
 * Toolable tools through every executor: guest code calls a tool, catches a recoverable error and
 * branches on it (code, recoverable, suggestion, context reach the guest), the host receives the
 * streamed progress, the guest drives a session through the RPC, and a sampling request is answered
 * by the sampler. A session the run leaves open is killed when the run ends.
 */
import { createRequire } from "node:module";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Executor } from "../../../src/execution/protocol.js";
import { InProcessExecutor } from "../../../src/execution/in-process/executor.js";
import { SandboxExecutor } from "../../../src/execution/sandbox/executor.js";
import { SubprocessExecutor } from "../../../src/execution/subprocess/executor.js";
import { Session } from "../../../src/session.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import type { ToolableEvent } from "../../../src/tools/adapters/toolable/host.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { processesWith, waitFor } from "../../helpers/processes.js";
import { PYTOOL } from "./fixture.js";

const executors: Array<[string, (tools: ToolRegistry) => Executor]> = [
  ["in-process", (tools) => new InProcessExecutor({ tools, defaultTimeoutMs: 20_000 })],
  ["subprocess", (tools) => new SubprocessExecutor({ tools, defaultTimeoutMs: 20_000 })],
  ["sandbox (quickjs)", (tools) => new SandboxExecutor({ tools, defaultTimeoutMs: 20_000 })],
  ["sandbox (deno)", (tools) => new SandboxExecutor({ engine: "deno", tools, defaultTimeoutMs: 20_000 })],
];

/** The deno engine ships in the optional `deno` package; where it is not installed that case cannot run (reported as skipped, not passed). */
const hasDeno = (() => {
  try {
    createRequire(import.meta.url).resolve("deno/package.json");
    return true;
  } catch {
    return false;
  }
})();

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 5 });
});

const CODE = `
const out = {};
try {
  await tools.py.fail({ code: "NOT_FOUND", suggestion: "list the notes first" });
} catch (e) {
  out.err = { name: e.name, code: e.code, recoverable: e.recoverable, suggestion: e.suggestion, context: e.context };
  out.branch = e.recoverable ? "retry with other input" : "give up";
}
out.count = await tools.py.count({ to: 2 });
out.answer = await tools.py.ask({ question: "2+2?" });
const s = await tools.py.repl.session({ greeting: "hello" });
out.first = await s.next();
await s.send({ n: 1 });
await s.send({ action: "quit" });
out.rest = [];
for await (const ev of s) out.rest.push(ev.type);
out.final = await s.close();
out;
`;

describe.each(executors)("toolable through the %s executor", (name, make) => {
  it.skipIf(name.includes("deno") && !hasDeno)("calls, branches on a recoverable error, streams progress, drives a session, answers sampling; a session left open dies with the run", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "tcm-toolable-exec-"));
    dirs.push(dir);
    writeFileSync(path.join(dir, "py.yaml"), `type: toolable\ndiscover_timeout: 60\nname: py\ncommand: ${JSON.stringify(PYTOOL)}\n`);
    const events: ToolableEvent[] = [];
    const tools = await ToolRegistry.load(dir, {
      toolable: { onEvent: (e) => events.push(e), sampler: async (req) => `four (${req.prompt})` },
    });
    const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "store") }), executor: make(tools) });
    await session.start();
    try {
      const r = await session.run(CODE);
      expect(r.error ?? null).toBeNull();
      expect(r.value).toEqual({
        err: { name: "ToolError", code: "NOT_FOUND", recoverable: true, suggestion: "list the notes first", context: { asked: "NOT_FOUND" } },
        branch: "retry with other input",
        count: { counted: 2 },
        answer: { answer: "four (2+2?)" },
        first: { type: "session_start", message: "hello", prompt: "> " },
        rest: ["echo", "awaiting_input", "session_end"],
        final: { status: "success" },
      });
      expect(events.filter((e) => e.event.type === "progress").map((e) => e.event)).toEqual([
        { type: "progress", message: "counted 1", percent: 50 },
        { type: "progress", message: "counted 2", percent: 100 },
      ]);

      const marker = `left-open-${name.replace(/\W/g, "")}`;
      const left = await session.run(`globalThis.kept = await tools.py.repl.session({ greeting: ${JSON.stringify(marker)} }); (await kept.next()).message`);
      expect(left.value).toBe(marker);
      await waitFor(() => processesWith(marker).length === 0, "the session's process to die with its run");
    } finally {
      await session.close();
    }
  });
});

describe("toolable sessions are bounded per executor", () => {
  it(`at most ${16} live sessions; the next open is refused with PRECONDITION, and all die with the run`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "tcm-toolable-cap-"));
    dirs.push(dir);
    writeFileSync(path.join(dir, "py.yaml"), `type: toolable\ndiscover_timeout: 60\nname: py\ncommand: ${JSON.stringify(PYTOOL)}\n`);
    const tools = await ToolRegistry.load(dir);
    const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "store") }), executor: new InProcessExecutor({ tools, defaultTimeoutMs: 30_000 }) });
    await session.start();
    try {
      const r = await session.run(`
        const opened = [];
        let refused = null;
        for (let i = 0; i < 17; i++) {
          try { opened.push(await tools.py.repl.session({ greeting: "capped-session" })); } catch (e) { refused = e.code; }
        }
        [opened.length, refused];`);
      expect(r.value).toEqual([16, "PRECONDITION"]);
      await waitFor(() => processesWith("capped-session").length === 0, "the run's sessions to die with it");
    } finally {
      await session.close();
    }
  });
});
