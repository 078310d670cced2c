/** `ts-code-mode deps --language python`: pip into the base's venv, its own list, imported by `run --language python`. */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "./harness.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-cli-pydeps-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

describe("ts-code-mode deps --language python", () => {
  it("adds with pip, lists, and the package imports in a Python run; the npm list is untouched", async () => {
    const add = await cli(["deps", "add", "--language", "python", "text_unidecode==1.3", "--base", "b"], { cwd: dir });
    expect(add.code).toBe(0);
    expect(add.stdout).toContain("installed: text-unidecode==1.3");
    expect(await readFile(path.join(dir, "b", "deps-python.txt"), "utf8")).toBe("text-unidecode==1.3\n");
    expect(existsSync(path.join(dir, "b", "deps.txt"))).toBe(false);

    const list = await cli(["deps", "list", "--language", "python", "--json", "--base", "b"], { cwd: dir });
    expect(JSON.parse(list.stdout)).toEqual([{ name: "text-unidecode", spec: "text-unidecode==1.3", configured: false, installed: true }]);
    const npmList = await cli(["deps", "list", "--json", "--base", "b"], { cwd: dir });
    expect(JSON.parse(npmList.stdout)).toEqual([]);

    const run = await cli(["run", "--language", "python", "--base", "b", 'import text_unidecode\nprint(text_unidecode.unidecode("naïve"))'], { cwd: dir });
    expect(run.stdout).toBe("naive\n");
  }, 240_000);

  it("refuses a URL spec and npm-only flags with a clear message, installing nothing", async () => {
    const url = await cli(["deps", "add", "--language", "python", "git+https://github.com/psf/requests", "--base", "c"], { cwd: dir });
    expect(url.code).toBe(1);
    expect(url.stderr).toMatch(/URLs, VCS and direct references are not allowed/);
    const local = await cli(["deps", "add", "--language", "python", "--allow-local", "six", "--base", "c"], { cwd: dir });
    expect(local.code).not.toBe(0);
    expect(local.stderr).toMatch(/--allow-local is for npm packages/);
    expect(existsSync(path.join(dir, "c", "deps"))).toBe(false);
  });
});
