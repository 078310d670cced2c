/**
 * The toolable caller against a real Python executable (test/fixtures/toolable/pytool.py, standard
 * library only) speaking the reference wire format: discovery, describe, validation before the
 * process starts, envelopes with every error code, partial results, prints before the envelope,
 * crashes, hangs, huge output, streaming events, stderr notifications, sampling (stdin and HTTP),
 * sessions, resources, prompts, and the manifest cache.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolError } from "../../../src/errors.js";
import { ToolableToolAdapter } from "../../../src/tools/adapters/toolable/adapter.js";
import type { SampleRequest, ToolableEvent, ToolableHostOptions } from "../../../src/tools/adapters/toolable/host.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { processesWith, waitFor } from "../../helpers/processes.js";
import { typeErrors } from "../../helpers/typecheck.js";

import { PYTOOL } from "./fixture.js";

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(path.join(tmpdir(), "tcm-toolable-"));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 5 });
});

async function registryWith(yaml: string, host: ToolableHostOptions = {}): Promise<{ registry: ToolRegistry; dir: string }> {
  const dir = tmp();
  writeFileSync(path.join(dir, "py.yaml"), yaml);
  return { registry: await ToolRegistry.load(dir, { toolable: host }), dir };
}

async function rejection(p: Promise<unknown>): Promise<ToolError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ToolError);
  return e as ToolError;
}

describe("toolable caller (Python fixture)", () => {
  let registry: ToolRegistry;
  let log: string;
  const events: ToolableEvent[] = [];
  const samples: SampleRequest[] = [];

  beforeAll(async () => {
    log = path.join(tmp(), "calls.log");
    ({ registry } = await registryWith(`type: toolable\ndiscover_timeout: 60\nname: py\ncommand: ${JSON.stringify(PYTOOL)}\ntimeout: 5\nenv: { PYTOOL_LOG: ${JSON.stringify(log)} }\n`, {
      onEvent: (e) => events.push(e),
      sampler: async (req) => {
        samples.push(req);
        return `answer to ${req.prompt}`;
      },
    }));
  });
  afterAll(() => registry.close());

  it("discovers every tool, with resources and prompts, and describes the manifest schema as TypeScript", async () => {
    const info = await registry.info("py");
    expect(info.type).toBe("toolable");
    expect(info.callables.map((c) => c.name)).toEqual(expect.arrayContaining(["add", "fail", "batch", "count", "repl", "ask", "paint", "resource", "prompt"]));
    const text = await registry.describe("py");
    expect(text).toContain('color: "red" | "green" | "blue"');
    expect(text).toMatch(/at: \{ x: number; y: number \}/);
    expect(text).toContain("tools.py.add({\"a\":1,\"b\":2})");
    expect(typeErrors(`${text}\nexport {};`)).toEqual([]);
  });

  it("success → the result; the input is validated before the process starts", async () => {
    expect(await registry.call("py", "add", { a: 2, b: 3 })).toEqual({ sum: 5 });
    const before = readFileSync(log, "utf8");
    const e = await rejection(registry.call("py", "add", { a: "two" }));
    expect(e.code).toBe("INVALID_INPUT");
    expect(await rejection(registry.call("py", "paint", { color: "purple", at: { x: 1, y: 2 } }))).toMatchObject({ code: "INVALID_INPUT" });
    expect(readFileSync(log, "utf8")).toBe(before);
  });

  it("error envelopes → ToolError with code, recoverable (default per code, or the tool's), suggestion, context", async () => {
    const table = { INVALID_INPUT: true, MISSING_PARAM: true, INVALID_PATH: true, NOT_FOUND: true, CONFLICT: true, PRECONDITION: true, TIMEOUT: false, PERMISSION: false, INTERNAL: false, DEPENDENCY: false };
    for (const [code, recoverable] of Object.entries(table)) {
      const e = await rejection(registry.call("py", "fail", { code, suggestion: "try again" }));
      expect({ code: e.code, recoverable: e.recoverable, suggestion: e.suggestion, context: e.context }).toEqual({ code, recoverable, suggestion: "try again", context: { asked: code } });
    }
    expect((await rejection(registry.call("py", "fail", { code: "TIMEOUT", recoverable: true }))).recoverable).toBe(true);
    expect((await rejection(registry.call("py", "fail", { code: "NOT_FOUND", recoverable: false }))).recoverable).toBe(false);
  });

  it("partial → { result, summary, errors } returned, not thrown", async () => {
    expect(await registry.call("py", "batch", { items: [1, 2, 3, 4] })).toEqual({
      result: { done: [2, 4] },
      summary: { total: 4, succeeded: 2, failed: 2, recoverable_failures: 1 },
      errors: [
        { code: "INVALID_INPUT", message: "odd item 1", recoverable: true },
        { code: "INVALID_INPUT", message: "odd item 3", recoverable: false },
      ],
    });
  });

  it("reads the last JSON line when the tool prints before its envelope", async () => {
    expect(await registry.call("py", "noisy", {})).toEqual({ quiet: false });
  });

  it("a non-zero exit, non-JSON output and huge output are clear INTERNAL errors", async () => {
    const crash = await rejection(registry.call("py", "crash", {}));
    expect(crash).toMatchObject({ code: "INTERNAL", exitCode: 3 });
    expect(crash.message).toContain("boom: something broke");
    const garbage = await rejection(registry.call("py", "garbage", {}));
    expect(garbage.code).toBe("INTERNAL");
    expect(garbage.message).toContain("no JSON envelope; it printed: this is not json");
    const huge = await rejection(registry.call("py", "huge", { mb: 40 }));
    expect(huge.message).toContain("output cap");
  });

  it("a hang is a TIMEOUT and the whole process group (the grandchild too) is killed", async () => {
    const e = await rejection(registry.call("py", "hang", {}, { timeoutMs: 1_500 }));
    expect(e.code).toBe("TIMEOUT");
    await waitFor(() => processesWith("sleep 313").length === 0, "the tool's grandchild to die");
  });

  it("streams progress/log/artifact events to the host and resolves to the final result", async () => {
    events.length = 0;
    expect(await registry.call("py", "count", { to: 2 }, { runId: "r1" })).toEqual({ counted: 2 });
    expect(events.map((e) => e.event)).toEqual([
      { type: "progress", message: "counted 1", percent: 50 },
      { type: "progress", message: "counted 2", percent: 100 },
      { type: "log", level: "info", message: "counting done" },
      { type: "artifact", name: "count.txt", uri: "file:///tmp/count.txt" },
    ]);
    expect(events[0]).toMatchObject({ tool: "py", callable: "count", runId: "r1" });
  });

  it("surfaces stderr notifications of non-streaming tools the same way", async () => {
    events.length = 0;
    expect(await registry.call("py", "notify", { steps: 2 })).toEqual({ steps: 2 });
    expect(events.map((e) => e.event.type)).toEqual(["progress", "progress", "log"]);
  });

  it("answers a sampling request through the sampler", async () => {
    expect(await registry.call("py", "ask", { question: "what is 2+2?" })).toEqual({ answer: "answer to what is 2+2?" });
    expect(samples.at(-1)).toMatchObject({ tool: "py", callable: "ask", prompt: "what is 2+2?", max_tokens: 1000, system: "Be brief" });
  });

  it("resources and prompts", async () => {
    expect(await registry.call("py", "resource", { uri: "notes://1" })).toEqual({ id: "1", text: "first note" });
    expect((await rejection(registry.call("py", "resource", { uri: "notes://9" }))).code).toBe("NOT_FOUND");
    expect((await rejection(registry.call("py", "resource", { uri: "--help" }))).code).toBe("INVALID_INPUT");
    expect(await registry.call("py", "prompt", { name: "greet", args: { who: "Ada" } })).toEqual({ prompt: "Say hello to Ada." });
  });

  it("drives a session: events, send, close", async () => {
    const adapter = (registry as unknown as { adapters: Map<string, { adapter: ToolableToolAdapter }> }).adapters.get("py")!.adapter;
    expect((await rejection(registry.call("py", "repl", {}))).message).toContain("session tool");
    const s = await adapter.openSession("repl", { greeting: "hello" });
    expect(await s.next()).toEqual({ type: "session_start", message: "hello", prompt: "> " });
    s.send({ say: "x" });
    expect(await s.next()).toEqual({ type: "echo", data: { say: "x" } });
    expect(await s.next()).toEqual({ type: "awaiting_input", prompt: "> " });
    expect(await s.close()).toEqual({ status: "success" });
    expect(await s.next()).toEqual({ type: "session_end", status: "completed" });
    expect(await s.next()).toBeNull();
  });
});

describe("toolable caller: no sampler, HTTP sampling, cache, folders", () => {
  it("with no sampler the tool gets an error reply (stdin closed), never a hang", async () => {
    const { registry } = await registryWith(`type: toolable\ndiscover_timeout: 60\nname: py\ncommand: ${JSON.stringify(PYTOOL)}\ntimeout: 20\n`);
    try {
      const e = await rejection(registry.call("py", "ask", { question: "hi" }));
      expect(e.code).toBe("DEPENDENCY");
      expect(e.message).toContain("no sampler is configured");
    } finally {
      await registry.close();
    }
  });

  it("answers sampling over the loopback HTTP callback", async () => {
    const { registry } = await registryWith(`type: toolable\ndiscover_timeout: 60\nname: py\ncommand: ${JSON.stringify(PYTOOL)}\n`, { sampleVia: "http", sampler: async (r) => `via http: ${r.prompt}` });
    try {
      expect(await registry.call("py", "ask", { question: "q" })).toEqual({ answer: "via http: q" });
    } finally {
      await registry.close();
    }
  });

  it("refreshes the manifest cache when the executable changes", async () => {
    const dir = tmp();
    const exe = path.join(dir, "tool.py");
    const write = (name: string) =>
      writeFileSync(exe, `import json,sys\nif sys.argv[1:]==['--discover']: print(json.dumps({'name':'t','version':'1','tools':[{'name':'${name}','summary':'s'}]}))\nelse: print(json.dumps({'name':'${name}','summary':'s','description':'','schema':{'type':'object','properties':{}}}))\n`);
    write("one");
    writeFileSync(path.join(dir, "t.yaml"), `type: toolable\ndiscover_timeout: 60\nname: t\ncommand: [python3, ${JSON.stringify(exe)}]\n`);
    const registry = await ToolRegistry.load(dir);
    try {
      expect((await registry.info("t")).callables.map((c) => c.name)).toEqual(["one"]);
      write("second");
      expect((await registry.info("t")).callables.map((c) => c.name)).toEqual(["second"]);
    } finally {
      await registry.close();
    }
  });

  it("a folder of executables: each one discovered (.py run with python3)", async () => {
    const dir = tmp();
    const bin = path.join(dir, "bin");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(bin);
    copyFileSync(PYTOOL, path.join(bin, "pytool.py"));
    writeFileSync(path.join(bin, "README"), "not executable");
    writeFileSync(path.join(dir, "all.yaml"), "type: toolable\ndiscover_timeout: 60\nname: all\ndir: ./bin\n");
    const registry = await ToolRegistry.load(dir);
    try {
      expect(await registry.call("all", "add", { a: 1 })).toEqual({ sum: 1 });
    } finally {
      await registry.close();
    }
  });
});
