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

async function initialToolsListSize(toolsDir: string): Promise<{ size: number; toolCount: number }> {
  const conn = await connectStdio(["--tools", toolsDir, "--storage", path.join(dir, "storage")], { cwd: dir });
  open.push(conn);
  const listed = await conn.client.listTools();
  // The tools really are loaded: the agent can find them, just not in tools/list.
  const all = await callTool(conn.client, "list_tools");
  return { size: JSON.stringify(listed).length, toolCount: structuredOf<{ tools: unknown[] }>(all).tools.length };
}

describe("progressive disclosure", () => {
  it("sends the same initial tools/list with 1 tool configured as with 50", async () => {
    const one = await initialToolsListSize(await toolsFolder("one", 1));
    const fifty = await initialToolsListSize(await toolsFolder("fifty", 50));
    expect(one.toolCount).toBe(1);
    expect(fifty.toolCount).toBe(50);
    expect(fifty.size).toBe(one.size);
    // A budget, so the constant stays small: 14 MCP tools with schemas in well under 20 kB.
    expect(one.size).toBeLessThan(20_000);
  });

  it("teaches the namespaces and the discovery calls in run_code's description without listing tools", () => {
    for (const phrase of ["tools.search(", "tools.describe(", "workflows.search(", "artifacts.save(", "deps.list()"]) {
      expect(RUN_CODE_DESCRIPTION).toContain(phrase);
    }
    expect(RUN_CODE_DESCRIPTION.split("\n").length).toBeLessThanOrEqual(12);
  });
});
