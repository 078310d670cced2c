/**
 * Tools defined in code, on the host side: defineTool's checks, the `tools` option's forms (array,
 * flat map, nested map, AI SDK tools as they are), discovery derived from the schemas (TypeScript
 * and Python), validation by the schema's own validator, output schemas, and calls through the
 * registry with its middleware. Every executor's behaviour is the conformance suite's code-tools case.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { tool, jsonSchema } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { InProcessExecutor } from "../../../src/execution/in-process/executor.js";
import { Session } from "../../../src/session.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import { defineTool } from "../../../src/tools/code/define.js";
import { CodeToolSet, defineToolSource } from "../../../src/tools/code/tool-set.js";
import { CodeToolAdapter } from "../../../src/tools/code/adapter.js";
import { auditLog, type AuditEvent } from "../../../src/tools/middleware/builtins.js";
import { ToolRegistry } from "../../../src/tools/registry.js";

const weather = defineTool({
  name: "weather",
  description: "Current weather of a city",
  input: z.object({ city: z.string().describe("City name"), unit: z.enum(["C", "F"]).default("C") }),
  output: z.object({ city: z.string(), temp: z.number(), unit: z.string() }),
  execute: async ({ city, unit }) => ({ city, temp: unit === "C" ? 21 : 70, unit }),
});

const add = defineTool({
  name: "add",
  description: "Add two numbers",
  input: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  execute: ({ a, b }) => (a as number) + (b as number),
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "code-tools-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

async function session(tools: ConstructorParameters<typeof InProcessExecutor>[0]): Promise<Session> {
  const s = new Session({ storage: new FileStorage({ basePath: dir }), executor: new InProcessExecutor(tools) });
  await s.start();
  return s;
}

describe("defineTool", () => {
  it("fails at definition for a bad name, a missing execute or a value that is not a schema", () => {
    expect(() => defineTool({ name: "bad name", description: "", input: z.object({}), execute: () => 1 })).toThrow(TypeError);
    expect(() => defineTool({ name: "x", description: "", input: z.object({}) } as never)).toThrow(/execute must be a function/);
    expect(() => defineTool({ name: "x", description: "", input: 42 as never, execute: () => 1 })).toThrow(/expected a zod schema/);
  });

  it("types execute's arguments from the schema", () => {
    const t = defineTool({ name: "t", description: "", input: z.object({ n: z.number() }), execute: ({ n }) => n * 2 });
    const n: number = t.execute({ n: 2 }, {} as never) as number;
    expect(n).toBe(4);
  });
});

describe("the tools option", () => {
  it("refuses what is not a tool, naming the entry", () => {
    expect(() => CodeToolSet.from({ weather: 3 } as never, "X({ tools })")).toThrow(/X\(\{ tools \}\)\.weather: expected a tool/);
    expect(() => CodeToolSet.from([tool({ description: "d", inputSchema: z.object({}), execute: async () => 1 })] as never, "X")).toThrow(/has no name of its own/);
    expect(() => CodeToolSet.from({ list: weather }, "X")).toThrow(/reserved/);
    expect(() => CodeToolSet.from({ a: { b: { c: weather } } } as never, "X")).toThrow(/one level deep/);
    expect(() => CodeToolSet.from({ f: { type: "function", name: "f", invoke: () => 1 } } as never, "X")).toThrow(/fromAgentsTools/);
    expect(() => CodeToolSet.from([weather, weather], "X")).toThrow(/two tools are named 'weather'/);
  });

  it("gives tools.<name>(args) for a flat map and an array, tools.<ns>.<tool>(args) for a nested map", async () => {
    const s = await session({
      tools: {
        weather,
        sum: add,
        getTime: tool({ description: "The time", inputSchema: z.object({}), execute: async () => "noon" }),
        github: { createIssue: defineTool({ name: "createIssue", description: "Open an issue", input: z.object({ title: z.string() }), execute: ({ title }) => ({ number: 7, title }) }) },
      },
    });
    try {
      const r = await s.run(`[await tools.weather({ city: "Oslo" }), await tools.sum({ a: 2, b: 3 }), await tools.getTime(), await tools.github.createIssue({ title: "t" })]`);
      expect(r.error).toBeNull();
      expect(r.value).toEqual([{ city: "Oslo", temp: 21, unit: "C" }, 5, "noon", { number: 7, title: "t" }]);
      const listed = await s.listTools();
      expect(listed.map((t) => [t.name, t.type])).toEqual([["getTime", "code"], ["github", "code"], ["sum", "code"], ["weather", "code"]]);
      expect(listed.find((t) => t.name === "weather")!.direct!.signature).toBe('weather(args: { city: string; unit?: "C" | "F" }): Promise<{ city: string; temp: number; unit: string }>');
    } finally {
      await s.close();
    }
    const arr = await session({ tools: [weather, add] });
    try {
      expect((await arr.run(`await tools.add({ a: 1, b: 1 })`)).value).toBe(2);
    } finally {
      await arr.close();
    }
  });

  it("describes code tools as TypeScript from the schemas, with the output schema as the result type", async () => {
    const s = await session({ tools: [weather] });
    try {
      const text = await s.describeTool("weather");
      expect(text).toContain("city: string;");
      expect(text).toContain("City name");
      expect(text).toContain('unit?: "C" | "F";');
      expect(text).toContain("Promise<{ city: string; temp: number; unit: string }>");
      expect((await s.searchTools("weather of a city"))[0]!.name).toBe("weather");
    } finally {
      await s.close();
    }
  });

  it("validates arguments: the registry's checks, then the schema's own (refinements, transforms)", async () => {
    const even = defineTool({ name: "even", description: "", input: z.object({ n: z.number().refine((n) => n % 2 === 0, "must be even") }), execute: ({ n }) => n });
    const s = await session({ tools: [weather, even] });
    try {
      const missing = await s.run(`await tools.weather({})`);
      expect(missing.error?.name).toBe("ToolError");
      expect(missing.error?.message).toMatch(/tools\.weather: Missing required argument 'city'/);
      const wrong = await s.run(`await tools.weather({ city: 3 })`);
      expect(wrong.error?.message).toMatch(/'city' expected string/);
      const odd = await s.run(`await tools.even({ n: 3 })`);
      expect(odd.error?.message).toMatch(/tools\.even: invalid arguments: n: must be even/);
    } finally {
      await s.close();
    }
  });

  it("checks with a schema that validates asynchronously (async refinements), arguments and result", async () => {
    const positive = z.object({ n: z.number() }).refine(async (v) => (await Promise.resolve(v.n)) > 0, "n must be positive");
    const slow = defineTool({ name: "slow", description: "", input: positive, output: positive, execute: async ({ n }) => ({ n: n - 5 }) });
    const s = await session({ tools: [slow] });
    try {
      expect((await s.run(`(await tools.slow({ n: 9 })).n`)).value).toBe(4);
      expect((await s.run(`await tools.slow({ n: -1 })`)).error?.message).toMatch(/tools\.slow: invalid arguments: n must be positive/);
      expect((await s.run(`await tools.slow({ n: 2 })`)).error?.message).toMatch(/tools\.slow: invalid result .*n must be positive/);
    } finally {
      await s.close();
    }
  });

  it("checks the result against the output schema", async () => {
    const liar = defineTool({ name: "liar", description: "", input: z.object({}), output: z.object({ n: z.number() }), execute: () => ({ n: "x" }) as never });
    const s = await session({ tools: [liar] });
    try {
      const r = await s.run(`await tools.liar()`);
      expect(r.error?.message).toMatch(/tools\.liar: invalid result .*n:/);
    } finally {
      await s.close();
    }
  });

  it("reports a thrown error as a ToolError with the tool's message", async () => {
    const boom = defineTool({ name: "boom", description: "", input: z.object({}), execute: () => { throw new RangeError("no way"); } });
    const s = await session({ tools: [boom] });
    try {
      const r = await s.run(`let caught; try { await tools.boom() } catch (e) { caught = [e.name, e.message] } caught`);
      expect(r.value).toEqual(["ToolError", "tools.boom failed: RangeError: no way"]);
    } finally {
      await s.close();
    }
  });

  it("takes AI SDK tools with jsonSchema() input, and passes the SDK's execute options", async () => {
    let seen: { abortSignal?: unknown; toolCallId?: unknown } = {};
    const echo = tool({
      description: "Echo",
      inputSchema: jsonSchema<{ text: string }>({ type: "object", properties: { text: { type: "string" } }, required: ["text"] }),
      execute: async ({ text }, options) => {
        seen = options as never;
        return text.toUpperCase();
      },
    });
    const s = await session({ tools: { echo } });
    try {
      expect((await s.run(`await tools.echo({ text: "hi" })`)).value).toBe("HI");
      expect(seen.abortSignal).toBeInstanceOf(AbortSignal);
      expect(typeof seen.toolCallId).toBe("string");
    } finally {
      await s.close();
    }
  });

  it("runs the middleware (audit) around code tool calls", async () => {
    const events: AuditEvent[] = [];
    const s = await session({ tools: [add], middleware: [auditLog({ onEvent: (e) => void events.push(e) })] });
    try {
      await s.run(`await tools.add({ a: 1, b: 2 })`);
      expect(events.some((e) => e.call === "add" && e.ok && e.executor === "in-process")).toBe(true);
    } finally {
      await s.close();
    }
  });

  it("a YAML tool and a code tool of the same name fail the load, naming both", async () => {
    const registry = new ToolRegistry();
    await CodeToolSet.from([add], "X").registerInto(registry);
    expect(() => registry.register(new CodeToolAdapter("add", { kind: "tool", tool: add }), { source: "b.yaml" })).toThrow(/Duplicate tool name 'add': defined in the tools option \('add'\) and in b\.yaml/);
  });

  it("a tool source builds its adapter per session", async () => {
    let built = 0;
    const source = defineToolSource({
      createAdapter: (name) => {
        built++;
        return new CodeToolAdapter(name, { kind: "namespace", description: "Ops", tags: [], tools: new Map([["ping", defineTool({ name: "ping", description: "", input: z.object({}), execute: () => "pong" })]]) });
      },
    });
    const s = await session({ tools: { api: source } });
    try {
      expect((await s.run(`await tools.api.ping()`)).value).toBe("pong");
      expect(built).toBe(1);
    } finally {
      await s.close();
    }
  });

  it("Session takes tools for its default executor, and refuses them beside an executor of its own", async () => {
    expect(() => new Session({ storage: new FileStorage({ basePath: dir }), executor: new InProcessExecutor(), tools: [add] })).toThrow(/tools go to the executor/);
    const s = await Session.fromBase(path.join(dir, "base"), { tools: [add] });
    try {
      expect((await s.run(`await tools.add({ a: 20, b: 22 })`)).value).toBe(42);
    } finally {
      await s.close();
    }
  });
});
