/**
 * A large real API at scale: GitHub's published OpenAPI description (1,223 operations) as one
 * tool. The MCP server's tools/list is the same with it as without it (the context stays
 * constant); tools.search finds the intended operation in the top 3 for a labelled set of 40
 * natural-language queries (test/fixtures/openapi/github/queries.json); one operation's
 * declaration is short, and a whole-tool describe stays a list of one-line summaries.
 */
import { readFile, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { LexicalRanker } from "../../../src/search/lexical.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { cleanup, connectStdio, ensureBuilt, tempDir, textOf } from "../../mcp/harness.js";
import { GITHUB_QUERIES, GITHUB_SPEC } from "./github-server.js";

/** The share of queries whose intended operation is in the top 3, with the lexical ranker (no model). Measured: see the report in the test output. */
const MIN_LEXICAL_HIT_RATE = 0.7;

let dir: string;
let withSpec: string;
let without: string;

beforeAll(async () => {
  dir = await tempDir();
  withSpec = path.join(dir, "with");
  without = path.join(dir, "without");
  await mkdir(withSpec);
  await mkdir(without);
  const cli = stringifyYaml({ name: "echo_text", description: "Print text", command: "echo", schema: { positional: [{ name: "text", type: "string" }] } });
  await writeFile(path.join(without, "echo.yaml"), cli);
  await writeFile(path.join(withSpec, "echo.yaml"), cli);
  await writeFile(path.join(withSpec, "github.yaml"), stringifyYaml({ name: "github", type: "openapi", spec: GITHUB_SPEC, base_url: "http://127.0.0.1:9" }));
});

afterAll(async () => {
  if (dir) await cleanup(dir);
});

describe("GitHub's 1,223 operations as one openapi tool", () => {
  let registry: ToolRegistry;

  beforeAll(async () => {
    registry = await ToolRegistry.load(withSpec, { ranker: new LexicalRanker() });
  }, 120_000);

  afterAll(async () => {
    await registry?.close();
  });

  it("finds the intended operation in the top 3 for the labelled queries", async () => {
    const { queries } = JSON.parse(await readFile(GITHUB_QUERIES, "utf8")) as { queries: Array<{ query: string; expected: string[] }> };
    expect(queries.length).toBeGreaterThanOrEqual(30);
    const misses: string[] = [];
    for (const { query, expected } of queries) {
      const top = await registry.search(query, { limit: 3 });
      // Each result of a large tool is the tool narrowed to one operation.
      for (const r of top) if (r.name === "github") expect(r.callables).toHaveLength(1);
      const names = top.map((r) => r.callables[0]?.name ?? r.name);
      if (!names.some((n) => expected.includes(n))) misses.push(`${query} → ${names.join(", ")} (wanted ${expected.join(" or ")})`);
    }
    const rate = (queries.length - misses.length) / queries.length;
    console.log(`lexical top-3 hit rate: ${queries.length - misses.length}/${queries.length} (${Math.round(rate * 100)}%)${misses.length ? `\nmisses:\n  ${misses.join("\n  ")}` : ""}`);
    expect(rate).toBeGreaterThanOrEqual(MIN_LEXICAL_HIT_RATE);
  }, 120_000);

  it("describes one operation in a few lines and the whole tool as one-line summaries", async () => {
    const one = await registry.describe("github.repos_get_content");
    expect(one).toContain("repos_get_content(args: github.ReposGetContentArgs)");
    expect(one.length).toBeLessThan(3_000);
    const whole = await registry.describe("github");
    expect(whole).toContain('tools.describe("github.<callable>")');
    expect(whole).toContain("    issues_create(args?: Record<string, unknown>): Promise<unknown>;");
    expect(whole).not.toContain("interface");
    const unknown = (await registry.describe("github.issues_creat").then(() => new Error("no error"), (e: unknown) => e)) as Error;
    expect(unknown.message).toMatch(/^Unknown operation 'issues_creat' of tool 'github'\. Did you mean: issues_create.* Available: .*, … \(1223 in all; use tools\.search\)$/);
    expect(unknown.message.length).toBeLessThan(2_000);
  }, 120_000);
});

describe("the MCP server's tools/list", () => {
  it("is the same with the 1,223-operation spec as without it, and run_code reaches the operations", async () => {
    await ensureBuilt();
    const a = await connectStdio(["--tools", without, "--search", "lexical"], { cwd: dir });
    const b = await connectStdio(["--tools", withSpec, "--search", "lexical"], { cwd: dir });
    try {
      const [listA, listB] = await Promise.all([a.client.listTools(), b.client.listTools()]);
      expect(JSON.stringify(listB)).toBe(JSON.stringify(listA));
      const r = await b.client.callTool({ name: "run_code", arguments: { code: '(await tools.search("merge a pull request", { limit: 3 })).map((t) => t.name + "." + t.callables[0].name)' } });
      expect(textOf(r)).toContain("github.pulls_merge");
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 600_000);
});
