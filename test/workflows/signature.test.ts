import { readFile } from "node:fs/promises";
import { describe, expect, test } from "vitest";
import type { WorkflowParam } from "../../src/storage/protocol.js";
import { extractSignature as extractWithTypeScript, type WorkflowSignature } from "../../src/workflows/signature.js";
import { extractSignatureLight } from "../../src/workflows/signature-light.js";

/**
 * Both readers answer the same cases: the TypeScript parser, and the light one (sucrase + acorn +
 * the source text) used when the optional typescript package is not installed. Syntax error
 * messages are each parser's own, so those cases are per reader.
 */
const READERS: Array<[string, (source: string, fileName?: string) => Promise<WorkflowSignature>]> = [
  ["typescript", extractWithTypeScript],
  ["light", async (source, fileName) => extractSignatureLight(source, fileName)],
];

interface ParamCase {
  title: string;
  source: string;
  fileName?: string;
  params: WorkflowParam[];
}

const paramCases: ParamCase[] = [
  {
    title: "destructured inline type with a string default (the ARCHITECTURE example)",
    source: `/** Scan a host and save the open ports as an artifact. */
export async function run({ host, ports = "1-1024" }: { host: string; ports?: string }) {
  return host + ports;
}`,
    params: [
      { name: "host", type: "string", required: true },
      { name: "ports", type: "string", required: false, default: "1-1024" },
    ],
  },
  {
    title: "export const run = async arrow",
    source: `export const run = async ({ n }: { n: number }) => n * 3;`,
    params: [{ name: "n", type: "number", required: true }],
  },
  {
    title: "export const run = async function expression",
    source: `export const run = async function ({ n }: { n: number }) { return n; };`,
    params: [{ name: "n", type: "number", required: true }],
  },
  {
    title: "no parameters",
    source: `export async function run() { return 1; }`,
    params: [],
  },
  {
    title: "named interface with property JSDoc",
    source: `interface Args {
  /** target host */
  host: string;
  /** how many tries */
  retries?: number;
}
export async function run({ host, retries = 3 }: Args) { return host; }`,
    params: [
      { name: "host", type: "string", required: true, description: "target host" },
      { name: "retries", type: "number", required: false, default: 3, description: "how many tries" },
    ],
  },
  {
    title: "exported type alias declared after run",
    source: `export async function run({ tags }: Args) { return tags; }
export type Args = { tags: string[] };`,
    params: [{ name: "tags", type: "string[]", required: true }],
  },
  {
    title: "interface extending another interface in the file",
    source: `interface Base { /** the host */ host: string }
interface Args extends Base { port: number }
export async function run({ host, port }: Args) {}`,
    params: [
      { name: "host", type: "string", required: true, description: "the host" },
      { name: "port", type: "number", required: true },
    ],
  },
  {
    title: "property JSDoc inside an inline type literal, on the same line as the brace",
    source: `export async function run({ host }: { /** target host */ host: string }) {}`,
    params: [{ name: "host", type: "string", required: true, description: "target host" }],
  },
  {
    title: "@param tags in run's JSDoc, plain and dotted",
    source: `/**
 * Ping.
 * @param host - the host
 * @param args.count number of pings
 */
export async function run({ host, count }: { host: string; count: number }) {}`,
    params: [
      { name: "host", type: "string", required: true, description: "the host" },
      { name: "count", type: "number", required: true, description: "number of pings" },
    ],
  },
  {
    title: "property JSDoc wins over @param",
    source: `/** @param host - from the tag */
export async function run({ host }: { /** from the property */ host: string }) {}`,
    params: [{ name: "host", type: "string", required: true, description: "from the property" }],
  },
  {
    title: "untyped destructuring in .js infers types from default literals",
    fileName: "w.js",
    source: `export async function run({ host, port = 80, name = 'x', verbose = false, offset = -1, label = \`l\` }) {}`,
    params: [
      { name: "host", type: "unknown", required: true },
      { name: "port", type: "number", required: false, default: 80 },
      { name: "name", type: "string", required: false, default: "x" },
      { name: "verbose", type: "boolean", required: false, default: false },
      { name: "offset", type: "number", required: false, default: -1 },
      { name: "label", type: "string", required: false, default: "l" },
    ],
  },
  {
    title: "untyped default that is not a literal stays unknown",
    fileName: "w.js",
    source: `export async function run({ at = Date.now() }) {}`,
    params: [{ name: "at", type: "unknown", required: false, defaultExpression: "Date.now()" }],
  },
  {
    title: "literal defaults are values: numbers, arrays and objects of literals, null",
    source: `export async function run({ retries = 3, tags = ["a", 1, true], opts = { depth: 2, mode: "fast" }, none = null, big = 1_000 }: { retries?: number; tags?: unknown[]; opts?: object; none?: null; big?: number }) {}`,
    params: [
      { name: "retries", type: "number", required: false, default: 3 },
      { name: "tags", type: "unknown[]", required: false, default: ["a", 1, true] },
      { name: "opts", type: "object", required: false, default: { depth: 2, mode: "fast" } },
      { name: "none", type: "null", required: false, default: null },
      { name: "big", type: "number", required: false, default: 1000 },
    ],
  },
  {
    title: "a default that is not a literal is reported as an expression, with no value",
    source: "const MAX = 5;\nexport async function run({ limit = MAX * 2, label = `n${MAX}`, list = [MAX] }: { limit?: number; label?: string; list?: number[] }) {}",
    params: [
      { name: "limit", type: "number", required: false, defaultExpression: "MAX * 2" },
      { name: "label", type: "string", required: false, defaultExpression: "`n${MAX}`" },
      { name: "list", type: "number[]", required: false, defaultExpression: "[MAX]" },
    ],
  },
  {
    title: "JSDoc defaults: JSON literals and 'quoted' strings are values, anything else an expression",
    fileName: "w.js",
    source: `/**
 * @param {object} args
 * @param {string} [args.mode='fast']
 * @param {number} [args.when=Date.now()]
 */
export async function run(args) {}`,
    params: [
      { name: "mode", type: "string", required: false, default: "fast" },
      { name: "when", type: "number", required: false, defaultExpression: "Date.now()" },
    ],
  },
  {
    title: "non-destructured typed parameter",
    source: `export async function run(args: { n: number; label?: string }) { return args.n; }`,
    params: [
      { name: "n", type: "number", required: true },
      { name: "label", type: "string", required: false },
    ],
  },
  {
    title: "non-destructured parameter typed by an interface",
    source: `interface In { /** a number */ n: number }
export async function run(input: In) { return input.n; }`,
    params: [{ name: "n", type: "number", required: true, description: "a number" }],
  },
  {
    title: "untyped .js parameter described by JSDoc @param {type} args.x tags",
    fileName: "w.js",
    source: `/**
 * @param {object} args
 * @param {string} args.host - the host
 * @param {number} [args.count=3] how many
 */
export async function run(args) {}`,
    params: [
      { name: "host", type: "string", required: true, description: "the host" },
      { name: "count", type: "number", required: false, default: 3, description: "how many" },
    ],
  },
  {
    title: "| undefined makes a property optional",
    source: `export async function run({ a, b }: { a: string | undefined; b: (number | undefined) }) {}`,
    params: [
      { name: "a", type: "string | undefined", required: false },
      { name: "b", type: "(number | undefined)", required: false },
    ],
  },
  {
    title: "multi-line type text is whitespace-normalised and loses comments",
    source: `export async function run({ opts }: {
  opts: {
    depth: number; // how deep
    /** follow links */
    follow:   boolean;
  };
}) {}`,
    params: [{ name: "opts", type: "{ depth: number; follow: boolean; }", required: true }],
  },
  {
    title: "renamed binding uses the property name",
    source: `export async function run({ host: h }: { host: string }) { return h; }`,
    params: [{ name: "host", type: "string", required: true }],
  },
  {
    title: "rest element lists the type's remaining members",
    source: `export async function run({ a, ...rest }: { a: string; b?: number; c: boolean }) {}`,
    params: [
      { name: "a", type: "string", required: true },
      { name: "b", type: "number", required: false },
      { name: "c", type: "boolean", required: true },
    ],
  },
  {
    title: "Partial<Args> makes every member optional",
    source: `interface Args { a: string; b: number }
export async function run({ a, b }: Partial<Args>) {}`,
    params: [
      { name: "a", type: "string", required: false },
      { name: "b", type: "number", required: false },
    ],
  },
  {
    title: "intersection of a named and an inline type",
    source: `type Base = { a: string };
export async function run({ a, b }: Base & { b?: number }) {}`,
    params: [
      { name: "a", type: "string", required: true },
      { name: "b", type: "number", required: false },
    ],
  },
  {
    title: "export { main as run }",
    source: `async function main({ x }: { x: number }) { return x; }
export { main as run };`,
    params: [{ name: "x", type: "number", required: true }],
  },
  {
    title: "a type from elsewhere gives unknown members",
    source: `import type { Args } from "./types.js";
export async function run({ a }: Args) {}`,
    params: [{ name: "a", type: "unknown", required: true }],
  },
];

describe.each(READERS)("extractSignature params (%s)", (_reader, extractSignature) => {
  test.each(paramCases)("$title", async ({ source, fileName, params }) => {
    const sig = await extractSignature(source, fileName);
    expect(sig.syntaxError).toBeNull();
    expect(sig.hasRun).toBe(true);
    expect(sig.params).toEqual(params);
  });
});

describe.each(READERS)("extractSignature description (%s)", (_reader, extractSignature) => {
  const cases: Array<{ title: string; source: string; description: string | null }> = [
    {
      title: "JSDoc on run",
      source: `/** Triple a number. */\nexport async function run({ n }: { n: number }) { return n * 3; }`,
      description: "Triple a number.",
    },
    {
      title: "file header before imports",
      source: `/** Scan things. */\nimport { x } from "./x.js";\nexport async function run() { return x; }`,
      description: "Scan things.",
    },
    {
      title: "file header wins over run's JSDoc",
      source: `/** Header. */\n\n/** On run. */\nexport async function run() {}`,
      description: "Header.",
    },
    {
      title: "header separated from a helper by a blank line",
      source: `/** Header. */\n\ninterface Args { a: string }\nexport async function run({ a }: Args) {}`,
      description: "Header.",
    },
    {
      title: "a helper's JSDoc is not the workflow's; run's is used",
      source: `/** Parse a port range. */\nfunction parse(s: string) { return s; }\n/** Scan ports. */\nexport async function run() { return parse("1"); }`,
      description: "Scan ports.",
    },
    {
      title: "JSDoc on export const run",
      source: `import fs from "node:fs";\n/** Read it. */\nexport const run = async () => fs;`,
      description: "Read it.",
    },
    {
      title: "tags are not part of the description; paragraphs are kept",
      source: `/**\n * First line.\n *\n * Second paragraph.\n * @param n - a number\n */\nexport async function run({ n }: { n: number }) {}`,
      description: "First line.\n\nSecond paragraph.",
    },
    {
      title: "a shebang line before the header",
      source: `#!/usr/bin/env node\n/** Header. */\nexport async function run() {}`,
      description: "Header.",
    },
    {
      title: "plain block and line comments are not descriptions",
      source: `/* not jsdoc */\n// nor this\nexport async function run() {}`,
      description: null,
    },
    {
      title: "a JSDoc with only tags has no description",
      source: `/** @param n - a number */\nexport async function run({ n }: { n: number }) {}`,
      description: null,
    },
  ];
  test.each(cases)("$title", async ({ source, description }) => {
    expect((await extractSignature(source)).description).toBe(description);
  });
});

describe.each(READERS)("extractSignature syntax errors and run (%s)", (reader, extractSignature) => {
  test.skipIf(reader !== "typescript")("reports the first syntax error with 1-based line and column", async () => {
    const sig = await extractSignature(`/** ok */\nexport async function run() {\n  const x = ;\n}\n`);
    expect(sig.syntaxError).toEqual({ message: "Expression expected.", line: 3, column: 13 });
  });

  test.skipIf(reader !== "typescript")("an unclosed brace is reported", async () => {
    const sig = await extractSignature(`export async function run({ n }: { n: number }) {\n  return n;\n`);
    expect(sig.syntaxError?.message).toBe("'}' expected.");
    expect(sig.syntaxError?.line).toBe(3);
  });

  test.skipIf(reader !== "light")("reports the first syntax error in its own words, at its line", async () => {
    const sig = await extractSignature(`/** ok */\nexport async function run() {\n  const x = ;\n}\n`);
    expect(sig.syntaxError).toEqual({ message: "Unexpected token", line: 3, column: 13 });
    expect((await extractSignature(`export async function run({ n }: { n: number }) {\n  return n;\n`)).syntaxError).not.toBeNull();
  });

  test("valid code has no syntax error", async () => {
    expect((await extractSignature(`export async function run() {}`)).syntaxError).toBeNull();
  });

  const noRun: Array<[string, string]> = [
    ["no run at all", `export async function main() {}`],
    ["run not exported", `async function run() {}`],
    ["default export named run", `export default async function run() {}`],
    ["run exported but not a function", `export const run = 42;`],
    ["type-only export", `type run = () => void;\nexport type { run };`],
    ["empty module", ``],
  ];
  test.each(noRun)("hasRun is false: %s", async (_title, source) => {
    expect((await extractSignature(source)).hasRun).toBe(false);
  });

  const withRun: Array<[string, string]> = [
    ["sync function", `export function run() { return 1; }`],
    ["let arrow in parentheses", `export let run = (async () => 1);`],
    ["export { run } after a const", `const run = async () => 1;\nexport { run };`],
  ];
  test.each(withRun)("hasRun is true: %s", async (_title, source) => {
    expect((await extractSignature(source)).hasRun).toBe(true);
  });
});

describe("lazy TypeScript loading", () => {
  // Importing typescript costs ~150 ms; a static import anywhere in the workflows layer would make
  // every process start pay it, even those that never parse a workflow.
  test.each(["signature.ts", "library.ts", "names.ts", "jsdoc.ts", "index.ts"])("%s has no runtime import of typescript", async (file) => {
    const text = await readFile(new URL(`../../src/workflows/${file}`, import.meta.url), "utf8");
    const runtimeImports = [...text.matchAll(/^import\s+(?!type\b)[^;]*from\s+["']typescript["']/gm)];
    expect(runtimeImports).toEqual([]);
  });
});
