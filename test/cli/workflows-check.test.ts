/**
 * `workflows list` flags workflow files that cannot be invoked (syntax error, no `run` export)
 * instead of failing only when called, and shows parameter defaults as values.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, tempDir } from "./harness.js";

let dir: string;

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
  const workflows = path.join(dir, "base", "workflows");
  await mkdir(workflows, { recursive: true });
  await writeFile(path.join(workflows, "good.ts"), "/** Good. */\nexport async function run({ retries = 3, mode = 'fast', at = Date.now() }: { retries?: number; mode?: string; at?: number }) { return retries; }\n");
  await writeFile(path.join(workflows, "typo.ts"), "export async function run({ n }: { n: number }) { return n +; }\n");
  await writeFile(path.join(workflows, "scan-host.ts"), "export async function run() { return 1; }\n");
  await writeFile(path.join(workflows, "norun.ts"), "/** Forgot the export. */\nasync function run() { return 1; }\n");
});
afterEach(async () => {
  await cleanup(dir);
});

interface Listed {
  name: string;
  params: Array<{ name: string; default?: unknown; defaultExpression?: string }>;
  problem?: string;
}

describe("workflows list checks the files", () => {
  it("--json gives each broken file a problem and defaults as values", async () => {
    const r = await cli(["workflows", "list", "--base", "base", "--json"], { cwd: dir });
    expect(r.code).toBe(0);
    const listed = JSON.parse(r.stdout) as Listed[];
    const byName = new Map(listed.map((w) => [w.name, w]));
    expect(byName.get("good")?.problem).toBeUndefined();
    expect(byName.get("good")?.params).toEqual([
      { name: "retries", type: "number", required: false, default: 3 },
      { name: "mode", type: "string", required: false, default: "fast" },
      { name: "at", type: "number", required: false, defaultExpression: "Date.now()" },
    ]);
    expect(byName.get("typo")?.problem).toMatch(/^syntax error at line 1:\d+: Expression expected/);
    expect(byName.get("norun")?.problem).toBe("does not export a function named run");
    expect(r.stderr).toContain("warning: workflow typo cannot be invoked: syntax error");
    expect(r.stderr).toContain("warning: workflow norun cannot be invoked: does not export a function named run");
  });

  it("the table marks broken files and prints defaults as values", async () => {
    const r = await cli(["workflows", "list", "--base", "base"], { cwd: dir });
    expect(r.code).toBe(0);
    const row = (name: string) => r.stdout.split("\n").find((l) => l.startsWith(`${name} `)) ?? "";
    expect(row("norun")).toContain("BROKEN: does not export a function named run");
    expect(row("typo")).toContain("BROKEN: syntax error");
    expect(row("good")).toContain("retries?: number = 3");
    expect(row("good")).toContain('mode?: string = "fast"');
    expect(row("good")).toContain("at?: number = Date.now() (computed)");
  });

  it("names a file whose name is not a workflow name on stderr instead of hiding it", async () => {
    const r = await cli(["workflows", "list", "--base", "base", "--json"], { cwd: dir });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Listed[]).map((w) => w.name)).not.toContain("scan-host");
    expect(r.stderr).toMatch(/warning: workflow file scan-host\.ts is not offered: .*not a valid workflow name.*scan_host\.ts/);
  });
});
