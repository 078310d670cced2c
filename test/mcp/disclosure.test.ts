/**
 * Progressive disclosure: what the client receives from the first `tools/list` must not grow with
 * the number of configured tools (the model discovers them with tools.search / tools.describe).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RUN_CODE_DESCRIPTION } from "../../src/mcp/descriptions.js";
import { callTool, cleanup, connectStdio, ensureBuilt, structuredOf, tempDir, type StdioConnection } from "./harness.js";

let dir: string;
const open: StdioConnection[] = [];

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await cleanup(dir);
});

/** `count` CLI tool files, each with options and two recipes, as a real tools folder would hold. */
async function toolsFolder(name: string, count: number): Promise<string> {
  const folder = path.join(dir, name);
  await mkdir(folder, { recursive: true });
  for (let i = 1; i <= count; i++) {
    const yaml = `name: tool_${i}
description: Generated tool number ${i} that prints its arguments for the disclosure test
command: echo
tags: [generated, test, n${i}]
schema:
  options:
    newline: { type: boolean, short: n, description: Do not print the trailing newline }
  positional:
    - { name: words, type: array, required: true, description: Words to print }
recipes:
  say:
    description: Print the words of tool ${i}
    params:
      words: {}
  quiet:
    description: Print the words without a newline
    preset: { newline: true }
    params:
      words: {}
`;
    await writeFile(path.join(folder, `tool_${i}.yaml`), yaml);
  }
  return folder;
}

/** The footprint a host pays before the first call: the whole tools/list result plus the server instructions. */
async function footprint(toolsDir: string, storage: string, extra: string[] = []): Promise<{ size: number; toolCount: number; names: string[] }> {
  const conn = await connectStdio(["--tools", toolsDir, "--storage", path.join(dir, storage), ...extra], { cwd: dir });
  open.push(conn);
  const listed = await conn.client.listTools();
  const instructions = conn.client.getInstructions() ?? "";
  // The tools really are loaded: the agent can find them in code, just not in tools/list.
  const count = await callTool(conn.client, "run_code", { code: "(await tools.list()).length" });
  return { size: JSON.stringify(listed).length + instructions.length, toolCount: structuredOf<{ value: number }>(count).value, names: listed.tools.map((t) => t.name) };
}

/** A store with `n` workflows and `n` artifacts, saved through a server on it. */
async function fillStore(storage: string, n: number): Promise<void> {
  const conn = await connectStdio(["--tools", await toolsFolder("none", 0), "--storage", path.join(dir, storage)], { cwd: dir });
  const code = `for (let i = 0; i < ${n}; i++) {
  await workflows.create({ name: "wf_" + i, source: "/** Workflow " + i + " doubles a number. */ export async function run({ n }: { n: number }) { return n * 2; }" });
  await artifacts.save("notes/" + i + ".txt", "note " + i, { description: "note number " + i });
}`;
  expect(structuredOf(await callTool(conn.client, "run_code", { code }))).toMatchObject({ ok: true });
  await conn.close();
}

/** The budget: about 1,000 tokens for the whole default surface. */
const FOOTPRINT_BUDGET = 4_000;

describe("progressive disclosure", () => {
  it("the default surface is run_code alone, within 4,000 characters, the same with 1 tool and an empty store as with 50 tools, 30 workflows and 30 artifacts", async () => {
    const small = await footprint(await toolsFolder("one", 1), "empty");
    await fillStore("full", 30);
    const large = await footprint(await toolsFolder("fifty", 50), "full");
    expect(small.toolCount).toBe(1);
    expect(large.toolCount).toBe(50);
    expect(small.names).toEqual(["run_code"]);
    expect(large.size).toBe(small.size);
    expect(small.size).toBeLessThanOrEqual(FOOTPRINT_BUDGET);
  });

  it("--surface full offers today's set, also constant in the number of tools", async () => {
    const one = await footprint(await toolsFolder("one", 1), "a", ["--surface", "full"]);
    const fifty = await footprint(await toolsFolder("fifty", 50), "b", ["--surface", "full"]);
    expect(one.names).toEqual(expect.arrayContaining(["run_code", "list_tools", "search_tools", "describe_tool", "load_artifact"]));
    expect(fifty.size).toBe(one.size);
    expect(one.size).toBeGreaterThan(FOOTPRINT_BUDGET);
  });

  it("teaches the namespaces and the discovery calls in run_code's description without listing tools", () => {
    for (const phrase of ["tools.search(", "tools.describe(", "workflows.search(", "workflows.get(", "artifacts.list()", "artifacts.save(", "deps.list()"]) {
      expect(RUN_CODE_DESCRIPTION).toContain(phrase);
    }
    expect(RUN_CODE_DESCRIPTION.split("\n").length).toBeLessThanOrEqual(12);
  });
});
