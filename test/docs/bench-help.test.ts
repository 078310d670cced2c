/**
 * Every bench script with options answers `--help` with what it measures and how to run it (its
 * opening doc comment, bench/lib.mjs benchArgs), and names an option it does not know instead of
 * printing parseArgs' stack trace (docs/benchmarks.md). Nothing is measured: each exits at once.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { REPO } from "../cli/harness.js";

const run = promisify(execFile);
const SCRIPTS = ["calls", "code-tools", "cold", "confine", "container", "ledger", "mcp", "openapi", "otel", "peers", "run", "sandbox", "search", "serve", "soak", "storage", "warm"];

describe("bench scripts", () => {
  it("answer --help with their usage and exit 0", async () => {
    const outputs = await Promise.all(SCRIPTS.map((name) => run(process.execPath, [path.join("bench", `${name}.mjs`), "--help"], { cwd: REPO, timeout: 60_000 })));
    outputs.forEach(({ stdout }, i) => expect(stdout, SCRIPTS[i]).toMatch(new RegExp(`bench/${SCRIPTS[i]}\\.mjs|bench:${SCRIPTS[i]}`)));
  });

  it("name an unknown option and exit 2", async () => {
    const failed = await run(process.execPath, [path.join("bench", "calls.mjs"), "--bogus"], { cwd: REPO, timeout: 60_000 }).then(
      () => null,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain("Unknown option '--bogus'");
    expect(failed?.stderr).toContain("node bench/calls.mjs --help");
  });
});
