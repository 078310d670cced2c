/**
 * `ts-code-mode toolable new NAME` writes a TypeScript toolable executable and its tool YAML; with
 * ts-code-mode and zod installed next to it, `run` calls it as tools.NAME.greet and prints its
 * progress on stderr. An existing file is kept unless --force (exit 2).
 */
import { mkdir, symlink } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanup, ensureBuilt, REPO, runCli, tempDir } from "../mcp/harness.js";

let dir: string;
beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => cleanup(dir));

describe("toolable new", () => {
  it("scaffolds a tool that the CLI can call", async () => {
    const made = await runCli(["toolable", "new", "hello", "--dir", "base/tools", "--json"], { cwd: dir });
    expect(made.code).toBe(0);
    expect(JSON.parse(made.stdout)).toEqual({ files: [path.join(dir, "base/tools/hello.ts"), path.join(dir, "base/tools/hello.yaml")] });
    // "installed": the package and zod resolvable from the tool's folder.
    await mkdir(path.join(dir, "node_modules"));
    await symlink(REPO, path.join(dir, "node_modules", "ts-code-mode"));
    await symlink(path.join(REPO, "node_modules", "zod"), path.join(dir, "node_modules", "zod"));
    const r = await runCli(["run", "--base", "base", "--json", "await tools.hello.greet({ who: 'Ada' })"], { cwd: dir, timeoutMs: 60_000 });
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, value: { greeting: "hello Ada" } });
    expect(r.stderr).toContain("[tools.hello.greet] progress 100%: greeting");
    const again = await runCli(["toolable", "new", "hello", "--dir", "base/tools"], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("add --force");
    expect((await runCli(["toolable", "new", "class"], { cwd: dir })).code).toBe(2);
  });
});
