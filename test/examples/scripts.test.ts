/**
 * The runnable library examples (the docs pages link them), run as a user would: `node examples/<name>.mjs` from
 * the repository, importing the built package by its own name.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..", "..");
const run = async (script: string) => promisify(execFile)(process.execPath, [path.join(root, "examples", script)], { cwd: root, timeout: 60_000 });

describe("examples/*.mjs", () => {
  it("quickstart.mjs calls a tool, saves and invokes a workflow, round-trips an artifact, reports an error", async () => {
    const { stdout } = await run("quickstart.mjs");
    expect(stdout).toContain("tool: hello from echo\n");
    expect(stdout).toContain("workflow: HELLO FROM ECHO AGAIN\n");
    expect(stdout).toContain('artifact: {"shouted":"OK"}\n');
    expect(stdout).toMatch(/error: NotFoundError - tools\.ech\.say: Unknown tool: ech\. Did you mean: echo/);
  });

  it("workflow-across-sessions.mjs finds, describes and invokes a workflow from a second session", async () => {
    const { stdout } = await run("workflow-across-sessions.mjs");
    expect(stdout).toContain("found: fizzbuzz - FizzBuzz up to n, as one string.\n");
    expect(stdout).toContain('params: [{"name":"n","type":"number","required":false,"default":15}]\n');
    expect(stdout).toContain("result: 1 2 Fizz 4 Buzz\n");
  });

  it("executor-pool.mjs hands two sessions warm children that share no variables", async () => {
    const { stdout } = await run("executor-pool.mjs");
    expect(stdout).toBe("first session saw earlier variables: false\nsecond session saw earlier variables: false\n");
  });

  it("python-guest.mjs calls tools from Python, in parallel too, and gets bytes and exception names back", async () => {
    const { stdout } = await run("python-guest.mjs");
    expect(stdout).toContain("tool: HELLO FROM PYTHON\n");
    expect(stdout).toContain('parallel: ["hello","from","python"]\n');
    expect(stdout).toContain("bytes: hello from python\n");
    expect(stdout).toContain("error: KeyError\n");
    expect(stdout).toContain('workflow: Triple a number. ["n"] true\n');
    expect(stdout).toContain("workflow run: 12\n");
  });

  it("python-sandbox.mjs runs the same Python in Pyodide inside deno, and the host file is NotCapable", async () => {
    const { stdout } = await run("python-sandbox.mjs");
    expect(stdout).toBe('tool: HELLO FROM PYODIDE\nparallel: ["hello","from","pyodide"]\nhost file: NotCapable\n');
  });

  it("container-locked-down.mjs reads the workspace, is refused the shell by policy, has no network", async () => {
    const { stdout } = await run("container-locked-down.mjs");
    expect(stdout).toContain("lines: 3\n");
    expect(stdout).toMatch(/agent shell: ToolError - tools\.shell\.exec: shell\.exec is denied by policy/);
    expect(stdout).toContain("network: ENETUNREACH\n");
    expect(stdout).toContain("capabilities: filesystemIsolation, memoryLimit, networkIsolation, processIsolation, reset, timeout\n");
  });

  it("remote.mjs runs code on a spawned serve through RemoteExecutor and sees SessionLostError after it dies", async () => {
    const { stdout } = await run("remote.mjs");
    expect(stdout).toContain("remote: hello from the server\n");
    expect(stdout).toContain("variables persist: 22\n");
    expect(stdout).toContain("after the server died: SessionLostError\n");
  });

  it("skills-catalog.mjs prints the catalog and follows the csv-summary skill", async () => {
    const { stdout } = await run("skills-catalog.mjs");
    expect(stdout).toMatch(/^commit-message \| Write a git commit message.* \| csv-summary \| Summarise a CSV file/);
    expect(stdout).toContain('result: {"resources":["references/columns.md","scripts/summary.py"],"rows":2,"units":{"min":10,"max":30,"mean":20}}\n');
  });
});
