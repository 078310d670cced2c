/** `ts-code-mode run`: code from the argument or stdin, output streams, --json, exit codes. */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, initTemplate, tempDir, type InitTemplate } from "./harness.js";

let dir: string;
/** The base one `init` made (harness.ts's initTemplate): the tests that need one get a copy. */
let template: InitTemplate;

beforeAll(async () => {
  await ensureBuilt();
  template = await initTemplate();
}, 120_000);
afterAll(async () => {
  await template?.close();
});
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await cleanup(dir);
});

async function initBase(): Promise<void> {
  await template.copyTo(dir);
}

describe("run: code and output", () => {
  it("lists the example tools after init", async () => {
    await initBase();
    const r = await cli(["run", "--base", "base", "await tools.list()"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    for (const name of ["echo", "wc", "grep", "date"]) expect(r.stdout).toContain(`name: '${name}'`);
  });

  it("calls a tool recipe from a snippet and prints its output as the value", async () => {
    await initBase();
    const r = await cli(["run", "--base", "base", 'await tools.echo.say({ text: ["hi"] })'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("hi\n");
  });

  it("reads the code from stdin when there is no argument, and with '-'", async () => {
    const code = 'console.log("from stdin"); 6 * 7';
    const piped = await cli(["run", "--base", "base"], { cwd: dir, input: code });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toBe("from stdin\n42\n");
    const dash = await cli(["run", "--base", "base", "-"], { cwd: dir, input: "const t: number = 2; t + 1" });
    expect(dash.code).toBe(0);
    expect(dash.stdout).toBe("3\n");
  });

  it("runs a file named as the argument: `run /tmp/x.ts`, and a .py file as Python", async () => {
    await writeFile(path.join(dir, "x.ts"), "const n: number = 20;\nn + 1\n");
    const ts = await cli(["run", "--base", "base", path.join(dir, "x.ts")], { cwd: dir });
    expect(ts.stderr).toBe("");
    expect(ts.stdout).toBe("21\n");
    await writeFile(path.join(dir, "y.py"), "x = 6\nx * 7\n");
    const py = await cli(["run", "--base", "base", "./y.py"], { cwd: dir });
    expect(py.stderr).toBe("");
    expect(py.stdout).toBe("42\n");
    const missing = await cli(["run", "--base", "base", "nope.ts"], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no such file: nope.ts");
    // Code that is not one word ending in a file extension is still code.
    const code = await cli(["run", "--base", "base", "const o = { ts: 5 }; o.ts"], { cwd: dir });
    expect(code.stdout).toBe("5\n");
  });

  it.runIf(process.platform === "linux")("a --base that cannot be made (/proc/x: ENOENT with the parent there) is an error, not a spin at 100% CPU", async () => {
    // Node's recursive mkdir loops forever on this; the harness's timeout fails the test if it does.
    const r = await cli(["run", "--base", "/proc/tcm-no-such-base", "1 + 1"], { cwd: dir, timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: Could not create folder \/proc\/tcm-no-such-base\/workflows \(ENOENT\)/);
  }, 90_000);

  it("prints guest stdout to stdout and guest stderr to stderr", async () => {
    const r = await cli(["run", "--base", "base", 'console.log("out"); console.error("err"); "value"'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("out\nvalue\n");
    expect(r.stderr).toBe("err\n");
  });

  it("uses ./.code-mode as the base when --base is not given, and leaves none behind when nothing was saved", async () => {
    const r = await cli(["run", "1 + 1"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("2\n");
    expect(r.stderr).toBe("");
    expect(existsSync(path.join(dir, ".code-mode"))).toBe(false);
    const saved = await cli(["run", 'await artifacts.save("note.txt", "kept")'], { cwd: dir });
    expect(saved.code).toBe(0);
    expect(existsSync(path.join(dir, ".code-mode", "artifacts"))).toBe(true);
  });

  it("takes tools from --tools and storage from --storage over --base", async () => {
    await initBase();
    const code = "[(await tools.list()).map((t) => t.name).includes('echo'), (await workflows.list()).map((w) => w.name).includes('triple')]";
    const plain = await cli(["run", "--base", "empty", "--json", code], { cwd: dir });
    expect(JSON.parse(plain.stdout).value).toEqual([false, false]);
    const r = await cli(["run", "--base", "empty", "--tools", "base/tools", "--storage", "base", "--json", code], { cwd: dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).value).toEqual([true, true]);
  });
});

describe("run --json", () => {
  it("prints the whole ExecutionResult", async () => {
    const r = await cli(["run", "--base", "base", "--json", 'console.log("x"); ({ a: [1, "two", null] })'], { cwd: dir });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(result).sort()).toEqual(["display", "durationMs", "error", "ok", "stderr", "stdout", "value"]);
    expect(result).toMatchObject({ ok: true, value: { a: [1, "two", null] }, stdout: "x\n", stderr: "", error: null });
    expect(typeof result.durationMs).toBe("number");
  });

  it("leaves out a value JSON cannot hold and keeps its display", async () => {
    const r = await cli(["run", "--base", "base", "--json", "new Map([['k', 1n]])"], { cwd: dir });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(result).not.toHaveProperty("value");
    expect(result.display).toContain("Map(1)");
  });

  it("reports a failure in the JSON and exits 1", async () => {
    const r = await cli(["run", "--base", "base", "--json", 'throw new RangeError("bad")'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { name: "RangeError", message: "bad" } });
  });
});

describe("run: exit codes", () => {
  it("exits 1 and prints <name>: <message> when the code throws", async () => {
    const r = await cli(["run", "--base", "base", 'throw new RangeError("bad")'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("RangeError: bad\n");
  });

  it("reports an unknown tool with a suggestion and exits 1", async () => {
    await initBase();
    const r = await cli(["run", "--base", "base", 'await tools.ecko.say({ text: ["x"] })'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^NotFoundError: .*Unknown tool: ecko\. Did you mean: echo/);
  });

  it("stops a runaway loop at --timeout with a TimeoutError and exits 1", async () => {
    const r = await cli(["run", "--base", "base", "--timeout", "300", "while (true) {}"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^TimeoutError: .*300 ms/);
  });

  it("rejects a --timeout that is not a whole number of milliseconds with exit 2", async () => {
    for (const bad of ["abc", "0", "1.5"]) {
      const r = await cli(["run", "--base", "base", "--timeout", bad, "1"], { cwd: dir });
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toContain("--timeout");
      expect(r.stderr).toContain("whole number of milliseconds");
    }
  });

  it("rejects executors this version does not ship with exit 2", async () => {
    const unknown = await cli(["run", "--base", "base", "--executor", "nope", "1"], { cwd: dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown executor "nope" (available: subprocess, in-process, sandbox, container)');
  });

  for (const name of ["in-process", "subprocess", "sandbox"]) {
    it(`accepts --executor ${name}`, async () => {
      const r = await cli(["run", "--base", "base", "--executor", name, "'ok'"], { cwd: dir });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("ok\n");
    });
  }

  it("stops an asynchronous runaway with the default (subprocess) executor", async () => {
    const r = await cli(["run", "--base", "base", "--timeout", "300", "await null; while (true) {}"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("TimeoutError");
  });

  it("exits 2 for an unknown option, extra arguments, or no code at all", async () => {
    const unknownOption = await cli(["run", "--bogus", "1"], { cwd: dir });
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toContain("unknown option '--bogus'");
    const extra = await cli(["run", "1", "2"], { cwd: dir });
    expect(extra.code).toBe(2);
    const none = await cli(["run", "--base", "base"], { cwd: dir, input: "" });
    expect(none.code).toBe(2);
    expect(none.stderr).toBe("error: no code given: stdin was empty\n");
  });

  it("shows help with examples and exits 0", async () => {
    const r = await cli(["run", "--help"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: ts-code-mode run");
    expect(r.stdout).toContain("Examples:");
    expect(r.stdout).toContain("--executor <name>");
  });
});
