/** `ts-code-mode mcp` flag checking: a flag that does not fit is a usage error (exit 2), before anything is served. */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanup, ensureBuilt, runCli, tempDir } from "./harness.js";

let dir: string;

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await cleanup(dir);
});

async function mcp(args: string[], env?: NodeJS.ProcessEnv) {
  // stdin is closed at once, so a command that wrongly started serving stdio ends instead of hanging.
  return runCli(["mcp", ...args], { cwd: dir, ...(env ? { env } : {}) });
}

describe("mcp flags: usage errors exit 2 with a clear message", () => {
  const cases: Array<[string, string[], RegExp]> = [
    ["--prefix without --redis", ["--prefix", "app"], /--prefix only applies to Redis storage; give --redis URL/],
    ["--redis without --prefix", ["--redis", "redis://localhost:6379"], /--redis needs --prefix P/],
    ["--redis with --storage", ["--redis", "redis://localhost:6379", "--prefix", "app", "--storage", "data"], /--storage and --redis .*give one/],
    ["a bad --redis URL", ["--redis", "localhost", "--prefix", "app"], /Invalid Redis URL/],
    ["--host without --http", ["--host", "0.0.0.0"], /--host only applies with --http PORT/],
    ["--token without --http", ["--token", "0123456789abcdef0123"], /--token only applies with --http PORT/],
    ["--no-auth without --http", ["--no-auth"], /--no-auth only applies with --http PORT/],
    ["--host and --no-auth without --http", ["--host", "::1", "--no-auth"], /--host, --no-auth only apply with --http PORT/],
    ["a non-loopback host without a token", ["--http", "0", "--host", "0.0.0.0"], /refusing to serve 0\.0\.0\.0 without a token.*--no-auth/],
    ["a short token", ["--http", "0", "--token", "short"], /at least 16 characters/],
    ["--token with --no-auth", ["--http", "0", "--token", "0123456789abcdef0123", "--no-auth"], /contradict/],
    ["a port out of range", ["--http", "70000"], /--http.*port number from 0 to 65535/],
    ["a non-numeric port", ["--http", "web"], /port number/],
    ["--max-output too small", ["--max-output", "10"], /--max-output.*from 500/],
    ["--max-output not a number", ["--max-output", "lots"], /whole number of characters/],
    ["an unknown executor", ["--executor", "docker"], /unknown executor "docker"/],
    ["a container flag without --executor container", ["--network", "bridge"], /--network applies to --executor container only/],
    ["a bad --timeout", ["--timeout", "0"], /milliseconds/],
    ["a bad --workspace", ["--workspace", "../escape"], /--workspace: /],
  ];
  for (const [what, args, message] of cases) {
    it(`refuses ${what}`, async () => {
      const r = await mcp(args);
      expect(r.stderr).toMatch(message);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
    });
  }

  it("ignores TS_CODE_MODE_TOKEN on stdio (the variable may be set for other uses)", async () => {
    const r = await mcp(["--base", "base"], { ...process.env, TS_CODE_MODE_TOKEN: "0123456789abcdef0123" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
  });

  it("a broken tool file: stdio warns and keeps serving (its calls report it, see stdio-recovery.test.ts); --http refuses to start (exit 2) naming the file and the fix", async () => {
    await mkdir(path.join(dir, "base", "tools"), { recursive: true });
    await writeFile(path.join(dir, "base", "tools", "bad.yaml"), "name: bad\nschema: { options: { x: { type: nope } } }\n");
    const r = await mcp(["--base", "base"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("bad.yaml");
    expect(r.stderr).toContain("still serving");
    expect(r.stdout).toBe("");
    const overHttp = await mcp(["--base", "base", "--http", "0"]);
    expect(overHttp.code).toBe(2);
    expect(overHttp.stderr).toContain("bad.yaml");
    expect(overHttp.stderr).toContain("Fix the tool file");
  });

  it("fails with exit 1 naming host:port when the Redis server cannot be reached", async () => {
    const r = await mcp(["--redis", "redis://127.0.0.1:1", "--prefix", "app"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/127\.0\.0\.1:1/);
    expect(r.stdout).toBe("");
  });

  it("uses --workspace as the storage workspace", async () => {
    const r = await mcp(["--base", "base", "--workspace", "team_a"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(path.join(dir, "base", "workspaces", "team_a"));
  });

  it("documents every flag in --help", async () => {
    const r = await runCli(["mcp", "--help"], { cwd: dir });
    expect(r.code).toBe(0);
    for (const flag of ["--base", "--tools", "--storage", "--redis", "--prefix", "--workspace", "--executor", "--timeout", "--no-runtime-deps", "--max-output", "--http", "--host", "--token", "--no-auth"]) {
      expect(r.stdout).toContain(flag);
    }
  });
});
