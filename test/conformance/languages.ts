/**
 * The part of the executor conformance suite (./executor.ts) that is written once per guest
 * language: each behaviour is a snippet in TypeScript and in Python, and the expectations are the
 * same for both. Every executor runs these with its language's snippets; the TypeScript-only part
 * of the suite (TypeScript stripping, console formatting, structured clones, ...) runs for
 * TypeScript guests only.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { ExecutionError, RunOptions } from "../../src/execution/protocol.js";
import type { Session } from "../../src/session.js";

export type GuestLanguage = "typescript" | "python";

export interface Snippets {
  /** Binds `persisted` to 41; a later run reads it. */
  define: string;
  /** `persisted + 1` */
  readBack: string;
  /** A statement with no last expression. */
  statementOnly: string;
  /** The string "two\nlines" as the last value. */
  stringValue: string;
  /** Raises an error of a class named BoomError, message "boom". */
  raiseBoom: string;
  /** Not valid code in the language. */
  syntaxError: string;
  /** Writes "out" to stdout and "err" to stderr, then gives 1. */
  printBoth: string;
  /** Writes "before" to stdout, then raises. */
  printThenRaise: string;
  /** Binds `survives` to "yes". */
  defineSurvivor: string;
  /** `survives`, or "lost" when it is gone. */
  readSurvivor: string;
  /** Loops forever. */
  runaway: string;
  /** Awaits a timer of 10 ms at top level, then gives 5. */
  topLevelAwait: string;
  /** The names of tools.list(). */
  toolNames: string;
  /** tools.echo.say with text ["hi"]. */
  recipeCall: string;
  /** Two tools.echo.say calls ("a", "b") at once, results in order. */
  parallelCalls: string;
  /** Saves bytes 0, 255, 7 as "conf.bin" and loads them. */
  bytesRoundTrip: string;
  /** Saves { a: [1, { b: "x" }], n: null, t: true } as "conf.json" and loads it. */
  jsonRoundTrip: string;
  /** A nested structure as the last value: { a: [1, { b: "x" }], n: null, t: true, f: 1.5 }. */
  structured: string;
  /** Calls tools.nope.x (an unknown tool). */
  unknownTool: string;
  /** Whether workflows.list() gives a list. */
  workflowsListIsList: string;
  /** Writes "first", waits 300 ms, writes "second". */
  streamTwoLines: string;
  /** The code tools (test/fixtures/code-tools): weather "Oslo", add 2 + 3, github.createIssue "t", as a list. */
  codeToolCalls: string;
  /** tools.weather with a number as the city. */
  codeToolBadArgs: string;
  /** tools.describe("weather"). */
  codeToolDescribe: string;
  /** The name of the best tools.search("weather of a city") result. */
  codeToolSearch: string;
}

export const SNIPPETS: Record<GuestLanguage, Snippets> = {
  typescript: {
    define: "var persisted = 41;",
    readBack: "persisted + 1",
    statementOnly: "const statementOnly = 1;",
    stringValue: "'two\\nlines'",
    raiseBoom: "class BoomError extends Error { name = 'BoomError'; }\nthrow new BoomError('boom')",
    syntaxError: "let = = 1",
    printBoth: "console.log('out'); console.error('err'); 1",
    printThenRaise: "console.log('before'); throw new Error('after')",
    defineSurvivor: "var survives = 'yes';",
    readSurvivor: "typeof survives === 'undefined' ? 'lost' : survives",
    runaway: "for (;;) {}",
    topLevelAwait: "await new Promise((r) => setTimeout(r, 10)); 5",
    toolNames: "(await tools.list()).map((t) => t.name)",
    recipeCall: "await tools.echo.say({ text: ['hi'] })",
    parallelCalls: "await Promise.all([tools.echo.say({ text: ['a'] }), tools.echo.say({ text: ['b'] })])",
    bytesRoundTrip: "await artifacts.save('conf.bin', new Uint8Array([0, 255, 7])); await artifacts.load('conf.bin')",
    jsonRoundTrip: "await artifacts.save('conf.json', { a: [1, { b: 'x' }], n: null, t: true }); await artifacts.load('conf.json')",
    structured: "({ a: [1, { b: 'x' }], n: null, t: true, f: 1.5 })",
    unknownTool: "await tools.nope.x()",
    workflowsListIsList: "Array.isArray(await workflows.list())",
    streamTwoLines: "console.log('first'); await new Promise((r) => setTimeout(r, 300)); console.log('second'); 1",
    codeToolCalls: "[await tools.weather({ city: 'Oslo' }), await tools.add({ a: 2, b: 3 }), await tools.github.createIssue({ title: 't' })]",
    codeToolBadArgs: "await tools.weather({ city: 3 })",
    codeToolDescribe: "await tools.describe('weather')",
    codeToolSearch: "(await tools.search('weather of a city'))[0].name",
  },
  python: {
    define: "persisted = 41",
    readBack: "persisted + 1",
    statementOnly: "statement_only = 1",
    stringValue: "'two\\nlines'",
    raiseBoom: "class BoomError(Exception):\n    pass\nraise BoomError('boom')",
    syntaxError: "x = = 1",
    printBoth: "import sys\nprint('out')\nprint('err', file=sys.stderr)\n1",
    printThenRaise: "print('before')\nraise ValueError('after')",
    defineSurvivor: "survives = 'yes'",
    readSurvivor: "globals().get('survives', 'lost')",
    runaway: "while True:\n    pass",
    topLevelAwait: "import asyncio\nawait asyncio.sleep(0.01)\n5",
    toolNames: "[t['name'] for t in tools.list()]",
    recipeCall: "tools.echo.say(text=['hi'])",
    parallelCalls: "import asyncio\nawait asyncio.gather(tools.echo.say.call_async(text=['a']), tools.echo.say.call_async(text=['b']))",
    bytesRoundTrip: "artifacts.save('conf.bin', bytes([0, 255, 7]))\nartifacts.load('conf.bin')",
    jsonRoundTrip: "artifacts.save('conf.json', {'a': [1, {'b': 'x'}], 'n': None, 't': True})\nartifacts.load('conf.json')",
    structured: "{'a': [1, {'b': 'x'}], 'n': None, 't': True, 'f': 1.5}",
    unknownTool: "tools.nope.x()",
    workflowsListIsList: "isinstance(workflows.list(), list)",
    streamTwoLines: "import asyncio\nprint('first')\nawait asyncio.sleep(0.3)\nprint('second')\n1",
    codeToolCalls: "[tools.weather(city='Oslo'), tools.add(a=2, b=3), tools.github.createIssue(title='t')]",
    codeToolBadArgs: "tools.weather(city=3)",
    codeToolDescribe: "tools.describe('weather')",
    codeToolSearch: "tools.search('weather of a city')[0]['name']",
  },
};

export interface LanguageSuiteHelpers {
  openSession(): Promise<Session>;
  /** A session whose executor also has the code tools of test/fixtures/code-tools (the `tools` option). */
  openCodeToolsSession(): Promise<Session>;
  value(session: Session, code: string, runOptions?: RunOptions): Promise<unknown>;
  failure(session: Session, code: string, runOptions?: RunOptions): Promise<ExecutionError>;
  shortTimeoutMs: number;
}

export function languageConformance(language: GuestLanguage, h: LanguageSuiteHelpers): void {
  const c = SNIPPETS[language];
  describe(`behaviours in ${language} snippets`, () => {
    let s: Session;
    beforeAll(async () => {
      s = await h.openSession();
    });

    it("variables persist across runs and the last expression is the value", async () => {
      await h.value(s, c.define);
      expect(await h.value(s, c.readBack)).toBe(42);
    });

    it("no last expression: value undefined, display empty; a string is displayed as it is", async () => {
      const r = await s.run(c.statementOnly);
      expect(r.ok).toBe(true);
      expect(r.value).toBeUndefined();
      expect(r.display).toBe("");
      const str = await s.run(c.stringValue);
      expect(str.value).toBe("two\nlines");
      expect(str.display).toBe("two\nlines");
    });

    it("an error comes back with the language's exception name, and the session stays usable", async () => {
      const e = await h.failure(s, c.raiseBoom);
      expect(e.name).toBe("BoomError");
      expect(e.message).toContain("boom");
      expect((await h.failure(s, c.syntaxError)).name).toBe("SyntaxError");
      expect(await h.value(s, c.readBack)).toBe(42);
    });

    it("output goes to stdout and stderr; output before an error is kept", async () => {
      const r = await s.run(c.printBoth);
      expect(r.stdout).toBe("out\n");
      expect(r.stderr).toBe("err\n");
      const failed = await s.run(c.printThenRaise);
      expect(failed.ok).toBe(false);
      expect(failed.stdout).toBe("before\n");
    });

    it("a runaway loop times out; variables are kept or the error says they were lost", async () => {
      await h.value(s, c.defineSurvivor);
      const e = await h.failure(s, c.runaway, { timeoutMs: h.shortTimeoutMs });
      expect(e.name).toBe("TimeoutError");
      const kept = await h.value(s, c.readSurvivor);
      if (kept === "lost") expect(e.message).toMatch(/lost/i);
      else expect(kept).toBe("yes");
    });

    it("top-level await works", async () => {
      expect(await h.value(s, c.topLevelAwait)).toBe(5);
    });

    it("tools: list, a recipe call, and two calls at once in order", async () => {
      expect(await h.value(s, c.toolNames)).toContain("echo");
      expect(await h.value(s, c.recipeCall)).toBe("hi\n");
      expect(await h.value(s, c.parallelCalls)).toEqual(["a\n", "b\n"]);
    });

    it("an unknown tool is a NotFoundError", async () => {
      expect((await h.failure(s, c.unknownTool)).name).toBe("NotFoundError");
    });

    it("bytes and JSON artifacts come back as they were saved", async () => {
      expect(await h.value(s, c.bytesRoundTrip)).toEqual(new Uint8Array([0, 255, 7]));
      expect(await h.value(s, c.jsonRoundTrip)).toEqual({ a: [1, { b: "x" }], n: null, t: true });
    });

    it("a structured last value comes back as data", async () => {
      expect(await h.value(s, c.structured)).toEqual({ a: [1, { b: "x" }], n: null, t: true, f: 1.5 });
    });

    it("workflows.list() gives a list", async () => {
      expect(await h.value(s, c.workflowsListIsList)).toBe(true);
    });

    it("output is streamed while the run runs; the result still carries all of it", async () => {
      const chunks: string[] = [];
      let firstBeforeEnd = false;
      const r = await s.run(c.streamTwoLines, {
        onOutput: (chunk) => {
          chunks.push(chunk.text);
          if (chunk.text.includes("first") && !chunks.join("").includes("second")) firstBeforeEnd = true;
        },
      });
      expect(r.stdout).toBe("first\nsecond\n");
      expect(firstBeforeEnd).toBe(true);
      expect(chunks.join("")).toBe("first\nsecond\n");
    });
  });

  describe(`tools defined in code, in ${language} snippets`, () => {
    let s: Session;
    beforeAll(async () => {
      s = await h.openCodeToolsSession();
      // The first run starts the interpreter (Pyodide: seconds, a minute when it builds its snapshot first): not any one test's time.
      await h.value(s, c.statementOnly);
    }, 240_000);

    it("calls a defineTool, an AI SDK tool and a namespaced tool; the functions run on the host", async () => {
      expect(await h.value(s, c.codeToolCalls)).toEqual([{ city: "Oslo", tempC: 4 }, 5, { number: 7, title: "t" }]);
    });

    it("validates arguments against the schema before the function runs", async () => {
      const e = await h.failure(s, c.codeToolBadArgs);
      expect(e.name).toBe("ToolError");
      expect(e.message).toContain("tools.weather");
      expect(e.message).toMatch(/'city' expected string/);
    });

    it("describes a code tool from its schemas, in the guest's language, and finds it by search", async () => {
      const text = String(await h.value(s, c.codeToolDescribe));
      expect(text).toContain("City name");
      expect(text).toMatch(language === "python" ? /city: str\b/ : /city: string;/);
      if (language === "typescript") expect(text).toContain("Promise<{ city: string; tempC: number }>");
      expect(await h.value(s, c.codeToolSearch)).toBe("weather");
    });
  });
}
