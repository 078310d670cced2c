/** `ts-code-mode workflows index`: embeds every workflow with the built-in model, with progress on stderr. */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, tempDir } from "./harness.js";

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  expect((await cli(["init", "--base", "base"], { cwd: dir })).code).toBe(0);
}, 120_000);

afterAll(async () => {
  await cleanup(dir);
});

describe("workflows index", () => {
  // The tests run with TS_CODE_MODE_SEARCH=lexical (vitest.config.ts): the model is asked for by name.
  it("embeds every workflow, reports progress, and leaves the vectors for the next session", async () => {
    const r = await cli(["workflows", "index", "--base", "base", "--search", "use-lite", "--json"], { cwd: dir, timeoutMs: 120_000 });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as { indexed: number; total: number };
    expect(result.total).toBeGreaterThan(0);
    expect(result.indexed).toBe(result.total);
    expect(r.stderr).toContain(`workflows index: ${result.total}/${result.total} workflows embedded`);
    const spaces = await readdir(path.join(dir, "base", "vectors"));
    expect(spaces).toHaveLength(1);
  });

  it("says there is nothing to build when search is lexical", async () => {
    const r = await cli(["workflows", "index", "--base", "base", "--search", "lexical", "--json"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toBeNull();
  });
});
