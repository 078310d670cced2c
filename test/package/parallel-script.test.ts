/**
 * scripts/parallel.mjs, which `npm test` runs its checks with: every chain runs, a failure in any of
 * them fails the whole, and a chain stops at its first failure.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const SCRIPT = path.resolve("scripts/parallel.mjs");
const run = promisify(execFile);

describe("scripts/parallel.mjs", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-parallel-"));
    const scripts = { one: "node -e \"console.log('one ran')\"", two: "node -e \"console.log('two ran')\"", bad: "node -e \"process.exit(3)\"" };
    await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "p", version: "1.0.0", scripts }));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("runs every chain and passes when all pass", async () => {
    const { stdout } = await run(process.execPath, [SCRIPT, "one", "one+two"], { cwd: dir });
    expect(stdout.match(/one ran/g)).toHaveLength(2);
    expect(stdout).toContain("two ran");
    expect(stdout).toMatch(/> two: ok after/);
  });

  it("fails when one chain fails, runs the others to their end, and stops a chain at its failure", async () => {
    const failed = await run(process.execPath, [SCRIPT, "bad+two", "one"], { cwd: dir }).then(
      () => null,
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toMatch(/> bad: exit 3/);
    expect(failed?.stdout).toContain("one ran");
    expect(failed?.stdout).not.toContain("two ran");
    expect(failed?.stderr).toContain("failed: bad+two");
  });

  it("says how it is used when given nothing to run", async () => {
    const failed = await run(process.execPath, [SCRIPT], { cwd: dir }).then(() => null, (err: { code: number; stderr: string }) => err);
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toMatch(/usage: node scripts\/parallel\.mjs/);
  });
});
