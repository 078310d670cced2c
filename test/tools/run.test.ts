/**
 * Real child processes: timeouts, kills, output caps, aborts and failures of CLI tools, driven
 * through fixture YAML files in a temp dir and the registry, as an agent's call would be.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import { runCommand } from "../../src/tools/adapters/cli/run.js";
import { ToolRegistry } from "../../src/tools/registry.js";

let dir: string;
let registry: ToolRegistry;

const FIXTURES: Record<string, string> = {
  "nap.yaml": `
name: nap
description: Sleep
command: sleep
timeout: 0.3
schema:
  positional:
    - { name: seconds, type: string, required: true }
`,
  "slow.yaml": `
name: slow
description: Sleep with the default 60 s timeout
command: sleep
schema:
  positional:
    - { name: seconds, type: string, required: true }
`,
  "sh.yaml": `
name: sh
description: Run a shell script (the test needs pipes, exit codes and grandchildren)
command: [sh, -c]
schema:
  positional:
    - { name: script, type: string, required: true }
`,
  "missing.yaml": `
name: missing
description: An executable that does not exist
command: definitely-not-a-command-7f3a
`,
  "zeros.yaml": `
name: zeros
description: Print N zero bytes
command: head
schema:
  options:
    bytes: { type: string, short: c }
  positional:
    - { name: file, type: string, default: /dev/zero }
`,
  "cat.yaml": `
name: cat
description: Concatenate files (or stdin)
schema:
  positional:
    - { name: files, type: array }
`,
  "pwd.yaml": `
name: pwd
description: Print the working directory
`,
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-tools-run-"));
  for (const [file, text] of Object.entries(FIXTURES)) await writeFile(path.join(dir, file), text);
  registry = await ToolRegistry.load(dir);
});

afterAll(async () => {
  await registry.close();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

async function rejection(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ToolError);
    return e as ToolError;
  }
  throw new Error("expected the call to fail");
}

/** True once the process is gone (or a zombie nobody reaps, which no longer runs). */
async function waitUntilDead(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    const stat = `/proc/${pid}/stat`;
    if (!existsSync(stat)) return true;
    try {
      const state = readFileSync(stat, "utf8").split(") ")[1]?.[0];
      if (state === "Z" || state === "X") return true;
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe("CLI tool runs", () => {
  it("kills a command that outlives the tool's timeout", async () => {
    const e = await rejection(registry.call("nap", null, { seconds: "30" }));
    expect(e.code).toBe("TIMEOUT");
    expect(e.recoverable).toBe(false);
    expect(e.message).toMatch(/tools\.nap timed out after 300 ms; the process was killed/);
  });

  it("uses CallContext.timeoutMs when it is smaller than the tool's timeout", async () => {
    const e = await rejection(registry.call("slow", null, { seconds: "30" }, { timeoutMs: 200 }));
    expect(e.code).toBe("TIMEOUT");
    expect(e.message).toContain("200 ms");
  });

  it("keeps the tool's timeout when CallContext.timeoutMs is larger", async () => {
    const e = await rejection(registry.call("nap", null, { seconds: "30" }, { timeoutMs: 60_000 }));
    expect(e.message).toContain("300 ms");
  });

  it("kills grandchildren with the process group on timeout", async () => {
    const pidFile = path.join(dir, "grandchild.pid");
    const script = `sleep 30 & echo $! > '${pidFile}'; wait`;
    const e = await rejection(registry.call("sh", null, { script }, { timeoutMs: 500 }));
    expect(e.code).toBe("TIMEOUT");
    const pid = Number((await readFile(pidFile, "utf8")).trim());
    expect(pid).toBeGreaterThan(0);
    expect(await waitUntilDead(pid)).toBe(true);
  });

  it("reports a missing executable as DEPENDENCY, naming the command", async () => {
    const e = await rejection(registry.call("missing", null, {}));
    expect(e.code).toBe("DEPENDENCY");
    expect(e.message).toContain("command 'definitely-not-a-command-7f3a' was not found on PATH");
  });

  it("reports a non-zero exit as INTERNAL with the exit code and stderr", async () => {
    const e = await rejection(registry.call("sh", null, { script: "echo partial; echo 'bad thing happened' >&2; exit 3" }));
    expect(e.code).toBe("INTERNAL");
    expect(e.exitCode).toBe(3);
    expect(e.stderr).toBe("bad thing happened");
    expect(e.message).toContain("exited with code 3: bad thing happened");
  });

  it("bounds the stderr excerpt to its last 2,000 characters", async () => {
    const script = "head -c 100000 /dev/zero | tr '\\0' x >&2; echo THE-END >&2; exit 1";
    const e = await rejection(registry.call("sh", null, { script }));
    expect(e.stderr!.length).toBeLessThanOrEqual(2_001);
    expect(e.stderr!.endsWith("THE-END")).toBe(true);
    expect(e.message.length).toBeLessThan(2_300);
  });

  it("kills a command whose stdout exceeds the 16 MiB cap", async () => {
    const e = await rejection(registry.call("zeros", null, { bytes: "20000000" }));
    expect(e.code).toBe("INTERNAL");
    expect(e.message).toContain("more than 16 MiB of output (the output cap)");
  });

  it("returns output just under the cap in full", async () => {
    const out = (await registry.call("zeros", null, { bytes: "1000000" })) as string;
    expect(out.length).toBe(1_000_000);
  });

  it("kills the process when the caller's signal aborts", async () => {
    const ac = new AbortController();
    const call = registry.call("slow", null, { seconds: "30" }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    const e = await rejection(call);
    expect(e.code).toBe("INTERNAL");
    expect(e.message).toContain("tools.slow was aborted; the process was killed");
  });

  it("maps an abort caused by AbortSignal.timeout to TIMEOUT", async () => {
    const e = await rejection(registry.call("slow", null, { seconds: "30" }, { signal: AbortSignal.timeout(100) }));
    expect(e.code).toBe("TIMEOUT");
  });

  it("does not start anything for an already aborted signal", async () => {
    const pidFile = path.join(dir, "never.pid");
    const e = await rejection(registry.call("sh", null, { script: `echo $$ > '${pidFile}'` }, { signal: AbortSignal.abort() }));
    expect(e.message).toContain("aborted");
    expect(existsSync(pidFile)).toBe(false);
  });

  it("runs without a shell: shell syntax in values stays literal", async () => {
    const out = await runCommand(["printf", "%s", "$(echo hi); `id` | x > y"], { tool: "printf", callable: null, timeoutMs: 5_000 });
    expect(out).toBe("$(echo hi); `id` | x > y");
  });

  it("gives the command no stdin (it sees end of input at once)", async () => {
    expect(await registry.call("cat", null, {})).toBe("");
  });

  it("runs in the current working directory", async () => {
    expect(await registry.call("pwd", null, {})).toBe(`${process.cwd()}\n`);
  });

  it("treats ok_exit_codes as success", async () => {
    const argv = ["sh", "-c", "echo out; exit 1"];
    expect(await runCommand(argv, { tool: "t", callable: null, timeoutMs: 5_000, okExitCodes: [0, 1] })).toBe("out\n");
    await expect(runCommand(argv, { tool: "t", callable: null, timeoutMs: 5_000 })).rejects.toMatchObject({ exitCode: 1 });
  });
});
