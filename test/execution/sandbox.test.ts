/**
 * SandboxExecutor (QuickJS in WebAssembly): the shared conformance suite, then what only the
 * sandbox promises — hard limits (runaway sync and async code, long native operations, memory,
 * recursion, output, tool calls), parallel namespace calls, values crossing as copied data, and
 * what the guest can and cannot reach. The escape attempts live in test/security/.
 */
import { RUN_STOP_MARGIN_MS } from "../../src/execution/run-budget.js";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import { SandboxExecutor, type SandboxExecutorOptions } from "../../src/execution/sandbox/executor.js";
import { decode, encode } from "../../src/execution/sandbox/codec.js";
import { GUEST_BUNDLE } from "../../src/execution/sandbox/guest-bundle.js";
import { parseCallBatch } from "../../src/execution/sandbox/guest/runtime.js";
import { newSandboxModule } from "../../src/execution/sandbox/wasm.js";
import type { ToolAdapter } from "../../src/tools/protocol.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ProbeAdapter } from "../helpers/adapters.js";
import { executorConformance } from "../conformance/executor.js";
import { waitFor } from "../helpers/processes.js";

executorConformance("SandboxExecutor (quickjs)", (opts) => new SandboxExecutor(opts), { cancels: { syncLoop: false }, skillsRun: false });

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

describe("SandboxExecutor", () => {
  let dir: string;
  let session: Session;
  let executor: SandboxExecutor;
  let probe: ProbeAdapter;
  const sessions: Session[] = [];

  async function open(options: SandboxExecutorOptions = {}): Promise<Session> {
    probe = new ProbeAdapter();
    const tools = new ToolRegistry();
    tools.register(probe);
    executor = new SandboxExecutor({ defaultTimeoutMs: 5_000, tools, ...options });
    session = new Session({ storage: new FileStorage({ basePath: dir }), executor });
    sessions.push(session);
    await session.start();
    return session;
  }

  /** Runs code that must succeed; returns its value. */
  async function value(code: string, s: Session = session): Promise<unknown> {
    const r = await s.run(code);
    expect(r.error, code).toBeNull();
    return r.value;
  }

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-sandbox-"));
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  describe("options", () => {
    it('accepts engine "quickjs" and "deno" (tested in sandbox-deno.test.ts), nothing else', () => {
      expect(new SandboxExecutor({ engine: "quickjs" }).engine).toBe("quickjs");
      expect(new SandboxExecutor({ engine: "deno" }).engine).toBe("deno");
      expect(() => new SandboxExecutor({ engine: "v8" } as unknown as SandboxExecutorOptions)).toThrow(ValidationError);
    });

    it.each([
      [{ memoryMb: 8 }, /memoryMb: must be at least 32 MB/],
      [{ memoryMb: 1.5 }, /memoryMb: must be a whole number/],
      [{ maxOutputBytes: 10 }, /maxOutputBytes: must be at least 1000 bytes/],
      [{ maxToolCallsPerRun: 0 }, /maxToolCallsPerRun: must be at least 1/],
      [{ engine: "v8" }, /engine: must be "quickjs"/],
      [{ memoryMB: 64 }, /Unrecognized key.*memoryMB|memoryMB/],
    ])("rejects %j", (bad, message) => {
      expect(() => new SandboxExecutor(bad as SandboxExecutorOptions)).toThrow(message);
    });

    it("reports its capabilities honestly", async () => {
      await open();
      const report = session.capabilities();
      expect(report.capabilities.sort()).toEqual(["filesystemIsolation", "memoryLimit", "networkIsolation", "reset", "timeout"]);
      expect(session.supports("processIsolation")).toBe(false);
      expect(session.supports("depsInstall")).toBe(false);
      expect(report.notes.join("\n")).toMatch(/processIsolation: no/);
      expect(report.notes.join("\n")).toMatch(/cannot import packages/);
    });
  });

  describe("timeouts", () => {
    it("stops a synchronous loop and keeps variables", async () => {
      await open();
      await value("var kept = 'yes'");
      const r = await session.run("while (true) {}", { timeoutMs: 200 });
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toMatch(/200 ms.*variables are kept/);
      expect(await value("kept")).toBe("yes");
    });

    it("stops an async loop that never yields to the host, and keeps variables", async () => {
      await open();
      await value("var keptAsync = 1");
      const r = await session.run("for (;;) await null", { timeoutMs: 200 });
      expect(r.error?.name).toBe("TimeoutError");
      expect(await value("keptAsync + 1")).toBe(2);
    });

    it("stops promise chains that keep re-queueing themselves; they never run in a later run", async () => {
      await open();
      await value("var beforeChains = 1");
      const r = await session.run(
        "var spins = 0; const spin = () => { spins++; return Promise.resolve().then(spin) }; for (let i = 0; i < 10; i++) spin(); await new Promise(() => {})",
        { timeoutMs: 200 },
      );
      expect(r.error?.name).toBe("TimeoutError");
      // Each QuickJS interrupt ends the chain it lands in; if any chain were still queued the sandbox
      // is restarted (variables lost), otherwise variables are kept. Either way nothing resumes.
      const after = await value("typeof spins === 'number' ? (async () => { const b = spins; await new Promise((r) => setTimeout(r, 30)); return spins === b })() : 'lost'");
      if (after === "lost") {
        expect(r.error?.message).toMatch(/variables .* lost/);
        expect(await value("typeof beforeChains")).toBe("undefined");
      } else {
        expect(after).toBe(true);
        expect(r.error?.message).toMatch(/variables are kept/);
        expect(await value("beforeChains")).toBe(1);
      }
      expect(await value("[1, 2].map((x) => x * 2)")).toEqual([2, 4]);
    });

    it("a sandbox replaced after stopped promise chains prints nothing on the host's stderr", async () => {
      await open();
      const printed: string[] = [];
      const write = process.stderr.write.bind(process.stderr);
      const error = console.error;
      process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => (printed.push(String(chunk)), write(chunk, ...rest))) as typeof process.stderr.write;
      console.error = (...args: unknown[]) => void printed.push(args.map(String).join(" "));
      try {
        // Interrupts landing at different points of the chains: some leave objects QuickJS leaked,
        // which its teardown of the replaced sandbox used to report with an abort on stderr.
        for (let i = 0; i < 20; i++) {
          const r = await session.run("var spins = 0; const spin = () => { spins++; return Promise.resolve().then(spin) }; for (let i = 0; i < 10; i++) spin(); await new Promise(() => {})", { timeoutMs: 20 + ((i * 7) % 60) });
          expect(r.error?.name).toBe("TimeoutError");
        }
      } finally {
        process.stderr.write = write;
        console.error = error;
      }
      expect(printed.filter((line) => /Aborted|Assertion/.test(line))).toEqual([]);
      expect(await value("1 + 1")).toBe(2);
    });

    it("an abort inside QuickJS reaches the host as an exception, not as output", async () => {
      const printed: string[] = [];
      const error = console.error;
      console.error = (...args: unknown[]) => void printed.push(args.map(String).join(" "));
      try {
        const { module } = await newSandboxModule(32);
        const runtime = module.newRuntime();
        const context = runtime.newContext();
        context.newObject(); // never disposed: QuickJS's teardown finds it and aborts
        context.dispose();
        expect(() => runtime.dispose()).toThrow(/Aborted\(Assertion failed: list_empty/);
      } finally {
        console.error = error;
      }
      expect(printed).toEqual([]);
    });

    it("stops a sync loop in a timer callback and an endless setInterval", async () => {
      await open();
      const t1 = await session.run("setTimeout(() => { while (true) {} }, 1); await new Promise(() => {})", { timeoutMs: 200 });
      expect(t1.error?.name).toBe("TimeoutError");
      // The run hangs only once the interval has ticked, so the check below is never vacuous; the
      // limit leaves a loaded machine time for that first tick.
      const t2 = await session.run(
        "let ticks = 0; setInterval(() => { ticks++ }, 1); await new Promise((ok) => { const seen = () => (ticks > 0 ? ok() : setTimeout(seen, 1)); seen(); }); await new Promise(() => {})",
        { timeoutMs: 1_000 },
      );
      expect(t2.error?.name).toBe("TimeoutError");
      expect(await value("ticks > 0")).toBe(true);
      // The interval was dropped with its run: it does not tick during the next one.
      expect(await value("const before = ticks; await new Promise((r) => setTimeout(r, 30)); ticks === before")).toBe(true);
    });

    it("stops a long native operation the interrupt handler cannot reach, within timeout + 1 s", async () => {
      await open({ memoryMb: 1024 });
      await value("var survivor = 1");
      const started = performance.now();
      // Each iteration is one native call on a big array: QuickJS checks its interrupt handler only
      // every 10,000 calls, so only the watchdog can stop this in time.
      const r = await session.run("const big = new Array(2e5).fill('x'); while (true) big.join(',').length", { timeoutMs: 300 });
      expect(performance.now() - started).toBeLessThan(300 + 1_000);
      expect(r.error?.name).toBe("TimeoutError");
      expect(await value("typeof survivor")).toMatch(/number|undefined/);
      expect(await value("40 + 2")).toBe(42);
    });

    it("aborts a tool call still in flight when the run times out, and the stopped code never resumes", async () => {
      await open();
      const r = await session.run("try { await tools.probe.sleep({ ms: 10000 }) } finally { globalThis.resumed = true }", { timeoutMs: 200 });
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toMatch(/aborted/);
      await waitFor(() => probe.aborted === 1, "the probe call to be aborted");
      await new Promise((r) => setTimeout(r, 50));
      expect(await value("typeof resumed")).toBe("undefined");
    });

    it("gives each tool call the time left in the run and the executor name", async () => {
      await open();
      await value("await tools.probe.echo({ value: 1 })");
      const ctx = probe.contexts.at(-1);
      // The time left in the run, plus the margin that lets the run's own stop come first (run-budget.ts).
      expect(ctx?.timeoutMs).toBeGreaterThan(RUN_STOP_MARGIN_MS);
      expect(ctx?.timeoutMs).toBeLessThanOrEqual(5_000 + RUN_STOP_MARGIN_MS);
      expect(ctx?.executor).toBe("sandbox");
      expect(ctx?.signal).toBeInstanceOf(AbortSignal);
    });

    it("an exception thrown in a timer callback fails the run", async () => {
      await open();
      const r = await session.run("setTimeout(() => { throw new TypeError('boom from timer') }, 1); await new Promise((r) => setTimeout(r, 2000))");
      expect(r.error?.name).toBe("TypeError");
      expect(r.error?.message).toMatch(/timer callback: boom from timer/);
      expect(await value("'still fine'")).toBe("still fine");
    });
  });

  describe("memory", () => {
    for (const [label, code] of [
      ["arrays", "const a = []; while (true) a.push(new Array(1e5).fill(1))"],
      ["strings", "const s = []; while (true) s.push('x'.repeat(1 << 20) + s.length)"],
      ["bytes", "const u = []; while (true) u.push(new Uint8Array(1 << 20))"],
      ["small objects", "const o = []; while (true) o.push({ n: o.length, list: [1, 2, 3] })"],
    ] as const) {
      it(`a memory bomb of ${label} ends within timeout + 1 s with MemoryLimitError naming the limit, then the sandbox runs again`, async () => {
        await open({ memoryMb: 64 });
        const timeoutMs = 10_000;
        const started = performance.now();
        const r = await session.run(code, { timeoutMs });
        expect(performance.now() - started).toBeLessThan(timeoutMs + 1_000);
        expect(r.error?.name).toBe("MemoryLimitError");
        expect(r.error?.message).toContain("64 MB");
        expect(await value("[1, 2, 3].length")).toBe(3);
      });
    }

    it("running out inside QuickJS's own allocations (it throws null, the memory 1-2 MB short of the limit) is a MemoryLimitError and a fresh VM", async () => {
      // Issue 32: this was `Uncaught null`, and the exhausted VM was kept, so the next run that allocated failed too.
      await open({ memoryMb: 64 });
      const r = await session.run('let a = []; for (;;) a.push("x" + a.length)', { timeoutMs: 30_000 });
      expect(r.error?.name).toBe("MemoryLimitError");
      expect(r.error?.message).toContain("64 MB");
      expect(await value("globalThis.keep = []; for (let i = 0; i < 1e5; i++) keep.push({ i }); keep.length")).toBe(100_000);
    });
  });

  describe("recursion", () => {
    it("deep recursion is a RangeError, variables are kept, the sandbox stays usable", async () => {
      await open();
      await value("var beforeRecursion = 'kept'");
      const r = await session.run("function down(n: number): number { return down(n + 1) + 1 } down(0)");
      expect(r.error?.name).toBe("RangeError");
      expect(r.error?.message).toMatch(/call stack/);
      expect(await value("beforeRecursion")).toBe("kept");
      const caught = await value("let depthReached = 0; let caughtIt = false; function d(n: number): number { depthReached = n; return d(n + 1) } try { d(0) } catch (e) { caughtIt = e instanceof Error } [caughtIt, depthReached > 500]");
      expect(caught).toEqual([true, true]);
    });

    it("recursion inside native code on a 10^6-deep structure never crashes the host", async () => {
      await open();
      for (const code of [
        "let x: any = []; for (let i = 0; i < 1e6; i++) x = [x]; x.join()",
        "let o: any = {}; for (let i = 0; i < 1e6; i++) o = { o }; JSON.stringify(o)",
        "JSON.parse('['.repeat(1e6) + ']'.repeat(1e6))",
      ]) {
        // Building 10^6 levels takes seconds on a loaded machine: the limit is not what is tested.
        const r = await session.run(code, { timeoutMs: 60_000 });
        expect(r.ok, code).toBe(false);
        expect(r.error?.name, code).toMatch(/RangeError|SyntaxError|MemoryLimitError/);
        expect(await value("'alive'")).toBe("alive");
      }
    }, 200_000);
  });

  describe("output", () => {
    it("caps each stream at maxOutputBytes with a marker, without failing the run", async () => {
      // 20,000 console calls through QuickJS take ~9 s on a loaded 2-core machine: the cap is what is tested, not speed.
      await open({ maxOutputBytes: 2_000, defaultTimeoutMs: 60_000 });
      const r = await session.run("for (let i = 0; i < 10000; i++) { console.log('line ' + i); console.error('é'.repeat(50)) } 'finished'");
      expect(r.ok).toBe(true);
      expect(r.value).toBe("finished");
      expect(Buffer.byteLength(r.stdout.split("\n… [output limit")[0] ?? "", "utf8")).toBeLessThanOrEqual(2_000);
      expect(r.stdout).toMatch(/output limit of 2000 bytes reached \(maxOutputBytes\)/);
      expect(r.stdout.startsWith("line 0\nline 1\n")).toBe(true);
      expect(Buffer.byteLength(r.stderr.split("\n… [output limit")[0] ?? "", "utf8")).toBeLessThanOrEqual(2_000);
      expect(r.stderr).toMatch(/output limit/);
      const next = await session.run("console.log('fresh'); 1");
      expect(next.stdout).toBe("fresh\n");
    }, 90_000);

    it("formats console arguments like Node: %d, objects, Map, functions, errors", async () => {
      await open();
      const r = await session.run("console.log('n=%d', 5, { a: [1, 'x'] }, new Map([['k', 1]]), function named() {}, () => 1); console.warn(new RangeError('bad'))");
      expect(r.stdout).toBe("n=5 { a: [ 1, 'x' ] } Map(1) { 'k' => 1 } [Function: named] [Function (anonymous)]\n");
      expect(r.stderr).toMatch(/^RangeError: bad/);
    });
  });

  describe("tool calls", () => {
    it("maxToolCallsPerRun limits tool calls per run, counted before any middleware; the next run counts again", async () => {
      const reached: unknown[] = [];
      await open({ maxToolCallsPerRun: 3, middleware: [async (ctx, next) => (reached.push(ctx.args["value"]), next())] });
      const r = await session.run("for (let i = 0; i < 4; i++) await tools.probe.echo({ value: i })");
      expect(r.error?.name).toBe("ToolError");
      expect(r.error?.message).toMatch(/^tools\.probe\.echo: more than 3 tool calls in one run/);
      // The fourth call was refused before the middleware saw it.
      expect(reached).toEqual([0, 1, 2]);
      expect(await value("await tools.probe.echo({ value: 'again' })")).toBe("again");
    });

    it("five parallel 20 ms tool calls run concurrently", async () => {
      await open();
      const results = await value("await Promise.all([1, 2, 3, 4, 5].map(() => tools.probe.sleep({ ms: 20 })))");
      expect((results as number[]).length).toBe(5);
      expect(probe.maxInFlight).toBe(5);
    });

    it("a call left running after its run settles later into the same sandbox", async () => {
      await open();
      await value("var late: any = null; tools.probe.sleep({ ms: 30 }).then((v) => { late = v })");
      await new Promise((r) => setTimeout(r, 80));
      expect(await value("await null; late")).toBe(1);
    });

    it("calls start in the order they were made, also when one with binary arguments (not batched) comes between", async () => {
      await open();
      const seen: string[] = [];
      const order: ToolAdapter = {
        name: "order",
        info: async () => ({ name: "order", type: "toolable", description: "records calls", tags: [], direct: null, callables: [{ name: "note", description: "", params: [{ name: "tag", type: "string", required: true }, { name: "bytes", type: "unknown", required: false }], returns: "unknown" }] }),
        call: async (_callable, args) => {
          seen.push(String((args as { tag?: unknown }).tag));
          return null;
        },
        close: async () => undefined,
      };
      (executor.host as NonNullable<typeof executor.host>).tools.register(order);
      await value("await Promise.all([tools.order.note({ tag: 'a' }), tools.order.note({ tag: 'b', bytes: new Uint8Array([1]) }), tools.order.note({ tag: 'c' })])");
      expect(seen).toEqual(["a", "b", "c"]);
    });

    it("many calls started in one go all arrive (their batch is handed over in parts)", async () => {
      await open();
      // ~2 MB of arguments from one synchronous loop: more than one batch (BATCH_FLUSH_CHARS).
      expect(await value("(await Promise.all(Array.from({ length: 400 }, (_, i) => tools.probe.echo({ value: 'x'.repeat(5000) + i })))).map((v) => v.length).reduce((a, b) => a + b)")).toBe(400 * 5000 + 10 + 90 * 2 + 300 * 3);
    });

    it("deps: list is empty; add explains that the sandbox cannot import packages", async () => {
      await open();
      expect(await value("await deps.list()")).toEqual([]);
      const r = await session.run("await deps.add('lodash')");
      expect(r.error?.name).toBe("ValidationError");
      expect(r.error?.message).toMatch(/^deps\.add: the sandbox executor cannot import packages/);
    });

    it("imports and require fail with a clear message", async () => {
      await open();
      const imp = await session.run("import fs from 'node:fs'; fs");
      expect(imp.error?.message).toMatch(/not available in the sandbox \(no ambient authority/);
      const dyn = await session.run("await import('lodash')");
      expect(dyn.error?.message).toMatch(/not available in the sandbox/);
      expect(await value("typeof require")).toBe("undefined");
      await value(`await workflows.create({ name: "needs_fs", source: "export async function run() { return require('fs') }" })`);
      const wf = await session.run("await workflows.needs_fs()");
      expect(wf.error?.message).toMatch(/require\("fs"\) is not available in the sandbox/);
    });
  });

  describe("values cross as copies", () => {
    it("keeps NaN, -0, Infinity, undefined, BigInt, typed arrays, DataView, ArrayBuffer, Date, RegExp, Error, shared references and cycles", async () => {
      await open();
      const v = (await value(`
        const shared = { s: 1 };
        const cyclic: any = { name: 'c' }; cyclic.self = cyclic;
        ({ nan: NaN, negZero: -0, inf: -Infinity, undef: [undefined, 1], big: -(2n ** 80n),
           f64: new Float64Array([1.5, -2]), view: new DataView(new Uint8Array([7, 8]).buffer), buf: new Uint8Array([1, 2, 3]).buffer,
           when: new Date(86400000), bad: new Date(NaN), re: /a.b/gi, err: new TypeError('t'), pair: [shared, shared], cyclic })`)) as Record<string, unknown>;
      expect(v["nan"]).toBeNaN();
      expect(Object.is(v["negZero"], -0)).toBe(true);
      expect(v["inf"]).toBe(-Infinity);
      expect(v["undef"]).toEqual([undefined, 1]);
      expect((v["undef"] as unknown[]).length).toBe(2);
      expect(v["big"]).toBe(-(2n ** 80n));
      expect(v["f64"]).toEqual(new Float64Array([1.5, -2]));
      expect((v["view"] as DataView).getUint8(1)).toBe(8);
      expect(new Uint8Array(v["buf"] as ArrayBuffer)).toEqual(new Uint8Array([1, 2, 3]));
      expect((v["when"] as Date).toISOString()).toBe("1970-01-02T00:00:00.000Z");
      expect(Number.isNaN((v["bad"] as Date).getTime())).toBe(true);
      expect(v["re"]).toEqual(/a.b/gi);
      expect(v["err"]).toBeInstanceOf(Error);
      expect((v["err"] as Error).name).toBe("TypeError");
      const pair = v["pair"] as object[];
      expect(pair[0]).toBe(pair[1]);
      const cyclic = v["cyclic"] as { self: unknown };
      expect(cyclic.self).toBe(cyclic);
    });

    it("the same values reach the host through tool arguments and come back", async () => {
      await open();
      const back = await value("const arg = { m: new Map([[1, new Set(['x'])]]), b: new Uint8Array([5, 6]), d: new Date(0) }; await tools.probe.echo({ value: arg })");
      expect(back).toEqual({ m: new Map([[1, new Set(["x"])]]), b: new Uint8Array([5, 6]), d: new Date(0) });
      expect(await value("const echoed = await tools.probe.echo({ value: [new Uint8Array([1]), new Map()] }); [echoed[0] instanceof Uint8Array, echoed[1] instanceof Map]")).toEqual([true, true]);
    });

    it("a value with a function inside has no value but a display; a value too deep for the boundary says so", async () => {
      await open();
      const withFn = await session.run("({ n: 1, f: function inner() {} })");
      expect(withFn.ok).toBe(true);
      expect(withFn.value).toBeUndefined();
      expect(withFn.display).toMatch(/n: 1.*\[Function: inner\]/s);
      const deep = await session.run("let deep: any = 1; for (let i = 0; i < 1000; i++) deep = [deep]; deep");
      expect(deep.ok).toBe(true);
      expect(deep.value).toBeUndefined();
      expect(deep.display).toMatch(/could not be copied out of the sandbox: .*200 levels/);
    });

    it("a function passed to a tool is refused with a clear error naming where it was", async () => {
      await open();
      const r = await session.run("await tools.probe.echo({ value: { callback: () => 1 } })");
      expect(r.error?.name).toBe("ValidationError");
      expect(r.error?.message).toMatch(/^tools\.probe\.echo: a function cannot be copied across the sandbox boundary \(at value\.callback\)/);
    });
  });

  describe("lifecycle", () => {
    it("close() while a run waits on a tool call resolves the run and aborts the call", async () => {
      await open();
      const pending = session.run("await tools.probe.sleep({ ms: 10000 })");
      await waitFor(() => probe.inFlight === 1, "the call to start");
      await session.close();
      const r = await pending;
      expect(r.error?.name).toBe("SessionClosedError");
      await waitFor(() => probe.aborted === 1, "the call to be aborted");
    });

    it("close() with calls left running from an earlier run is clean", async () => {
      await open();
      await value("tools.probe.sleep({ ms: 200 }); tools.probe.sleep({ ms: 200 }); 'left running'");
      await session.close();
      await waitFor(() => probe.inFlight === 0, "the calls to end");
    });

    it("reset() forgets variables and timers; namespaces remain", async () => {
      await open();
      await value("var r1 = 1");
      await session.reset();
      expect(await value("typeof r1")).toBe("undefined");
      expect(await value("await tools.probe.echo({ value: 'ok' })")).toBe("ok");
    });
  });

  describe("the call batch", () => {
    it("is read as the guest writes it, and anything else is refused", () => {
      const calls: unknown[] = [];
      parseCallBatch(`1 tools call 14\n["a","x",null]12 artifacts list 5\n["a"]`, (...call) => calls.push(call));
      expect(calls).toEqual([
        [1, "tools", "call", '["a","x",null]'],
        [12, "artifacts", "list", '["a"]'],
      ]);
      for (const bad of ["1 tools call 99\n[]", "1 tools call\n[]", "x tools call 2\n[]", "1 tools call 2", "1 tools call -1\n[]", "1 a b c 2\n[]"]) {
        expect(() => parseCallBatch(bad, () => undefined), bad).toThrow(/malformed call batch/);
      }
    });
  });

  describe("the guest bundle", () => {
    it("is up to date with its sources (regenerate: node scripts/build-sandbox-guest.mjs)", async () => {
      const generator = (await import(path.join(ROOT, "scripts/build-sandbox-guest.mjs"))) as { renderBundleModule(): string };
      const onDisk = await readFile(path.join(ROOT, "src/execution/sandbox/guest-bundle.ts"), "utf8");
      expect(onDisk).toBe(generator.renderBundleModule());
      expect(GUEST_BUNDLE.length).toBeGreaterThan(1000);
    });

    it("the codec round-trips on the host and refuses prototype keys from the guest", () => {
      const value = { a: [1, -0, NaN, undefined, 2n], m: new Map([[{ k: 1 }, new Set([1])]]), when: new Date(5) };
      const enc = encode(value, { mode: "data", maxDepth: 10, maxBytes: 1e6 });
      expect(decode(enc.json, enc.buffers, { maxDepth: 11, strictKeys: true }).value).toEqual(value);
      const evil = JSON.stringify(["o", "__proto__", ["o", "polluted", true]]);
      expect(() => decode(evil, [], { maxDepth: 5, strictKeys: true })).toThrow(/__proto__/);
      const lenient = decode(evil, [], { maxDepth: 5, strictKeys: false }).value as Record<string, unknown>;
      expect(Object.getPrototypeOf(lenient)).toBe(Object.prototype);
      expect(Object.hasOwn(lenient, "__proto__")).toBe(true);
      expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    });
  });
});
