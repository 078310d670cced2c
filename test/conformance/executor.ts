/**
 * Behaviour every Executor must show, whatever runs the agent's code (in-process vm, child process,
 * sandbox, container). An executor's test file calls `executorConformance(name, factory)`; the
 * factory builds a fresh, unstarted executor from the options the suite chooses.
 *
 * Each test drives a real Session over a real FileStorage in a temp folder and the example tool
 * YAML of the repository (real commands: echo, ls, wc, ...). Assertions are about results only,
 * never about how long something took.
 *
 * Sessions are shared inside a `describe` block where the tests cannot disturb each other (each
 * uses its own variable, workflow and artifact names); tests that need a clean slate (reset,
 * close, a second session on the same folder) open their own.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cp, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/processes.js";
import { NotFoundError } from "../../src/errors.js";
import type { ExecutionError, ExecutionResult, Executor, RunOptions } from "../../src/execution/protocol.js";
import { MAX_DISPLAY_CHARS } from "../../src/execution/result.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { languageConformance, type GuestLanguage } from "./languages.js";
import type { CodeToolsInput } from "../../src/tools/code/tool-set.js";
import * as conformanceCodeTools from "../fixtures/code-tools/tools.js";

export interface ExecutorFactoryOptions {
  toolsPath: string;
  defaultTimeoutMs: number;
  /** Tools defined in code (the code-tools case passes test/fixtures/code-tools); absent elsewhere. */
  tools?: CodeToolsInput;
}

export type ExecutorFactory = (opts: ExecutorFactoryOptions) => Executor;

export interface ConformanceOptions {
  /**
   * Ids (the `[id]` in a test title) of tests this executor is known to fail, each with an open
   * issue. Those run as `it.fails`: they must really fail, and once fixed the suite says to drop the id.
   */
  knownBugs?: readonly string[];
  /**
   * What a cancel (RunOptions.signal) can stop in this executor, as its timeout can (default: all).
   * A loop that never yields to the host's event loop cannot be cancelled by an executor that runs
   * on that loop (in-process: neither loop; QuickJS: the synchronous one, stopped by its deadline).
   */
  cancels?: { syncLoop?: boolean; microtaskLoop?: boolean };
  /** The guest's language (default "typescript"); other languages run the per-language part (./languages.ts) only. */
  language?: GuestLanguage;
  /**
   * Whether `skills.run` runs a skill's script (default true). An executor that cannot run commands
   * (the sandbox) declares false, and the suite checks that it refuses clearly instead.
   * "isolated": the script runs where the guest runs (a container: no python3, no host paths, its
   * own pids), so the suite checks the argv case here and the executor's own tests the rest.
   */
  skillsRun?: boolean | "isolated";
  /**
   * The conformance run that already covers this executor's REPL language, when its guest code runs
   * in another executor (RemoteExecutor: the server's subprocess executor). The REPL tests whose
   * values are plain (TypeScript stripped, declarations kept across runs, completion values,
   * timers) are then skipped here, each titled with the run that has it; the REPL tests whose
   * values, display, output or errors cross this executor's own transport still run.
   */
  replCoveredBy?: string;
  /** Where the guest sees a skill's SKILL.md (default: its host path; a container session: /skills/<name>/SKILL.md). */
  skillLocation?: (name: string, hostPath: string) => string;
}

/** The repository's example tools: date, echo, grep, ls, sha256sum, uname, wc. */
export const EXAMPLE_TOOLS_PATH = fileURLToPath(new URL("../../examples/tools/", import.meta.url));
/** The repository's example skills: csv-summary (a script) and commit-message (instructions only). */
export const EXAMPLE_SKILLS_PATH = fileURLToPath(new URL("../../examples/skills/", import.meta.url));
export const EXAMPLE_TOOL_NAMES = ["date", "echo", "grep", "ls", "sha256sum", "uname", "wc"] as const;

/**
 * Generous on purpose: the first workflow call loads the TypeScript parser, and a slow CI machine
 * must not turn that into a TimeoutError. Timeout tests pass their own small `timeoutMs`.
 */
const DEFAULT_TIMEOUT_MS = 20_000;
/** Small enough to keep the suite fast, large enough for any executor to notice a runaway loop. */
const SHORT_TIMEOUT_MS = 250;

const TRIPLE_SOURCE = [
  "/** Triple a number. */",
  "export async function run({ n }: { n: number }): Promise<number> {",
  "  return n * 3;",
  "}",
].join("\n");

/** Runs `code` in the guest and returns what it threw, as the guest saw it, or null if it did not throw. */
const CATCH = (expr: string) => `
let caughtError: Record<string, unknown> | null = null;
try {
  await (${expr});
} catch (e: any) {
  caughtError = {
    name: e.name, message: e.message, isError: e instanceof Error,
    code: e.code, recoverable: e.recoverable, exitCode: e.exitCode, suggestions: e.suggestions,
  };
}
caughtError`;

interface GuestError {
  name: string;
  message: string;
  isError: boolean;
  code?: unknown;
  recoverable?: unknown;
  exitCode?: unknown;
  suggestions?: unknown;
}

export function executorConformance(name: string, factory: ExecutorFactory, options: ConformanceOptions = {}): void {
  const knownBugs = new Set(options.knownBugs ?? []);
  const cancels = { syncLoop: true, microtaskLoop: true, ...options.cancels };
  /** A test that this executor may list as a known bug: then it must fail, else it must pass. */
  const bugTest = (id: string, title: string, fn: () => Promise<void>) =>
    (knownBugs.has(id) ? it.fails : it)(`${title} [${id}]`, fn);
  /** A test of the REPL language itself, with plain values: skipped where options.replCoveredBy has it. */
  const replTest = (title: string, fn: () => Promise<void>) =>
    options.replCoveredBy ? it.skip(`${title} (run by ${options.replCoveredBy})`, fn) : it(title, fn);
  const replBugTest = (id: string, title: string, fn: () => Promise<void>) =>
    options.replCoveredBy ? replTest(`${title} [${id}]`, fn) : bugTest(id, title, fn);

  describe(`Executor conformance: ${name}`, () => {
    const dirs: string[] = [];
    const opened: Session[] = [];

    afterAll(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
      // A timed-out run's storage write may still be settling (its commit is refused, its temporary
      // file removed): ENOTEMPTY is retried rather than failing the file.
      await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true, maxRetries: 10 })));
    });

    async function tempDir(): Promise<string> {
      const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-conf-"));
      dirs.push(dir);
      return dir;
    }

    /** A started session with a fresh executor; `base` reuses a storage folder (a second session on the same data). */
    async function openSession(base?: string, extra: Pick<ExecutorFactoryOptions, "tools"> = {}): Promise<Session> {
      const storage = new FileStorage({ basePath: base ?? (await tempDir()) });
      const session = new Session({ storage, executor: factory({ toolsPath: EXAMPLE_TOOLS_PATH, defaultTimeoutMs: DEFAULT_TIMEOUT_MS, ...extra }) });
      opened.push(session);
      await session.start();
      return session;
    }

    /**
     * One started session with the defaults for the REPL, cancellation, tools and artifacts blocks
     * and the host facade: their tests use variable, artifact and tool names of their own and
     * create no workflows (the facade lists them exactly); a timeout or cancel that restarts the
     * guest loses only variables, which no later block reads. One executor start (seconds for a
     * container) serves the five; reset, workflows, skills and the lifecycle tests open their own.
     */
    let shared: Promise<Session> | undefined;
    const sharedSession = (): Promise<Session> => (shared ??= openSession());

    /** Runs code that must succeed and returns its value; a failure shows the agent's error. */
    async function value(session: Session, code: string, runOptions?: RunOptions): Promise<unknown> {
      const r = await session.run(code, runOptions);
      expect(r.error, `unexpected error for: ${code}`).toBeNull();
      expect(r.ok).toBe(true);
      return r.value;
    }

    /** Runs code that must fail and returns its error. */
    async function failure(session: Session, code: string, runOptions?: RunOptions): Promise<ExecutionError> {
      const r = await session.run(code, runOptions);
      expect(r.ok, `expected an error for: ${code}`).toBe(false);
      expect(r.value).toBeUndefined();
      expect(r.error).not.toBeNull();
      const error = r.error as ExecutionError;
      expect(typeof error.name).toBe("string");
      expect(typeof error.message).toBe("string");
      return error;
    }

    /** What `expr` threw inside the guest (it must throw). */
    async function guestError(session: Session, expr: string): Promise<GuestError> {
      const caught = (await value(session, CATCH(expr))) as GuestError | null;
      expect(caught, `expected ${expr} to throw inside the guest`).not.toBeNull();
      return caught as GuestError;
    }

    languageConformance(options.language ?? "typescript", { openSession: () => openSession(), openCodeToolsSession: () => openSession(undefined, { tools: { ...conformanceCodeTools } }), value, failure, shortTimeoutMs: SHORT_TIMEOUT_MS });
    // The rest of the suite is written in TypeScript snippets.
    if ((options.language ?? "typescript") !== "typescript") return;

    // ---------------------------------------------------------------------------------------------
    describe("REPL semantics", () => {
      let s: Session;
      beforeAll(async () => {
        s = await sharedSession();
      });

      replTest("strips TypeScript: interfaces, type aliases, generics, `as`, `!`, annotations, access modifiers", async () => {
        const code = `
          interface Point { x: number; y: number }
          type Pair<T> = [T, T];
          function swap<T>(p: Pair<T>): Pair<T> { return [p[1], p[0]]; }
          class Box<T> implements Iterable<T> {
            constructor(private readonly items: T[] = []) {}
            add(item: T): this { this.items.push(item); return this; }
            *[Symbol.iterator](): Iterator<T> { yield* this.items; }
          }
          const p: Point = { x: 1, y: 2 } as Point;
          const maybe: number | undefined = [p.x][0];
          const box = new Box<number>().add(maybe!).add(p.y as unknown as number);
          ({ swapped: swap<number>([p.x, p.y]), items: [...box], optional: ((a: number, b?: number): number => a + (b ?? 10))(1) })`;
        expect(await value(s, code)).toEqual({ swapped: [2, 1], items: [1, 2], optional: 11 });
      });

      replBugTest("ts-explicit-type-arguments", "strips explicit type arguments in a snippet that is otherwise valid JavaScript", async () => {
        // `f<T>(x)` also parses as JavaScript — as the comparisons `(f < T) > (x)` — so it must not be run as JavaScript.
        expect(await value(s, 'new Set<string>(["a", "b"]).size')).toBe(2);
        expect(await value(s, "await new Promise<number>((resolve) => resolve(7))")).toBe(7);
        expect(await value(s, "[3, 1, 2].map<number>((x) => x * 2)")).toEqual([6, 2, 4]);
      });

      replTest("supports top-level await, including a promise as the last value", async () => {
        expect(await value(s, "const tla: number = await new Promise((r) => setTimeout(() => r(41), 1)); tla + 1")).toBe(42);
        expect(await value(s, "Promise.resolve('resolved')")).toBe("resolved");
      });

      replTest("keeps const, let, var, function and class declarations for later runs", async () => {
        const first = await s.run(`
          const keptConst = 1;
          let keptLet: number = 2;
          var keptVar = 3;
          function keptFn(): number { return 4; }
          class KeptClass { five(): number { return 5; } }`);
        expect(first.error).toBeNull();
        expect(first.value).toBeUndefined();
        expect(await value(s, "keptConst + keptLet + keptVar + keptFn() + new KeptClass().five()")).toBe(15);
        expect(await value(s, "keptLet = keptLet * 10; keptLet")).toBe(20);
        expect(await value(s, "typeof keptFn + ' ' + typeof KeptClass")).toBe("function function");
      });

      replBugTest("top-level-var-in-statement", "keeps a var declared inside a top-level for/if/block statement, as the Node REPL does", async () => {
        // `var` is scoped to the script, not to the loop or block: JavaScript (and the Node REPL) keep it.
        await value(s, "for (var loopVar = 0; loopVar < 3; loopVar++) {}\nif (true) { var blockVar = 'b'; }");
        expect(await value(s, "[typeof loopVar, typeof blockVar]")).toEqual(["number", "string"]);
      });

      replTest("keeps names bound by destructuring declarations", async () => {
        await value(s, "const { dA, nested: { dB }, list: [dC, ...dRest], dD = 'dflt' } = { dA: 1, nested: { dB: 2 }, list: [3, 4, 5] } as any;");
        expect(await value(s, "[dA, dB, dC, dRest, dD]")).toEqual([1, 2, 3, [4, 5], "dflt"]);
      });

      replTest("closures, timers and later runs share one binding of a top-level variable", async () => {
        await value(s, "let shared = 0; function bump() { shared++; return shared; }");
        expect(await value(s, "bump(); bump()")).toBe(2);
        expect(await value(s, "shared")).toBe(2);
        expect(await value(s, "shared = 10; bump()")).toBe(11);
        expect(await value(s, "shared")).toBe(11);
        await value(s, "setTimeout(() => { shared = 100 }, 1); await new Promise((r) => setTimeout(r, 30))");
        expect(await value(s, "[shared, bump()]")).toEqual([100, 101]);
        // A loop over a top-level variable sees its own writes (it runs on a local binding).
        expect(await value(s, "let acc = 0; for (let i = 0; i < 100000; i++) acc += i; acc")).toBe(4999950000);
        expect(await value(s, "acc")).toBe(4999950000);
      });

      replTest("code never outlives its run: a timer still pending when the run ends never fires", async () => {
        expect(await value(s, "var leftTimerFired = false; setTimeout(() => { leftTimerFired = true }, 5); 'returned'")).toBe("returned");
        await new Promise((r) => setTimeout(r, 60));
        expect(await value(s, "leftTimerFired")).toBe(false);
      });

      replTest("a declaration made in a function body stays local", async () => {
        await value(s, "function localScope() { const notGlobal = 1; return notGlobal; } localScope()");
        expect(await value(s, "typeof notGlobal")).toBe("undefined");
      });

      it("returns the value of the last expression; no last expression gives undefined and empty display", async () => {
        expect(await value(s, "const lastA = 2;\nlastA * 21")).toBe(42);
        const r = await s.run("const noExpr = 1;");
        expect(r).toMatchObject({ ok: true, value: undefined, display: "", error: null });
        expect(await value(s, "null")).toBeNull();
      });

      replTest("a last if/try/switch/block gives its completion value, as the Node REPL does; a last `{ a: 1 }` is an object", async () => {
        expect(await value(s, "const cv = 1;\nif (cv) { cv + 1 }")).toBe(2);
        expect(await value(s, "if (!cv) 'yes'; else 'no'")).toBe("no");
        expect(await value(s, "if (!cv) { 1 }")).toBeUndefined();
        expect(await value(s, "try { await Promise.reject(new Error('gone')) } catch (e) { 'caught ' + e.message }")).toBe("caught gone");
        expect(await value(s, "try { 'body' } finally { 'cleanup' }")).toBe("body");
        expect(await value(s, "switch (cv) { case 1: 'one'; break; default: 'other' }")).toBe("one");
        expect(await value(s, "{ const inner = 3; inner * 2 }")).toBe(6);
        expect(await value(s, "{ a: 1 }")).toEqual({ a: 1 });
        expect(await value(s, "if (cv) { Promise.resolve('awaited') }")).toBe("awaited");
        // Expressions inside functions in the last statement are not its completion.
        expect(await value(s, "if (cv) { [1, 2].map((n) => { n * 2 }); 'after' }")).toBe("after");
      });

      it("returns host-realm structured clones: Map, Set, Date, BigInt, Uint8Array, nested objects", async () => {
        const v = (await value(
          s,
          `({ map: new Map<string, number>([["a", 1]]), set: new Set([1, 2]), when: new Date(0), big: 2n ** 70n,
              bytes: new Uint8Array([0, 1, 255]), nested: { list: [1, { deep: [true, null, "s"] }], re: /x+/g } })`,
        )) as Record<string, unknown>;
        expect(v["map"]).toBeInstanceOf(Map);
        expect(v["map"]).toEqual(new Map([["a", 1]]));
        expect(v["set"]).toBeInstanceOf(Set);
        expect([...(v["set"] as Set<number>)]).toEqual([1, 2]);
        expect(v["when"]).toBeInstanceOf(Date);
        expect((v["when"] as Date).toISOString()).toBe("1970-01-01T00:00:00.000Z");
        expect(v["big"]).toBe(2n ** 70n);
        expect(v["bytes"]).toBeInstanceOf(Uint8Array);
        expect([...(v["bytes"] as Uint8Array)]).toEqual([0, 1, 255]);
        expect(v["nested"]).toBeInstanceOf(Object);
        expect((v["nested"] as { list: unknown }).list).toEqual([1, { deep: [true, null, "s"] }]);
        expect((v["nested"] as { re: unknown }).re).toBeInstanceOf(RegExp);
        expect(Array.isArray((v["nested"] as { list: unknown }).list)).toBe(true);
        expect(await value(s, "10n")).toBe(10n);
        expect(await value(s, "new Map([[1, new Set(['x'])]])")).toEqual(new Map([[1, new Set(["x"])]]));
      });

      it("display shows strings as they are, renders other values, and is bounded", async () => {
        const str = await s.run("'line one\\nline \"two\"'");
        expect(str.value).toBe('line one\nline "two"');
        expect(str.display).toBe('line one\nline "two"');
        expect((await s.run("({ a: 1, b: [1, 2] })")).display).toMatch(/a: 1.*b: \[ 1, 2 \]/s);
        expect((await s.run("new Map([['k', 1]])")).display).toContain("Map(1)");

        const huge = await s.run("'x'.repeat(200_000)");
        expect(huge.ok).toBe(true);
        expect(huge.value).toBe("x".repeat(200_000));
        expect(huge.display.length).toBeLessThan(MAX_DISPLAY_CHARS + 200);
        expect(huge.display.startsWith("xxxxxxxx")).toBe(true);
        expect(huge.display).toMatch(/cut/);

        const hugeObject = await s.run("Array.from({ length: 5000 }, (_, i) => ({ i, text: 'y'.repeat(50) }))");
        expect(hugeObject.ok).toBe(true);
        expect((hugeObject.value as unknown[]).length).toBe(5000);
        expect(hugeObject.display.length).toBeLessThan(MAX_DISPLAY_CHARS + 200);
        expect(hugeObject.display).toMatch(/more|cut/);
      });

      it("values that would make rendering or JSON explode come back promptly and say what was cut [bounded-values]", async () => {
        // 41 arrays, 2^40 paths; 7 levels of 60 keys that all hold the same child (60^6 values at inspect's depth).
        const dag = await s.run("let dag40: any = [1]; for (let i = 0; i < 40; i++) dag40 = [dag40, dag40]; dag40");
        expect(dag.ok).toBe(true);
        expect(dag.display.length).toBeLessThan(MAX_DISPLAY_CHARS + 200);
        const wide = await s.run("let wide60: any = 0; for (let l = 0; l < 7; l++) { const n: any = {}; for (let k = 0; k < 60; k++) n['k' + k] = wide60; wide60 = n; } wide60");
        expect(wide.ok).toBe(true);
        expect(wide.display.length).toBeLessThan(MAX_DISPLAY_CHARS + 500);
        // Every executor says the display was cut (the sandbox prunes its copy of the value first, with its own note).
        expect(wide.display).toMatch(/cut|not shown/);
        const saved = (await value(s, CATCH('artifacts.save("dag40", dag40)'))) as GuestError | null;
        expect(saved).toMatchObject({ name: "ValidationError", message: expect.stringMatching(/2\^40 paths through shared references/) });
      });

      it("each output stream is capped at about 1,000,000 characters [output-cap]", async () => {
        const r = await s.run("console.log('x'.repeat(3_000_000)); console.error('y'.repeat(3_000_000)); 1");
        expect(r.ok).toBe(true);
        for (const text of [r.stdout, r.stderr]) {
          expect(text.length).toBeGreaterThan(900_000);
          expect(text.length).toBeLessThan(1_000_200);
          expect(text).toMatch(/cut/);
        }
      });

      it("a function value: ok, value undefined, display non-empty", async () => {
        const r = await s.run("(function namedFn(a: number) { return a; })");
        expect(r.ok).toBe(true);
        expect(r.error).toBeNull();
        expect(r.value).toBeUndefined();
        expect(r.display).toMatch(/namedFn/);
        const arrow = await s.run("(x: number) => x");
        expect(arrow.ok).toBe(true);
        expect(arrow.value).toBeUndefined();
        expect(arrow.display.length).toBeGreaterThan(0);
      });

      it("console.log/info/debug go to stdout and console.error/warn to stderr, in order, formatted", async () => {
        const r = await s.run(`
          console.log("out 1");
          console.error("err 1");
          console.info("out %d", 2);
          console.warn("err", 2, { k: "v" });
          console.debug("out 3");
          "done"`);
        expect(r.ok).toBe(true);
        expect(r.value).toBe("done");
        expect(r.stdout).toBe("out 1\nout 2\nout 3\n");
        expect(r.stderr).toBe("err 1\nerr 2 { k: 'v' }\n");
      });

      it("output belongs to its own run", async () => {
        await value(s, "console.log('first run')");
        const r = await s.run("console.log('second run'); 1");
        expect(r.stdout).toBe("second run\n");
        expect(r.stderr).toBe("");
      });

      it("output written before an error is kept", async () => {
        const r = await s.run("console.log('before'); console.error('warned'); throw new Error('after')");
        expect(r.ok).toBe(false);
        expect(r.stdout).toBe("before\n");
        expect(r.stderr).toBe("warned\n");
        expect(r.error).toMatchObject({ name: "Error", message: "after" });
      });

      describe("errors come back in `error` with stable names, and the session stays usable", () => {
        const cases: Array<{ title: string; code: string; check(e: ExecutionError): void; options?: RunOptions }> = [
          {
            title: "SyntaxError, with the line",
            code: "const first = 1;\nconst second = 2;\nconst third = (;",
            check: (e) => {
              expect(e.name).toBe("SyntaxError");
              expect(e.message).toMatch(/line 3/);
            },
          },
          {
            title: "SyntaxError in TypeScript syntax",
            code: "const typed: number = ;",
            check: (e) => expect(e.name).toBe("SyntaxError"),
          },
          {
            title: "ReferenceError",
            code: "notDefinedAnywhere + 1",
            check: (e) => {
              expect(e.name).toBe("ReferenceError");
              expect(e.message).toContain("notDefinedAnywhere");
            },
          },
          {
            title: "TypeError",
            code: "const nothing: any = null; nothing.field",
            check: (e) => expect(e.name).toBe("TypeError"),
          },
          {
            title: "a custom error class keeps its name (class field)",
            code: "class QuotaError extends Error { name = 'QuotaError'; } throw new QuotaError('over quota')",
            check: (e) => expect(e).toMatchObject({ name: "QuotaError", message: "over quota" }),
          },
          {
            title: "a custom error class keeps its name (set in the constructor)",
            code: "class LimitError extends Error { constructor(m: string) { super(m); this.name = 'LimitError'; } } throw new LimitError('limit')",
            check: (e) => expect(e).toMatchObject({ name: "LimitError", message: "limit" }),
          },
          {
            title: "an awaited rejected promise",
            code: "await Promise.reject(new RangeError('out of range'))",
            check: (e) => expect(e).toMatchObject({ name: "RangeError", message: "out of range" }),
          },
          {
            title: "a rejected promise left as the last value",
            code: "Promise.reject(new TypeError('late rejection'))",
            check: (e) => expect(e).toMatchObject({ name: "TypeError", message: "late rejection" }),
          },
          {
            title: "a rejection after an await inside an async function",
            code: "async function failLater() { await null; throw new EvalError('deep'); } await failLater()",
            check: (e) => expect(e).toMatchObject({ name: "EvalError", message: "deep" }),
          },
          {
            title: 'throw "string"',
            code: 'throw "plain string thrown"',
            check: (e) => {
              expect(e.name.length).toBeGreaterThan(0);
              expect(e.message).toContain("plain string thrown");
            },
          },
          {
            title: "throw of a plain object",
            code: "throw { reason: 'object thrown' }",
            check: (e) => {
              expect(e.name.length).toBeGreaterThan(0);
              expect(e.message).toContain("object thrown");
            },
          },
          {
            title: "TimeoutError for a synchronous endless loop",
            code: "while (true) {}",
            options: { timeoutMs: SHORT_TIMEOUT_MS },
            check: (e) => {
              expect(e.name).toBe("TimeoutError");
              expect(e.message).toContain(String(SHORT_TIMEOUT_MS));
            },
          },
        ];

        it.each(cases)("$title", async ({ code, check, options: runOptions }) => {
          check(await failure(s, code, runOptions));
          expect(await value(s, "1 + 1")).toBe(2);
        });

        it("an error's stack points at the snippet, not at executor internals", async () => {
          const e = await failure(s, "const a = 1;\nundefinedThing()");
          if (e.stack !== undefined) {
            expect(e.stack).toContain("undefinedThing");
            expect(e.stack).not.toMatch(/node:internal|repl\/engine|in-process\/executor|subprocess\/child/);
          }
        });
      });

      it("after a timeout, variables are kept or the error says they were lost", async () => {
        await value(s, "var survivesTimeout = 'yes';");
        const e = await failure(s, "let spins = 0; for (;;) { spins++; }", { timeoutMs: SHORT_TIMEOUT_MS });
        expect(e.name).toBe("TimeoutError");
        const kept = await value(s, "typeof survivesTimeout === 'undefined' ? 'lost' : survivesTimeout");
        if (kept === "lost") expect(e.message).toMatch(/lost/i);
        else expect(kept).toBe("yes");
        expect(await value(s, "[1, 2, 3].map((x) => x * 2)")).toEqual([2, 4, 6]);
      });

      it("a per-run timeoutMs does not stick: the next run gets the default", async () => {
        await failure(s, "while (true) {}", { timeoutMs: SHORT_TIMEOUT_MS });
        // Longer than SHORT_TIMEOUT_MS: it would fail if the short timeout had become the default.
        expect(await value(s, `await new Promise((r) => setTimeout(r, ${SHORT_TIMEOUT_MS * 2})); "slept"`)).toBe("slept");
      });

      it("two concurrent run() calls do not interleave: the second sees the first's variables", async () => {
        const [a, b] = await Promise.all([
          s.run("var seq: string[] = []; seq.push('a-start'); await new Promise((r) => setTimeout(r, 20)); seq.push('a-end'); seq.length"),
          s.run("seq.push('b'); seq"),
        ]);
        expect(a.error).toBeNull();
        expect(b.error).toBeNull();
        expect(a.value).toBe(2);
        expect(b.value).toEqual(["a-start", "a-end", "b"]);
      });

      it("many concurrent runs resolve in order, each with its own output", async () => {
        await value(s, "var counter = 0;");
        const results = await Promise.all(
          Array.from({ length: 5 }, (_, i) => s.run(`await null; counter += 1; console.log("run ${i}"); counter`)),
        );
        expect(results.map((r) => r.value)).toEqual([1, 2, 3, 4, 5]);
        expect(results.map((r) => r.stdout)).toEqual([0, 1, 2, 3, 4].map((i) => `run ${i}\n`));
      });

      it("a non-string code is an error result, not a throw", async () => {
        const r = await s.run(42 as unknown as string);
        expect(r.ok).toBe(false);
        expect(r.error?.name).toBe("TypeError");
      });

      it("the namespaces are in scope", async () => {
        expect(await value(s, "[typeof tools, typeof workflows, typeof artifacts, typeof deps, typeof skills].map((t) => t !== 'undefined')")).toEqual([
          true,
          true,
          true,
          true,
          true,
        ]);
      });
    });

    // ---------------------------------------------------------------------------------------------
    describe("cancellation (RunOptions.signal) and streamed output (RunOptions.onOutput)", () => {
      let s: Session;
      beforeAll(async () => {
        s = await sharedSession();
      });

      /** Runs `code` (which prints before it loops) and aborts as soon as its first output arrives. */
      async function cancelOnFirstOutput(code: string): Promise<ExecutionResult> {
        const controller = new AbortController();
        // Far longer than the suite: only the cancel can end this run.
        return s.run(code, { timeoutMs: 600_000, signal: controller.signal, onOutput: () => controller.abort() });
      }

      const loops = [
        { title: "a loop awaiting timers", code: "for (;;) await new Promise((r) => setTimeout(r, 5));", can: true },
        { title: "a microtask loop (for (;;) await null)", code: "for (;;) await null;", can: cancels.microtaskLoop },
        { title: "a synchronous loop (for (;;) {})", code: "for (;;) {}", can: cancels.syncLoop },
      ];
      for (const loop of loops) {
        (loop.can ? it : it.skip)(`a cancel stops ${loop.title}: CancelledError, and the next run works`, async () => {
          const r = await cancelOnFirstOutput(`console.log("started"); ${loop.code}`);
          expect(r.ok).toBe(false);
          expect(r.error?.name).toBe("CancelledError");
          expect(r.stdout).toContain("started");
          expect(await value(s, "[1, 2, 3].map((x) => x * 2)")).toEqual([2, 4, 6]);
        });
      }

      it("a signal aborted before the run starts cancels it without running the code", async () => {
        const r = await s.run("var ranAfterAbort = true; 1", { signal: AbortSignal.abort() });
        expect(r.error?.name).toBe("CancelledError");
        expect(await value(s, "typeof ranAfterAbort")).toBe("undefined");
      });

      it("a signal that is never aborted changes nothing", async () => {
        const controller = new AbortController();
        expect(await value(s, "await new Promise((r) => setTimeout(r, 20)); 'done'", { signal: controller.signal })).toBe("done");
      });

      it("output is streamed while the run runs; the result still carries all of it", async () => {
        const chunks: Array<{ stream: string; text: string; settled: boolean }> = [];
        let settled = false;
        const run = s.run('console.log("first"); await new Promise((r) => setTimeout(r, 300)); console.log("second"); console.error("oops")', {
          onOutput: (c) => chunks.push({ ...c, settled }),
        });
        void run.then(() => (settled = true));
        const r = await run;
        expect(r.error).toBeNull();
        // The first line came on its own, before the second was printed (so before the run ended).
        expect(chunks[0]).toEqual({ stream: "stdout", text: "first\n", settled: false });
        expect(chunks.every((c) => !c.settled)).toBe(true);
        const joined = (stream: string) => chunks.filter((c) => c.stream === stream).map((c) => c.text).join("");
        expect(joined("stdout")).toBe(r.stdout);
        expect(joined("stderr")).toBe("oops\n");
        expect(r.stdout).toBe("first\nsecond\n");
      });

      it("streamed output is capped like the result's output", async () => {
        let streamed = 0;
        const r = await s.run('const line = "x".repeat(999); for (let i = 0; i < 3000; i++) console.log(line);', {
          onOutput: (c) => void (streamed += c.text.length),
        });
        expect(r.error).toBeNull();
        expect(streamed).toBeGreaterThan(900_000);
        expect(streamed).toBeLessThanOrEqual(1_000_100);
      });

      it("a listener that throws does not disturb the run", async () => {
        const r = await s.run('console.log("a"); await null; console.log("b"); 7', {
          onOutput: () => {
            throw new Error("listener broke");
          },
        });
        expect(r.error).toBeNull();
        expect(r.value).toBe(7);
        expect(r.stdout).toBe("a\nb\n");
      });
    });

    // ---------------------------------------------------------------------------------------------
    describe("reset()", () => {
      it("forgets variables; tools, workflows and artifacts remain", async () => {
        const s = await openSession();
        await value(s, "var resetMe = 1; function resetFn() { return 2; }");
        await value(s, `await workflows.create({ name: "triple", source: ${JSON.stringify(TRIPLE_SOURCE)} })`);
        await value(s, `await artifacts.save("kept.txt", "still here")`);
        await s.reset();
        expect(await value(s, "[typeof resetMe, typeof resetFn]")).toEqual(["undefined", "undefined"]);
        expect(await value(s, "(await tools.echo.say({ text: ['alive'] }))")).toBe("alive\n");
        expect(await value(s, "await workflows.triple({ n: 7 })")).toBe(21);
        expect(await value(s, "await artifacts.load('kept.txt')")).toBe("still here");
        // After a reset the same names can be declared again and persist again.
        await value(s, "const resetMe = 'again';");
        expect(await value(s, "resetMe")).toBe("again");
      });
    });

    // ---------------------------------------------------------------------------------------------
    describe("tools namespace", () => {
      let s: Session;
      beforeAll(async () => {
        s = await sharedSession();
      });

      it("list() gives every example tool with its callables and their signatures", async () => {
        const list = (await value(s, "await tools.list()")) as Array<{
          name: string;
          description: string;
          tags: string[];
          callables: Array<{ name: string; description: string; signature: string }>;
        }>;
        expect(list.map((t) => t.name).sort()).toEqual([...EXAMPLE_TOOL_NAMES]);
        const echo = list.find((t) => t.name === "echo");
        expect(echo?.description).toBe("Print text to standard output");
        expect(echo?.tags).toContain("print");
        expect(echo?.callables.map((c) => c.name)).toEqual(["say", "raw"]);
        const say = echo?.callables.find((c) => c.name === "say");
        expect(say?.signature).toMatch(/^say\(/);
        expect(say?.signature).toContain("text");
        expect(say?.description.length).toBeGreaterThan(0);
        for (const tool of list) {
          expect(tool.callables.length, tool.name).toBeGreaterThan(0);
          for (const c of tool.callables) expect(c.signature, `${tool.name}.${c.name}`).toContain(`${c.name}(`);
        }
      });

      it('search("count lines") ranks wc first, with scores, and honours limit', async () => {
        const hits = (await value(s, "await tools.search('count lines')")) as Array<{ name: string; score: number }>;
        expect(hits[0]?.name).toBe("wc");
        for (const h of hits) expect(typeof h.score).toBe("number");
        const scores = hits.map((h) => h.score);
        expect(scores).toEqual([...scores].sort((a, b) => b - a));
        expect(await value(s, "(await tools.search('count lines', { limit: 1 })).map((t) => t.name)")).toEqual(["wc"]);
      });

      it("describe() returns a TypeScript declaration that names the tool and its recipes", async () => {
        const text = (await value(s, "await tools.describe('wc')")) as string;
        expect(typeof text).toBe("string");
        expect(text).toContain("wc");
        expect(text).toContain("lines(");
        expect(text).toContain("words(");
        expect(text).toContain("/**");
        const e = await guestError(s, "tools.describe('wcc')");
        expect(e.message.startsWith("tools.describe:")).toBe(true);
        expect(e.message).toContain("wc");
      });

      it("a recipe call runs the real command", async () => {
        expect(await value(s, 'await tools.echo.say({ text: ["a", "b"] })')).toBe("a b\n");
        expect(await value(s, 'await tools.echo.raw({ text: ["tab\\\\there"] })')).toBe("tab\there");
      });

      it("the escape hatch tools.<name>(args) accepts any option of the schema", async () => {
        expect(await value(s, 'await tools.echo({ text: ["x"] })')).toBe("x\n");
        expect(await value(s, 'await tools.echo({ text: ["y"], no_newline: true })')).toBe("y");
      });

      it("tools.call(tool, callable, args) reaches the same tool", async () => {
        expect(await value(s, 'await tools.call("echo", "say", { text: ["via", "call"] })')).toBe("via call\n");
      });

      it("Promise.all of several tool calls returns every result in order", async () => {
        const results = await value(
          s,
          "await Promise.all([1, 2, 3, 4].map((i) => tools.echo.say({ text: [`n${i}`] })))",
        );
        expect(results).toEqual(["n1\n", "n2\n", "n3\n", "n4\n"]);
      });

      it("an unknown tool fails with tools.call: and a suggestion", async () => {
        const e = await guestError(s, 'tools.ecko.say({ text: ["a"] })');
        // Labelled with the call as the agent wrote it, not the internal tools.call operation.
        expect(e.message.startsWith("tools.ecko.say: Unknown tool: ecko.")).toBe(true);
        expect(e.message).toContain("Did you mean");
        expect(e.message).toContain("echo");
        expect(e.name).toBe("NotFoundError");
        expect(e.isError).toBe(true);
        const uncaught = await failure(s, 'await tools.ecko.say({ text: ["a"] })');
        expect(uncaught.name).toBe("NotFoundError");
        expect(uncaught.message).toContain("Did you mean: echo");
      });

      it("an unknown recipe fails with a suggestion", async () => {
        const e = await guestError(s, 'tools.echo.sya({ text: ["a"] })');
        expect(e.message.startsWith("tools.echo.sya: ")).toBe(true);
        expect(e.message).toContain("say");
      });

      it("an unknown argument is a recoverable ToolError naming the accepted params", async () => {
        const e = await guestError(s, 'tools.echo.say({ txt: ["a"] })');
        expect(e.name).toBe("ToolError");
        expect(e.isError).toBe(true);
        expect(e.message.startsWith("tools.echo.say: Unknown argument 'txt'")).toBe(true);
        expect(e.message).toContain("txt");
        expect(e.message).toMatch(/Accepted: text/);
        expect(e.code).toBe("INVALID_INPUT");
        expect(e.recoverable).toBe(true);
      });

      it("a wrong argument type and a missing required argument are ToolErrors", async () => {
        const wrongType = await guestError(s, "tools.echo.say({ text: 5 })");
        expect(wrongType.name).toBe("ToolError");
        expect(wrongType.message).toContain("text");
        const missing = await guestError(s, "tools.echo.say({})");
        expect(missing.name).toBe("ToolError");
        expect(missing.message).toContain("text");
        expect(missing.recoverable).toBe(true);
      });

      it("a non-zero exit is a ToolError with exitCode, code and recoverable readable in the guest", async () => {
        const e = await guestError(s, 'tools.ls({ paths: ["/nonexistent-tcm-path"] })');
        expect(e.name).toBe("ToolError");
        expect(e.isError).toBe(true);
        expect(e.exitCode).toBe(2);
        expect(e.message).toContain("nonexistent-tcm-path");
        expect(typeof e.code).toBe("string");
        expect(typeof e.recoverable).toBe("boolean");
        const uncaught = await failure(s, 'await tools.ls({ paths: ["/nonexistent-tcm-path"] })');
        expect(uncaught.name).toBe("ToolError");
        expect(uncaught.message.startsWith("tools.ls: ")).toBe(true);
        expect(uncaught.message).not.toContain("tools.call");
      });

      it("a tool error does not break later calls", async () => {
        await failure(s, 'await tools.ls({ paths: ["/nonexistent-tcm-path"] })');
        expect(await value(s, 'await tools.echo.say({ text: ["fine"] })')).toBe("fine\n");
      });
    });

    // ---------------------------------------------------------------------------------------------
    describe("workflows namespace", () => {
      let s: Session;
      beforeAll(async () => {
        s = await openSession();
        await value(s, `await workflows.create({ name: "triple", source: ${JSON.stringify(TRIPLE_SOURCE)} })`);
      });

      const create = (input: Record<string, unknown>) => value(s, `await workflows.create(${JSON.stringify(input)})`);

      it("create returns the details; get, list and search see the workflow; delete removes it", async () => {
        const source = "/** Greet someone by name. */\nexport async function run({ who }: { who: string }) { return `hello ${who}`; }";
        const created = (await create({ name: "greet", source })) as Record<string, unknown>;
        expect(created).toMatchObject({ name: "greet", description: "Greet someone by name.", source });
        const got = (await value(s, "await workflows.get('greet')")) as Record<string, unknown>;
        expect(got).toMatchObject({ name: "greet", description: "Greet someone by name.", source });
        expect(typeof got["createdAt"]).toBe("string");
        expect(Number.isNaN(Date.parse(String(got["createdAt"])))).toBe(false);
        expect(((await value(s, "await workflows.list()")) as Array<{ name: string }>).map((w) => w.name)).toEqual(
          expect.arrayContaining(["greet", "triple"]),
        );
        const hits = (await value(s, "await workflows.search('greet someone')")) as Array<{ name: string; score: number }>;
        expect(hits[0]?.name).toBe("greet");
        expect(typeof hits[0]?.score).toBe("number");
        const tripleHits = (await value(s, "await workflows.search('triple a number', { limit: 1 })")) as Array<{ name: string }>;
        expect(tripleHits.map((h) => h.name)).toEqual(["triple"]);

        expect(await value(s, "await workflows.delete('greet')")).toBe(true);
        expect(await value(s, "await workflows.get('greet')")).toBeNull();
        expect(await value(s, "await workflows.delete('greet')")).toBe(false);
        expect(((await value(s, "await workflows.list()")) as Array<{ name: string }>).map((w) => w.name)).not.toContain("greet");
      });

      it("invokes by workflows.invoke(name, args) and by workflows.<name>(args)", async () => {
        expect(await value(s, "await workflows.invoke('triple', { n: 2 })")).toBe(6);
        expect(await value(s, "await workflows.triple({ n: 5 })")).toBe(15);
        expect(await value(s, "await Promise.all([1, 2, 3].map((n) => workflows.triple({ n })))")).toEqual([3, 6, 9]);
      });

      it("re-creating a workflow replaces its code and keeps its createdAt", async () => {
        const v1 = (await create({ name: "scale", source: "export async function run({ n }: { n: number }) { return n * 2; }" })) as Record<string, string>;
        expect(await value(s, "await workflows.scale({ n: 10 })")).toBe(20);
        const v2 = (await create({ name: "scale", source: "export async function run({ n }: { n: number }) { return n * 4; }" })) as Record<string, string>;
        expect(await value(s, "await workflows.scale({ n: 10 })")).toBe(40);
        expect(v2["createdAt"]).toBe(v1["createdAt"]);
        expect(Date.parse(String(v2["updatedAt"]))).toBeGreaterThanOrEqual(Date.parse(String(v1["updatedAt"])));
      });

      it("description comes from the JSDoc, or from create({ description }) which wins", async () => {
        const source = "/** Doubles n. */\nexport async function run({ n }: { n: number }) { return n * 2; }";
        await create({ name: "doubler", source });
        expect(await value(s, "(await workflows.get('doubler')).description")).toBe("Doubles n.");
        await create({ name: "doubler_explicit", source, description: "Multiply by two" });
        expect(await value(s, "(await workflows.get('doubler_explicit')).description")).toBe("Multiply by two");
        const listed = (await value(s, "await workflows.list()")) as Array<{ name: string; description: string }>;
        expect(listed.find((w) => w.name === "doubler_explicit")?.description).toBe("Multiply by two");
        expect(listed.find((w) => w.name === "doubler")?.description).toBe("Doubles n.");
      });

      it("list shows the parameters read from run's typed, destructured argument", async () => {
        const source = [
          "/** Scan a host. */",
          "export async function run({ host, ports = \"1-1024\", retries }: {",
          "  /** Host name or address. */",
          "  host: string;",
          "  ports?: string;",
          "  retries?: number;",
          "}) { return { host, ports, retries }; }",
        ].join("\n");
        await create({ name: "scan_host", source });
        const listed = (await value(s, "await workflows.list()")) as Array<{ name: string; params: unknown[] }>;
        const params = listed.find((w) => w.name === "scan_host")?.params;
        expect(params).toEqual([
          { name: "host", type: "string", required: true, description: "Host name or address." },
          { name: "ports", type: "string", required: false, default: "1-1024" },
          { name: "retries", type: "number", required: false },
        ]);
        expect(await value(s, "await workflows.scan_host({ host: 'h1' })")).toEqual({ host: "h1", ports: "1-1024" });
        expect(((await value(s, "await workflows.list()")) as Array<{ name: string; params: unknown[] }>).find((w) => w.name === "triple")?.params).toEqual([
          { name: "n", type: "number", required: true },
        ]);
      });

      it("a workflow can call a tool, another workflow and artifacts", async () => {
        const source = [
          "/** Echo a word, triple its length and save both. */",
          "export async function run({ word }: { word: string }) {",
          "  const echoed = (await tools.echo.say({ text: [word] })).trim();",
          "  const tripled = await workflows.triple({ n: echoed.length });",
          "  await artifacts.save(`composed/${word}.json`, { echoed, tripled }, { description: 'composed' });",
          "  return { echoed, tripled, saved: await artifacts.exists(`composed/${word}.json`) };",
          "}",
        ].join("\n");
        await create({ name: "compose", source });
        expect(await value(s, "await workflows.compose({ word: 'abcd' })")).toEqual({ echoed: "abcd", tripled: 12, saved: true });
        expect(await s.loadArtifact("composed/abcd.json")).toEqual({ echoed: "abcd", tripled: 12 });
      });

      it("a missing required parameter is a clear error naming it", async () => {
        const e = await failure(s, "await workflows.triple({})");
        expect(e.message).toContain("triple");
        expect(e.message).toMatch(/\bn\b/);
        expect(e.message).toMatch(/required|missing/i);
        const viaInvoke = await guestError(s, "workflows.invoke('triple')");
        expect(viaInvoke.isError).toBe(true);
        expect(viaInvoke.message).toMatch(/required|missing/i);
      });

      it.each([
        ["../x", "a path"],
        ["1abc", "a leading digit"],
        ["list", "a namespace method"],
        ["a-b", "a dash"],
      ])("the invalid name %s (%s) is rejected by create", async (bad) => {
        const e = await guestError(s, `workflows.create({ name: ${JSON.stringify(bad)}, source: ${JSON.stringify(TRIPLE_SOURCE)} })`);
        expect(e.name).toBe("InvalidNameError");
        expect(e.isError).toBe(true);
        expect(e.message.startsWith("workflows.create:")).toBe(true);
        expect(e.message).toContain(bad);
      });

      it("source without an exported run, or with a syntax error, is rejected", async () => {
        const noRun = await guestError(s, "workflows.create({ name: 'no_run', source: 'export const x = 1;' })");
        expect(noRun.message.startsWith("workflows.create:")).toBe(true);
        expect(noRun.message).toMatch(/run/);
        const broken = await guestError(s, "workflows.create({ name: 'broken', source: 'export async function run( {' })");
        expect(broken.message.startsWith("workflows.create:")).toBe(true);
        expect(broken.message).toMatch(/syntax/i);
        expect(await value(s, "await workflows.get('no_run')")).toBeNull();
      });

      it("an unknown workflow fails with a suggestion", async () => {
        const e = await guestError(s, "workflows.tripel({ n: 1 })");
        expect(e.name).toBe("NotFoundError");
        expect(e.message).toContain("tripel");
        expect(e.message).toContain("Did you mean: triple");
        const viaInvoke = await guestError(s, "workflows.invoke('tripel', { n: 1 })");
        expect(viaInvoke.message).toContain("Did you mean: triple");
        expect(await value(s, "await workflows.get('tripel')")).toBeNull();
      });

      it("a workflow that throws: its error name reaches the caller", async () => {
        const source = [
          "class BoomError extends Error { name = 'BoomError'; }",
          "export async function run({ why }: { why: string }) { throw new BoomError(`boom: ${why}`); }",
        ].join("\n");
        await create({ name: "explode", source });
        const uncaught = await failure(s, "await workflows.explode({ why: 'test' })");
        expect(uncaught).toMatchObject({ name: "BoomError", message: "boom: test" });
        const caught = await guestError(s, "workflows.explode({ why: 'caught' })");
        expect(caught).toMatchObject({ name: "BoomError", message: "boom: caught", isError: true });
        expect(await value(s, "1 + 1")).toBe(2);
      });

      it("a tool error inside a workflow reaches the caller as a ToolError", async () => {
        await create({ name: "list_missing", source: "export async function run() { return tools.ls({ paths: ['/nonexistent-tcm-path'] }); }" });
        const e = await guestError(s, "workflows.list_missing()");
        expect(e.name).toBe("ToolError");
        expect(e.exitCode).toBe(2);
      });

      it("a workflow created in one session is found, described and invoked from a second session on the same folder", async () => {
        const base = await tempDir();
        const first = await openSession(base);
        const source = "/** Add one. */\nexport async function run({ n }: { n: number }) { return n + 1; }";
        await value(first, `await workflows.create(${JSON.stringify({ name: "add_one", source, description: "Increment a number" })})`);
        await value(first, `await workflows.create(${JSON.stringify({ name: "add_two", source: source.replace("n + 1", "n + 2") })})`);
        await first.close();

        const second = await openSession(base);
        const listed = (await value(second, "await workflows.list()")) as Array<{ name: string; description: string; params: unknown[] }>;
        expect(listed.map((w) => w.name)).toEqual(["add_one", "add_two"]);
        expect(listed[0]).toMatchObject({ description: "Increment a number", params: [{ name: "n", type: "number", required: true }] });
        expect(listed[1]?.description).toBe("Add one.");
        expect(await value(second, "(await workflows.get('add_one')).description")).toBe("Increment a number");
        expect((await second.getWorkflow("add_one"))?.source).toBe(source);
        expect(await value(second, "await workflows.add_one({ n: 41 })")).toBe(42);
        expect(await value(second, "await workflows.invoke('add_two', { n: 40 })")).toBe(42);
        expect(((await value(second, "await workflows.search('increment')")) as Array<{ name: string }>)[0]?.name).toBe("add_one");
      });
    });

    // ---------------------------------------------------------------------------------------------
    describe("skills namespace", () => {
      let s: Session;
      let base: string;
      const skillsRun = options.skillsRun ?? true;
      beforeAll(async () => {
        base = await tempDir();
        await cp(EXAMPLE_SKILLS_PATH, path.join(base, "skills"), { recursive: true });
        await writeFile(path.join(base, "data.csv"), "city,temp,rain\nOslo,4,12.5\nRome,18,0\nLima,,3\n");
        s = await openSession(base);
      });

      it("list() shows each skill's name, description and SKILL.md location", async () => {
        const list = (await value(s, "await skills.list()")) as Array<{ name: string; description: string; location: string }>;
        expect(list.map((k) => k.name)).toEqual(["commit-message", "csv-summary"]);
        expect(list[1]?.description).toMatch(/^Summarise a CSV file/);
        const hostPath = path.join(base, "skills", "csv-summary", "SKILL.md");
        expect(list[1]?.location).toBe(options.skillLocation?.("csv-summary", hostPath) ?? hostPath);
        expect(await value(s, "await skills.list()")).toEqual(await s.listSkills());
      });

      it("search() ranks the matching skill first", async () => {
        const hits = (await value(s, "await skills.search('statistics of a csv table', { limit: 1 })")) as Array<{ name: string; score: number }>;
        expect(hits.map((h) => h.name)).toEqual(["csv-summary"]);
        expect(typeof hits[0]?.score).toBe("number");
      });

      it("load() returns the instructions and the resource paths", async () => {
        const skill = (await value(s, "await skills.load('csv-summary')")) as { name: string; body: string; resources: string[] };
        expect(skill.name).toBe("csv-summary");
        expect(skill.body).toMatch(/^# CSV summary/);
        expect(skill.resources).toEqual(["references/columns.md", "scripts/summary.py"]);
        const e = await guestError(s, "skills.load('csv-sumary')");
        expect(e).toMatchObject({ name: "NotFoundError", isError: true });
        expect(e.message).toMatch(/^skills\.load: No skill named "csv-sumary"\. Did you mean: csv-summary\?/);
      });

      it("read() returns text or bytes, confined to the skill folder", async () => {
        expect(await value(s, "await skills.read('csv-summary', 'references/columns.md')")).toMatch(/^# How columns are classified/);
        expect(await value(s, "const rb = await skills.read('csv-summary', 'references/columns.md', { as: 'bytes' }); [ArrayBuffer.isView(rb), rb.length > 10]")).toEqual([true, true]);
        for (const bad of ["../../data.csv", "/etc/passwd", "scripts/../../../data.csv"]) {
          expect(await guestError(s, `skills.read('csv-summary', ${JSON.stringify(bad)})`)).toMatchObject({ name: "InvalidNameError" });
        }
        expect((await guestError(s, "skills.read('csv-summary', 'scripts/nope.py')")).message).toMatch(/has no file "scripts\/nope\.py"/);
      });

      it("create() validates to the spec, saves, and delete() removes", async () => {
        expect((await guestError(s, "skills.create({ name: 'Bad_Name', description: 'x', body: 'y' })")).message).toMatch(/^skills\.create: invalid skill: Skill name 'Bad_Name' must be lowercase/);
        await value(s, "await skills.create({ name: 'made-here', description: 'Made by the agent. Use in tests.', body: '# Steps', files: { 'assets/x.bin': new Uint8Array([0, 255]) } })");
        expect(await value(s, "(await skills.load('made-here')).resources")).toEqual(["assets/x.bin"]);
        expect(await value(s, "Array.from(await skills.read('made-here', 'assets/x.bin'))")).toEqual([0, 255]);
        expect(await value(s, "await skills.delete('made-here')")).toBe(true);
        expect(await value(s, "await skills.delete('made-here')")).toBe(false);
      });

      if (skillsRun === "isolated") {
        it("run() passes arguments verbatim, never through a shell (inside the executor's isolation)", async () => {
          await value(s, "await skills.create({ name: 'argv-echo', description: 'Echo argv. Use in tests.', body: 'x', files: { 'scripts/echo.js': 'console.log(JSON.stringify(process.argv.slice(2)))' } })");
          const args = ["$(touch pwned)", "; touch pwned2", "--help", "-e", "a b", "`id`"];
          expect(JSON.parse((await value(s, `await skills.run('argv-echo', 'scripts/echo.js', ${JSON.stringify(args)})`)) as string)).toEqual(args);
          expect((await guestError(s, "skills.run('argv-echo', 'SKILL.md', [])")).message).toMatch(/only files under scripts\/ can be run/);
          expect((await guestError(s, "skills.run('argv-echo', 'scripts/echo.js', 'not an array')")).message).toMatch(/args must be an array of strings/);
        });
      } else if (skillsRun) {
        it("run() runs a script from scripts/ with an argv array and returns its stdout", async () => {
          const out = (await value(s, `await skills.run('csv-summary', 'scripts/summary.py', [${JSON.stringify(path.join(base, "data.csv"))}])`)) as string;
          expect(JSON.parse(out)).toMatchObject({ rows: 3, columns: ["city", "temp", "rain"], numeric: { temp: { min: 4, max: 18, mean: 11 }, rain: { min: 0, max: 12.5 } } });
        });

        it("run() passes arguments verbatim, never through a shell", async () => {
          await value(s, "await skills.create({ name: 'argv-echo', description: 'Echo argv. Use in tests.', body: 'x', files: { 'scripts/echo.js': 'console.log(JSON.stringify(process.argv.slice(2)))' } })");
          const args = ["$(touch pwned)", "; touch pwned2", "--help", "-e", "a b", "`id`"];
          const out = (await value(s, `await skills.run('argv-echo', 'scripts/echo.js', ${JSON.stringify(args)})`)) as string;
          expect(JSON.parse(out)).toEqual(args);
          expect((await guestError(s, "skills.run('argv-echo', 'SKILL.md', [])")).message).toMatch(/only files under scripts\/ can be run/);
          expect((await guestError(s, "skills.run('argv-echo', 'scripts/echo.js', 'not an array')")).message).toMatch(/args must be an array of strings/);
        });

        it("run() kills the script's whole process group when the run times out", async () => {
          const pids = path.join(base, "pids.json");
          const script = [
            "const { spawn } = require('node:child_process');",
            "const child = spawn('sleep', ['1000'], { stdio: 'ignore' });",
            `require('node:fs').writeFileSync(${JSON.stringify(pids)}, JSON.stringify([process.pid, child.pid]));`,
            "setInterval(() => {}, 1000);",
          ].join("\n");
          await value(s, `await skills.create({ name: 'hangs', description: 'Hangs. Use in tests.', body: 'x', files: { 'scripts/hang.cjs': ${JSON.stringify(script)} } })`);
          const r = await s.run("await skills.run('hangs', 'scripts/hang.cjs', [])", { timeoutMs: 1_500 });
          expect(r.ok).toBe(false);
          const { readFile } = await import("node:fs/promises");
          const [scriptPid, sleepPid] = JSON.parse(await readFile(pids, "utf8")) as [number, number];
          const alive = (pid: number) => {
            try {
              process.kill(pid, 0);
              return true;
            } catch {
              return false;
            }
          };
          await waitFor(() => !alive(scriptPid) && !alive(sleepPid), "the script and its child to be killed", 10_000);
        });
      } else {
        it("run() is refused clearly: this executor cannot run commands", async () => {
          const e = await guestError(s, `skills.run('csv-summary', 'scripts/summary.py', ['data.csv'])`);
          expect(e.name).toBe("ValidationError");
          expect(e.message).toMatch(/^skills\.run: this \S+ executor cannot run commands/);
          expect(e.message).toContain("skills.read(name, script)");
        });
      }
    });

    // ---------------------------------------------------------------------------------------------
    describe("artifacts namespace", () => {
      let s: Session;
      beforeAll(async () => {
        s = await sharedSession();
      });

      it("a string comes back as the same string", async () => {
        const text = 'héllo ✓\nsecond line {"looks": "like json"}';
        await value(s, `await artifacts.save("text/a.txt", ${JSON.stringify(text)})`);
        expect(await value(s, "await artifacts.load('text/a.txt')")).toBe(text);
        expect(await value(s, "typeof (await artifacts.load('text/a.txt'))")).toBe("string");
        await value(s, `await artifacts.save("text/json-like.txt", '{"a":1}')`);
        expect(await value(s, "await artifacts.load('text/json-like.txt')")).toBe('{"a":1}');
        await value(s, `await artifacts.save("text/empty.txt", "")`);
        expect(await value(s, "await artifacts.load('text/empty.txt')")).toBe("");
      });

      it("bytes come back as the same bytes", async () => {
        await value(s, "await artifacts.save('bin/a.bin', new Uint8Array([0, 1, 2, 127, 128, 255]))");
        const loaded = await value(s, "await artifacts.load('bin/a.bin')");
        expect(loaded).toBeInstanceOf(Uint8Array);
        expect([...(loaded as Uint8Array)]).toEqual([0, 1, 2, 127, 128, 255]);
        expect(await value(s, "const bytesBack = await artifacts.load('bin/a.bin'); [ArrayBuffer.isView(bytesBack), Array.from(bytesBack as Uint8Array)]")).toEqual([
          true,
          [0, 1, 2, 127, 128, 255],
        ]);
        expect(await value(s, "(await artifacts.get('bin/a.bin')).kind")).toBe("bytes");
      });

      it("a JSON value comes back as the same value", async () => {
        const data = { hosts: 3, list: [1, "two", null, { deep: true }], nested: { empty: {} } };
        await value(s, `await artifacts.save("scans/a.json", ${JSON.stringify(data)})`);
        expect(await value(s, "await artifacts.load('scans/a.json')")).toEqual(data);
        expect(await value(s, "(await artifacts.load('scans/a.json')).list[3].deep")).toBe(true);
        expect(await value(s, "(await artifacts.get('scans/a.json')).kind")).toBe("json");
        await value(s, "await artifacts.save('json/array', [1, 2, 3])");
        expect(await value(s, "await artifacts.load('json/array')")).toEqual([1, 2, 3]);
      });

      it("get returns description, metadata, kind and size", async () => {
        await value(s, `await artifacts.save("meta/x.txt", "abc", { description: "three letters", metadata: { source: "test", n: 1 } })`);
        const info = (await value(s, "await artifacts.get('meta/x.txt')")) as Record<string, unknown>;
        expect(info).toMatchObject({ name: "meta/x.txt", kind: "text", size: 3, description: "three letters", metadata: { source: "test", n: 1 } });
        expect(typeof info["createdAt"]).toBe("string");
        expect(typeof info["updatedAt"]).toBe("string");
        expect(await value(s, "await artifacts.get('meta/missing')")).toBeNull();
      });

      it("list, exists and delete", async () => {
        await value(s, "await artifacts.save('lifecycle/one.txt', '1'); await artifacts.save('lifecycle/two.txt', '2');");
        const names = ((await value(s, "await artifacts.list()")) as Array<{ name: string }>).map((a) => a.name);
        expect(names).toEqual(expect.arrayContaining(["lifecycle/one.txt", "lifecycle/two.txt"]));
        expect(await value(s, "await artifacts.exists('lifecycle/one.txt')")).toBe(true);
        expect(await value(s, "await artifacts.delete('lifecycle/one.txt')")).toBe(true);
        expect(await value(s, "await artifacts.exists('lifecycle/one.txt')")).toBe(false);
        expect(await value(s, "await artifacts.delete('lifecycle/one.txt')")).toBe(false);
        const after = ((await value(s, "await artifacts.list()")) as Array<{ name: string }>).map((a) => a.name);
        expect(after).not.toContain("lifecycle/one.txt");
        expect(after).toContain("lifecycle/two.txt");
      });

      it("names with subfolders work and are listed with their full name", async () => {
        await value(s, "await artifacts.save('scans/host-1/ports.json', { open: [22, 80] })");
        const names = ((await value(s, "await artifacts.list()")) as Array<{ name: string }>).map((a) => a.name);
        expect(names).toContain("scans/host-1/ports.json");
        expect(await value(s, "await artifacts.load('scans/host-1/ports.json')")).toEqual({ open: [22, 80] });
      });

      it("saving again replaces the data", async () => {
        await value(s, "await artifacts.save('replace/me', 'old')");
        await value(s, "await artifacts.save('replace/me', { now: 'json' })");
        expect(await value(s, "await artifacts.load('replace/me')")).toEqual({ now: "json" });
        expect(await value(s, "(await artifacts.get('replace/me')).kind")).toBe("json");
      });

      it.each(["../x", "/etc/passwd", "a/../../x", ".hidden"])("the unsafe name %s is rejected with artifacts.save:", async (bad) => {
        const e = await guestError(s, `artifacts.save(${JSON.stringify(bad)}, "data")`);
        expect(e.message.startsWith("artifacts.save:")).toBe(true);
        expect(e.name).toBe("InvalidNameError");
        expect(e.isError).toBe(true);
      });

      it("data that is not JSON (a Date, a function) is rejected, not silently changed", async () => {
        const e = await guestError(s, "artifacts.save('bad/date.json', { when: new Date(0) })");
        expect(e.message.startsWith("artifacts.save:")).toBe(true);
        expect(await value(s, "await artifacts.exists('bad/date.json')")).toBe(false);
      });

      it("loading a missing artifact is a NotFoundError", async () => {
        const e = await guestError(s, "artifacts.load('does/not/exist.txt')");
        expect(e.name).toBe("NotFoundError");
        expect(e.isError).toBe(true);
        expect(e.message.startsWith("artifacts.load:")).toBe(true);
        expect(e.message).toContain("does/not/exist.txt");
        const uncaught = await failure(s, "await artifacts.load('does/not/exist.txt')");
        expect(uncaught.name).toBe("NotFoundError");
      });

      bugTest("guest-realm-values", "values returned by namespace calls are the guest's own Uint8Array, Array and Object", async () => {
        await value(s, "await artifacts.save('realm/b.bin', new Uint8Array([1, 2]))");
        await value(s, "await artifacts.save('realm/j.json', { a: [1] })");
        const checks = await value(
          s,
          `const realmBytes = await artifacts.load('realm/b.bin');
           const realmJson: any = await artifacts.load('realm/j.json');
           const realmTools = await tools.list();
           ({
             bytesIsUint8Array: realmBytes instanceof Uint8Array,
             jsonIsObject: realmJson instanceof Object && realmJson.constructor === Object,
             jsonArrayIsArray: realmJson.a instanceof Array,
             toolsIsArray: realmTools instanceof Array,
           })`,
        );
        expect(checks).toEqual({ bytesIsUint8Array: true, jsonIsObject: true, jsonArrayIsArray: true, toolsIsArray: true });
      });
    });

    // ---------------------------------------------------------------------------------------------
    describe("Session", () => {
      // One executor start for both (seconds for a container): the lazily started session is then closed.
      it("run() starts the session when start() was not called; close() is idempotent and run() after close is ok:false with SessionClosedError", async () => {
        const dir = await tempDir();
        const s = new Session({ storage: new FileStorage({ basePath: dir }), executor: factory({ toolsPath: EXAMPLE_TOOLS_PATH, defaultTimeoutMs: DEFAULT_TIMEOUT_MS }) });
        opened.push(s);
        expect(await value(s, "(await tools.echo.say({ text: ['lazy'] }))")).toBe("lazy\n");
        await s.close();
        await s.close();
        expect(s.isClosed).toBe(true);
        const r: ExecutionResult = await s.run("1 + 1");
        expect(r.ok).toBe(false);
        expect(r.value).toBeUndefined();
        expect(r.error?.name).toBe("SessionClosedError");
        await s.reset();
      });

      it("closing an unstarted session is fine", async () => {
        const dir = await tempDir();
        const s = new Session({ storage: new FileStorage({ basePath: dir }), executor: factory({ toolsPath: EXAMPLE_TOOLS_PATH, defaultTimeoutMs: DEFAULT_TIMEOUT_MS }) });
        await s.close();
        await s.close();
        expect((await s.run("1")).error?.name).toBe("SessionClosedError");
      });

      describe("a started session: its capabilities, and the host facade sees the same data as the guest", () => {
        let s: Session;
        beforeAll(async () => {
          s = await sharedSession();
        });

        // No session of its own: an executor start is seconds for a container, and the report is the same.
        it("capabilities() lists known capabilities and supports() agrees with it", () => {
          const report = s.capabilities();
          const known = ["timeout", "processIsolation", "networkIsolation", "filesystemIsolation", "memoryLimit", "reset", "depsInstall"];
          for (const c of report.capabilities) expect(known).toContain(c);
          expect(report.capabilities).toContain("timeout");
          expect(report.capabilities).toContain("reset");
          for (const c of known) expect(s.supports(c as never)).toBe(report.capabilities.includes(c as never));
          expect(Array.isArray(report.notes)).toBe(true);
        });

        it("listTools / searchTools / describeTool match tools.list / search / describe", async () => {
          const hostList = await s.listTools();
          expect(hostList.map((t) => t.name).sort()).toEqual([...EXAMPLE_TOOL_NAMES]);
          expect(await value(s, "await tools.list()")).toEqual(hostList);
          expect((await s.searchTools("count lines"))[0]?.name).toBe("wc");
          expect(await value(s, "await tools.describe('echo')")).toBe(await s.describeTool("echo"));
          await expect(s.describeTool("ecko")).rejects.toThrow(/echo/);
          expect(await s.callTool("echo", "say", { text: ["host", "call"] })).toBe("host call\n");
        });

        it("addWorkflow → guest get/invoke; guest create → host getWorkflow/listWorkflows/searchWorkflows; removeWorkflow → gone for the guest", async () => {
          const added = await s.addWorkflow({ name: "host_made", source: "/** Made on the host. */\nexport async function run({ x }: { x: number }) { return x - 1; }" });
          expect(added.description).toBe("Made on the host.");
          expect(await value(s, "(await workflows.get('host_made')).description")).toBe("Made on the host.");
          expect(await value(s, "await workflows.host_made({ x: 1 })")).toBe(0);

          await value(s, `await workflows.create({ name: "guest_made", source: ${JSON.stringify(TRIPLE_SOURCE)}, description: "Made in the guest" })`);
          expect((await s.getWorkflow("guest_made"))?.description).toBe("Made in the guest");
          expect((await s.listWorkflows()).map((w) => w.name)).toEqual(["guest_made", "host_made"]);
          expect((await s.searchWorkflows("made in the guest"))[0]?.name).toBe("guest_made");
          expect(await value(s, "await workflows.list()")).toEqual(await s.listWorkflows());

          expect(await s.removeWorkflow("host_made")).toBe(true);
          expect(await value(s, "await workflows.get('host_made')")).toBeNull();
          expect(await s.removeWorkflow("host_made")).toBe(false);
          await expect(s.addWorkflow({ name: "../x", source: TRIPLE_SOURCE })).rejects.toThrow(/workflow name/i);
          expect(await s.getWorkflow("nope")).toBeNull();
        });

        it("saveArtifact/loadArtifact/listArtifacts/deleteArtifact match the guest's artifacts", async () => {
          await s.saveArtifact("facade/host.bin", new Uint8Array([9, 8, 7]), { description: "from host", metadata: { by: "host" } });
          expect(await value(s, "Array.from(await artifacts.load('facade/host.bin') as Uint8Array)")).toEqual([9, 8, 7]);
          expect(await value(s, "(await artifacts.get('facade/host.bin')).metadata")).toEqual({ by: "host" });

          await value(s, "await artifacts.save('facade/guest.json', { by: 'guest' }, { description: 'from guest' })");
          expect(await s.loadArtifact("facade/guest.json")).toEqual({ by: "guest" });
          await value(s, "await artifacts.save('facade/guest.txt', 'text from guest')");
          expect(await s.loadArtifact("facade/guest.txt")).toBe("text from guest");

          const hostNames = (await s.listArtifacts()).map((a) => a.name);
          expect(hostNames).toEqual(expect.arrayContaining(["facade/guest.json", "facade/guest.txt", "facade/host.bin"]));
          const guestNames = ((await value(s, "await artifacts.list()")) as Array<{ name: string }>).map((a) => a.name);
          expect(guestNames.sort()).toEqual([...hostNames].sort());

          expect(await s.deleteArtifact("facade/guest.json")).toBe(true);
          expect(await value(s, "await artifacts.exists('facade/guest.json')")).toBe(false);
          await expect(s.loadArtifact("facade/guest.json")).rejects.toBeInstanceOf(NotFoundError);
          await expect(s.saveArtifact("../escape", "x")).rejects.toThrow(/artifact name/i);
        });
      });
    });
  });
}
