/**
 * Authoring toolable executables in TypeScript (`ts-code-mode/toolable`), with the example
 * examples/toolable/notes.ts run as a real process:
 *   - golden tests: the exact text each flag prints (Python json.dumps formatting);
 *   - key-for-key (and byte-for-byte where the tools agree) with the Python fixture that speaks the
 *     reference format;
 *   - round trip: our `type: toolable` caller drives our authored tool (events, sampling, session,
 *     resources, prompts, partial results, recoverable errors).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import { pyDumps } from "../../src/toolable/json.js";
import type { ToolableToolAdapter } from "../../src/tools/adapters/toolable/adapter.js";
import type { ToolableEvent } from "../../src/tools/adapters/toolable/host.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ensureBuilt } from "../cli/harness.js";
import { PYTOOL } from "../tools/toolable/fixture.js";

const DIR = fileURLToPath(new URL("../../examples/toolable/", import.meta.url));

beforeAll(ensureBuilt);

/**
 * What `node --import ts-code-mode/toolable/register notes.ts ...args` prints. The tool is
 * deterministic for these arguments, so an invocation the golden tests made is not spawned again
 * for the comparison with the Python fixture (each spawn loads the TypeScript hook: a second or
 * more on a loaded machine).
 */
const printed = new Map<string, string>();
function notes(args: string[], input = ""): string {
  const key = JSON.stringify([args, input]);
  const known = printed.get(key);
  if (known !== undefined) return known;
  const r = spawnSync(process.execPath, ["--import", "ts-code-mode/toolable/register", "notes.ts", ...args], { cwd: DIR, input, encoding: "utf8", timeout: 30_000 });
  expect(r.status).toBe(0);
  printed.set(key, r.stdout);
  return r.stdout;
}
function py(args: string[]): string {
  return execFileSync(PYTOOL, args, { encoding: "utf8" });
}
const keysDeep = (v: unknown): unknown => (Array.isArray(v) ? v.map(keysDeep) : typeof v === "object" && v !== null ? Object.entries(v).map(([k, x]) => [k, keysDeep(x)]) : typeof v);

describe("pyDumps writes what Python's json.dumps writes", () => {
  it("separators, indent, ensure_ascii", () => {
    expect(pyDumps({ a: [1, "é", null, true], b: {} })).toBe('{"a": [1, "\\u00e9", null, true], "b": {}}');
    expect(pyDumps({ a: [1], b: [] }, 2)).toBe('{\n  "a": [\n    1\n  ],\n  "b": []\n}');
  });
});

describe("golden: the exact JSON each flag emits", () => {
  it("envelopes", () => {
    expect(notes(["add", '{"a": 1, "b": 2}'])).toBe('{"status": "success", "result": {"sum": 3}}\n');
    expect(notes(["add", "--a", "1", "--b", "2"])).toBe('{"status": "success", "result": {"sum": 3}}\n');
    expect(notes(["get", '{"id": "9"}'])).toBe('{"status": "error", "error": {"code": "NOT_FOUND", "message": "No note 9", "recoverable": true, "suggestion": "Known ids: 1, 2", "context": {"id": "9"}}}\n');
    expect(notes(["get", '{"id": "1", "dry_run": true}'])).toBe('{"status": "success", "result": {"dry_run": true, "would_execute": {"id": "1", "dry_run": true}}}\n');
    expect(notes(["batch", '{"ids": ["1", "9"]}'])).toBe(
      '{"status": "partial", "result": {"notes": ["first note"]}, "summary": {"total": 2, "succeeded": 1, "failed": 1, "recoverable_failures": 1}, "errors": [{"code": "NOT_FOUND", "message": "No note 9", "recoverable": true}]}\n',
    );
    expect(notes(["nope", "{}"])).toBe('{"status": "error", "error": {"code": "NOT_FOUND", "message": "Unknown tool: nope", "recoverable": true, "suggestion": "Available tools: add, get, batch, count, repl, ask"}}\n');
    expect(notes(["add", "{bad"])).toMatch(/^\{"status": "error", "error": \{"code": "INVALID_INPUT", "message": "Invalid JSON input: .*", "recoverable": true\}\}\n$/);
    expect(notes(["add", '{"a": 1, "zzz": 2}'])).toMatch(/^\{"status": "error", "error": \{"code": "INVALID_INPUT", "message": "Invalid input: .*zzz.*", "recoverable": true\}\}\n$/);
    expect(notes(["count", "{}"])).toBe('{"status": "error", "error": {"code": "INVALID_INPUT", "message": "count is a streaming tool", "recoverable": true, "suggestion": "Add --stream to the command"}}\n');
    expect(notes(["repl", "{}"])).toBe('{"status": "error", "error": {"code": "INVALID_INPUT", "message": "repl is a session tool", "recoverable": true, "suggestion": "Add --session to the command"}}\n');
  });

  it("--validate, --stream, --session, --sample-via stdin", () => {
    expect(notes(["add", "--validate", '{"a": 1}'])).toBe('{"valid": true}\n');
    expect(notes(["add", "--validate", '{"a": "x"}'])).toMatch(/^\{"valid": false, "errors": \["a: .*"\]\}\n$/);
    expect(notes(["count", "--stream", '{"to": 2}'])).toBe(
      [
        '{"type": "progress", "message": "counted 1", "percent": 50}',
        '{"type": "progress", "message": "counted 2", "percent": 100}',
        '{"type": "log", "level": "info", "message": "counting done"}',
        '{"type": "artifact", "name": "count.txt", "uri": "file:///tmp/count.txt"}',
        '{"type": "result", "status": "success", "result": {"counted": 2}}',
        "",
      ].join("\n"),
    );
    expect(notes(["repl", "--session", "{}"], '{"x": 1}\n')).toBe(
      ['{"type": "session_start", "message": "Echo session", "prompt": "> "}', '{"type": "echo", "data": {"x": 1}}', '{"type": "awaiting_input", "prompt": "> "}', '{"type": "session_end", "status": "completed"}', '{"status": "success"}', ""].join("\n"),
    );
    const asked = notes(["ask", "--sample-via", "stdin", '{"question": "hi"}'], "");
    expect(asked).toMatch(/^\{"type": "sample_request", "id": "[0-9a-f]{8}", "prompt": "hi", "max_tokens": 1000, "system": "Be brief"\}\n\{"status": "error", "error": \{"code": "DEPENDENCY", "message": "stdin closed while waiting for a sample response", "recoverable": false\}\}\n$/);
  });

  it("discovery, listings, resources, prompts", () => {
    expect(notes(["--tools"])).toBe(
      '{"tools": [{"name": "add", "summary": "Add two integers"}, {"name": "get", "summary": "Read a note by id"}, {"name": "batch", "summary": "Read several notes; missing ones fail"}, {"name": "count", "summary": "Count, streaming progress"}, {"name": "repl", "summary": "Echo session"}, {"name": "ask", "summary": "Ask the caller\'s model"}]}\n',
    );
    expect(notes(["--resources"])).toBe('{"resources": [{"uri_pattern": "notes://{id}", "summary": "A note by id", "mime_types": ["application/json"], "tags": []}]}\n');
    expect(notes(["--prompts"])).toBe('{"prompts": [{"name": "greet", "summary": "Greeting prompt", "arguments": {"who": "Who to greet"}, "tags": []}]}\n');
    expect(notes(["--resource", "notes://1"])).toBe('{"id": "1", "text": "first note"}\n');
    expect(notes(["--resource", "notes://1/x"])).toBe('{"status": "error", "error": {"code": "NOT_FOUND", "message": "Resource not found: notes://1/x", "recoverable": true}}\n');
    expect(notes(["--prompt", "greet", '{"who": "Ada"}'])).toBe('{"prompt": "Say hello to Ada."}\n');
    expect(notes(["add", "--manifest"])).toBe(
      pyDumps(
        {
          name: "add",
          summary: "Add two integers",
          description: "Returns their sum.",
          streaming: false,
          session_mode: false,
          schema: { type: "object", properties: { a: { type: "integer", description: "first" }, b: { default: 0, type: "integer" } }, required: ["a"], additionalProperties: false },
          examples: [{ a: 1, b: 2 }],
          tags: ["math"],
        },
        2,
      ) + "\n",
    );
    expect(notes([])).toContain("Tools:");
  });

  it("matches the Python reference-format fixture key for key (and byte for byte where the tools agree)", () => {
    expect(notes(["add", '{"a": 1, "b": 2}'])).toBe(py(["add", '{"a": 1, "b": 2}']));
    expect(notes(["--resources"])).toBe(py(["--resources"]));
    expect(notes(["--prompts"])).toBe(py(["--prompts"]));
    const ours = JSON.parse(notes(["--discover"])) as { tools: unknown[] };
    const theirs = JSON.parse(py(["--discover"])) as { tools: unknown[] };
    expect(keysDeep({ ...ours, tools: [ours.tools[0]] })).toEqual(keysDeep({ ...theirs, tools: [theirs.tools[0]] }));
    const m = (t: string) => Object.keys(JSON.parse(t) as object);
    expect(m(notes(["add", "--manifest"]))).toEqual(m(py(["add", "--manifest"])));
    const shape = (t: string) => keysDeep({ ...(JSON.parse(t) as object), result: null });
    expect(shape(notes(["batch", '{"ids": ["1", "9", "8"]}']))).toEqual(shape(py(["batch", '{"items": [2, 1, 3]}'])));
    expect(notes(["count", "--stream", '{"to": 2}'])).toBe(py(["count", "--stream", "--to", "2"]));
  });
});

describe("round trip: our caller drives our authored tool", () => {
  let registry: ToolRegistry;
  const events: ToolableEvent[] = [];
  beforeAll(async () => {
    registry = await ToolRegistry.load(DIR, { toolable: { onEvent: (e) => events.push(e), sampler: async (r) => `sampled: ${r.prompt}` } });
  });
  afterAll(() => registry.close());

  it("calls, errors, partials, events, sampling, sessions, resources, prompts", async () => {
    expect(await registry.call("notes", "add", { a: 2, b: 5 })).toEqual({ sum: 7 });
    const e = await registry.call("notes", "get", { id: "9" }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ToolError);
    expect(e).toMatchObject({ code: "NOT_FOUND", recoverable: true, suggestion: "Known ids: 1, 2", context: { id: "9" } });
    expect(await registry.call("notes", "batch", { ids: ["1", "9"] })).toMatchObject({ summary: { total: 2, succeeded: 1 } });
    expect(await registry.call("notes", "count", { to: 2 })).toEqual({ counted: 2 });
    expect(events.map((x) => x.event.type)).toEqual(["progress", "progress", "log", "artifact"]);
    expect(await registry.call("notes", "ask", { question: "q" })).toEqual({ answer: "sampled: q" });
    expect(await registry.call("notes", "resource", { uri: "notes://2" })).toEqual({ id: "2", text: "second note" });
    expect(await registry.call("notes", "prompt", { name: "greet", args: { who: "Bo" } })).toEqual({ prompt: "Say hello to Bo." });
    const adapter = (registry as unknown as { adapters: Map<string, { adapter: ToolableToolAdapter }> }).adapters.get("notes")!.adapter;
    const s = await adapter.openSession("repl", {});
    expect(await s.next()).toMatchObject({ type: "session_start" });
    s.send({ hi: 1 });
    expect(await s.next()).toEqual({ type: "echo", data: { hi: 1 } });
    expect(await s.close()).toEqual({ status: "success" });
    expect(await registry.describe("notes")).toContain("a: number;");
  });
});
