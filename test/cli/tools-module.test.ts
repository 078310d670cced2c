/**
 * `--tools-module FILE`: run, mcp and serve take tools defined in code from a module of the user's,
 * TypeScript loaded without a build step (serve is covered by the remote conformance suite, whose
 * code-tools case runs against a server started with it). A module that is missing, fails to load
 * or exports something that is not a tool stops the command with a usage error naming it.
 */
import { execFile } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, REPO, tempDir } from "./harness.js";
import { connectStdio, structuredOf, type StdioConnection } from "../mcp/harness.js";

const FIXTURE = path.join(REPO, "test/fixtures/code-tools/tools.ts");

let dir: string;
let conn: StdioConnection | undefined;
beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await conn?.close();
  conn = undefined;
  await cleanup(dir);
});

describe("--tools-module", () => {
  it("run: the module's tools are tools.* beside the YAML tools, in TypeScript and in Python", async () => {
    const ts = await cli(["run", "--base", dir, "--tools-module", FIXTURE, "--json", "[await tools.weather({ city: 'Rome' }), await tools.add({ a: 1, b: 2 }), await tools.github.createIssue({ title: 'x' })]"], { cwd: dir });
    expect(ts.stderr).not.toMatch(/error/i);
    expect(JSON.parse(ts.stdout).value).toEqual([{ city: "Rome", tempC: 4 }, 3, { number: 7, title: "x" }]);
    const py = await cli(["run", "--base", dir, "--language", "python", "--tools-module", FIXTURE, "--json", "tools.add(a=20, b=22)"], { cwd: dir });
    expect(JSON.parse(py.stdout).value).toBe(42);
  });

  it("takes a default export (an array or a map) and a .mjs module", async () => {
    const file = path.join(dir, "mine.mjs");
    await writeFile(file, `import { defineTool } from ${JSON.stringify(path.join(REPO, "dist/index.js"))};\nexport default [defineTool({ name: "hello", description: "Greets", input: { type: "object", properties: { who: { type: "string" } }, required: ["who"] }, execute: ({ who }) => "hi " + who })];\nexport const ignored = 1;\n`);
    const r = await cli(["run", "--base", dir, "--tools-module", file, "await tools.hello({ who: 'you' })"], { cwd: dir });
    expect(r.stdout.trim()).toBe("hi you");
  });

  it("stops with a usage error naming the module when it is missing, fails to load, or exports something that is not a tool", async () => {
    const missing = await cli(["run", "--base", dir, "--tools-module", "nope.ts", "1"], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--tools-module nope\.ts: no such file/);
    await writeFile(path.join(dir, "broken.ts"), "throw new Error('cannot start');\n");
    const broken = await cli(["run", "--base", dir, "--tools-module", "broken.ts", "1"], { cwd: dir });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/--tools-module broken\.ts: the module failed to load: Error: cannot start/);
    await writeFile(path.join(dir, "odd.ts"), "export const answer: number = 42;\n");
    const odd = await cli(["run", "--base", dir, "--tools-module", "odd.ts", "1"], { cwd: dir });
    expect(odd.code).toBe(2);
    expect(odd.stderr).toMatch(/--tools-module odd\.ts\.answer: expected a tool/);
  });

  it("mcp: run_code reaches the module's tools", async () => {
    conn = await connectStdio(["--base", "base", "--tools-module", FIXTURE], { cwd: dir });
    const result = await conn.client.callTool({ name: "run_code", arguments: { code: "await tools.weather({ city: 'Lima' })" } });
    expect(structuredOf<{ value: unknown }>(result).value).toEqual({ city: "Lima", tempC: 4 });
  });

  it("the command in docs/code-tools.md runs as shown (next to a tools.ts, here the suite's fixture)", async () => {
    const doc = await readFile(path.join(REPO, "docs", "code-tools.md"), "utf8");
    const line = /```sh\n(ts-code-mode run --tools-module [^\n]+)\n```/.exec(doc)?.[1];
    expect(line).toBeDefined();
    const cwd = path.dirname(FIXTURE);
    try {
      const { stdout } = await promisify(execFile)("bash", ["-c", line!.replace(/^ts-code-mode /, `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(REPO, "dist/cli/main.js"))} `)], { cwd, timeout: 60_000 });
      expect(stdout.trim()).toBe("{ city: 'Oslo', tempC: 4 }");
    } finally {
      await rm(path.join(cwd, ".code-mode"), { recursive: true, force: true, maxRetries: 5 });
    }
  });
});
