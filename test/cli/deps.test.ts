/** `ts-code-mode deps`: add (with progress), list, sync, remove, refusing bad specs — with a real tarball. */
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "./harness.js";

const FIXTURE = path.resolve(import.meta.dirname, "..", "fixtures", "deps", "tcm-tiny");
let dir: string;
let tarball: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-cli-deps-"));
  await cp(FIXTURE, path.join(dir, "pkg"), { recursive: true });
  const { stdout } = await promisify(execFile)("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: path.join(dir, "pkg") });
  tarball = path.join(dir, stdout.trim().split("\n").pop()!);
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

describe("ts-code-mode deps", () => {
  it("adds with progress, lists, syncs, and the package imports in a run", async () => {
    const add = await cli(["deps", "add", tarball, "--allow-local", "--base", "b"], { cwd: dir });
    expect(add.code).toBe(0);
    expect(add.stderr).toContain(`[1/1] installing ${tarball}`);
    expect(add.stdout).toContain(`installed: ${tarball}`);
    expect(await readFile(path.join(dir, "b", "deps.txt"), "utf8")).toBe(`${tarball}\n`);

    const list = await cli(["deps", "list", "--json", "--allow-local", "--base", "b"], { cwd: dir });
    expect(JSON.parse(list.stdout)).toEqual([{ name: tarball, spec: tarball, configured: false, installed: true }]);

    const sync = await cli(["deps", "sync", "--json", "--allow-local", "--base", "b"], { cwd: dir });
    expect(JSON.parse(sync.stdout)).toEqual({ installed: [], alreadyPresent: [tarball], failed: [] });

    const run = await cli(["run", "--base", "b", '(await import("tcm-tiny")).shout("cli")'], { cwd: dir });
    expect(run.stdout).toBe("CLI!\n");

    const remove = await cli(["deps", "remove", tarball, "--allow-local", "--base", "b"], { cwd: dir });
    expect(remove.stderr).toBe("");
    expect(remove.stdout).toMatch(/removed from the list \(configuration only\)/);

    // Removing what is not listed fails (exit 1), as `skills remove` does.
    const again = await cli(["deps", "remove", "not-listed", "--base", "b"], { cwd: dir });
    expect(again.code).toBe(1);
    expect(again.stderr).toBe("error: not-listed is not in the list.\n");
    const json = await cli(["deps", "remove", "not-listed", "--json", "--base", "b"], { cwd: dir });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ removed: false });
  }, 120_000);

  it("refuses a bad spec with a clear message and exit 1, installing nothing", async () => {
    const r = await cli(["deps", "add", "left-pad; rm -rf /", "--base", "c"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/shell metacharacters/);
    const local = await cli(["deps", "add", tarball, "--base", "c"], { cwd: dir });
    expect(local.code).toBe(1);
    expect(local.stderr).toMatch(/Local paths are not allowed .*allowLocalPaths/);
  });
});
