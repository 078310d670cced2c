/**
 * real-python.ts: a Python started through a shim (pyenv's `python3` is a bash script running
 * `pyenv exec`) is asked once where the real interpreter is, and later spawns start that file.
 * The shim here is a script that logs each start and then runs the real interpreter, so the
 * count of log lines is the count of shim starts.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { cachedPythonAnswers, realPython, withRealPython } from "../../src/real-python.js";
import { runCommand } from "../../src/tools/adapters/cli/run.js";

const root = mkdtempSync(path.join(tmpdir(), "tcm-real-python-"));
afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 5 }));

/** The interpreter PATH's python3 really is (through whatever shim this machine has). */
const REAL = execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim();

/** A folder whose python3 is a logging shim in front of the real interpreter. */
function shimFolder(name: string): { bin: string; log: string; env: Record<string, string> } {
  const bin = path.join(root, name);
  mkdirSync(bin);
  const log = path.join(bin, "starts.log");
  writeFileSync(path.join(bin, "python3"), `#!/bin/sh\necho "$PWD" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(REAL)} "$@"\n`);
  chmodSync(path.join(bin, "python3"), 0o755);
  return { bin, log, env: { PATH: `${bin}${path.delimiter}/usr/bin${path.delimiter}/bin` } };
}
const starts = (log: string) => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0);

describe("the real Python behind a shim", () => {
  it("asks the shim once per folder and environment, then names the real interpreter", async () => {
    const { log, env } = shimFolder("once");
    const a = mkdtempSync(path.join(root, "a-"));
    expect(await withRealPython(["python3", "x.py"], { cwd: a, env })).toEqual([REAL, "x.py"]);
    expect(await withRealPython(["python3", "y.py"], { cwd: a, env })).toEqual([REAL, "y.py"]);
    expect(starts(log)).toBe(1);
    // Another folder may hold another .python-version: asked again.
    const b = mkdtempSync(path.join(root, "b-"));
    expect(await realPython("python3", { cwd: b, env })).toBe(REAL);
    expect(starts(log)).toBe(2);
    // So may another PYENV_VERSION.
    expect(await realPython("python3", { cwd: b, env: { ...env, PYENV_VERSION: "system" } })).toBe(REAL);
    expect(starts(log)).toBe(3);
  });

  it("keeps at most 256 answers, oldest forgotten first (a folder per session would grow it for good)", async () => {
    const env = { PATH: path.join(root, "nowhere") };
    for (let i = 0; i < 300; i++) await realPython("python3", { cwd: path.join(root, `session-${i}`), env });
    expect(cachedPythonAnswers()).toBe(256);
  });

  it("leaves a python that is no script, a missing one and other commands as they are", async () => {
    const bin = path.join(root, "plain");
    mkdirSync(bin);
    symlinkSync(REAL, path.join(bin, "python3"));
    const cwd = root;
    expect(await withRealPython(["python3", "-c", "1"], { cwd, env: { PATH: bin } })).toEqual(["python3", "-c", "1"]);
    expect(await withRealPython(["python3", "-c", "1"], { cwd, env: { PATH: path.join(root, "nowhere") } })).toEqual(["python3", "-c", "1"]);
    expect(await withRealPython(["node", "-e", "1"], { cwd, env: shimFolder("other").env })).toEqual(["node", "-e", "1"]);
  });

  it("a shim that does not answer like a Python leaves the command unchanged", async () => {
    const bin = path.join(root, "broken");
    mkdirSync(bin);
    writeFileSync(path.join(bin, "python3"), "#!/bin/sh\necho 'pyenv: python3: command not found' >&2\nexit 127\n");
    chmodSync(path.join(bin, "python3"), 0o755);
    expect(await realPython("python3", { cwd: root, env: { PATH: bin } })).toBe("python3");
  });

  it("an executable file starting #!/usr/bin/env python3 is started by the real interpreter; a non-executable one is not", async () => {
    const { log, env } = shimFolder("shebang");
    const tool = path.join(root, "tool.py");
    writeFileSync(tool, "#!/usr/bin/env python3\nprint('hi')\n");
    chmodSync(tool, 0o755);
    expect(await withRealPython([tool, "--discover"], { cwd: root, env })).toEqual([REAL, tool, "--discover"]);
    const plain = path.join(root, "plain.py");
    writeFileSync(plain, "#!/usr/bin/env python3\nprint('hi')\n");
    expect(await withRealPython([plain], { cwd: root, env })).toEqual([plain]);
    expect(starts(log)).toBe(1);
  });

  it("runCommand (skill scripts, workflow signatures, cli tools) starts the shim once for many calls", async () => {
    const { log, env } = shimFolder("run");
    const saved = process.env.PATH;
    process.env.PATH = `${env.PATH}${path.delimiter}${saved ?? ""}`;
    try {
      const cwd = mkdtempSync(path.join(root, "run-"));
      for (let i = 0; i < 3; i++) {
        expect(await runCommand(["python3", "-c", `print(${i} * 2)`], { tool: "t", callable: null, timeoutMs: 60_000, cwd })).toBe(`${i * 2}\n`);
      }
    } finally {
      process.env.PATH = saved;
    }
    expect(starts(log)).toBe(1);
  });
});
