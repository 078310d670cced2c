/**
 * SubprocessExecutor.start() spawns its child before the host's own setup (the configured deps,
 * search), so the child's node start-up overlaps it (issue 24). Observed without timing: a deps.txt
 * that is a FIFO holds the setup open until the test writes it; the child must already exist then.
 * A setup that fails takes the child started for it along. (Tool YAML is read on first use, not at
 * start: the last test writes a tool file after start() and the first tools.* use finds it.)
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { isPrepared } from "../../src/execution/prepare.js";
import { Session } from "../../src/session.js";
import { spareChildren } from "../../src/execution/subprocess/spare-children.js";
import { waitFor } from "../helpers/processes.js";
import { ensureBuilt, REPO } from "../cli/harness.js";

let dir: string;
let storage: FileStorage;
const executors: SubprocessExecutor[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-start-order-"));
  await mkdir(path.join(dir, "tools"));
  storage = new FileStorage({ basePath: path.join(dir, "base") });
});

afterEach(async () => {
  for (const e of executors.splice(0)) await e.close();
  await storage.close();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** A file at `at` whose reading blocks until `release()` writes its content. */
async function heldFile(at: string): Promise<{ release: (text: string) => Promise<void> }> {
  const fifo = path.join(dir, `${path.basename(at)}.fifo`);
  execFileSync("mkfifo", [fifo]);
  await mkdir(path.dirname(at), { recursive: true });
  await symlink(fifo, at);
  return { release: (text) => writeFile(fifo, text) };
}
const heldDepsList = () => heldFile(path.join(dir, "base", "deps.txt"));

/** Pids of this process's children running the executor's child.js. */
const ourNodeChildren = (): number[] =>
  execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes("child.js"))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
const ECHO_YAML = path.join(import.meta.dirname, "..", "..", "examples", "tools", "echo.yaml");

describe("SubprocessExecutor.start()", () => {
  it("spawns the child while the host's setup (the deps list) is still being read", async () => {
    const held = await heldDepsList();
    const executor = new SubprocessExecutor({ toolsPath: path.join(dir, "tools") });
    executors.push(executor);
    const started = executor.start(storage);
    // Without the early spawn the child would wait for the deps list, and this would time out.
    await waitFor(() => executor.pid !== undefined, "the child to be spawned during the setup");
    const pid = executor.pid;
    await held.release("");
    await started;
    expect(executor.pid).toBe(pid);
    expect((await executor.run("1 + 1")).value).toBe(2);
  });

  it("a session's first run prepares its code while the executor starts (Executor.prepareAhead), and a code that does not prepare still reports it", async () => {
    const held = await heldDepsList();
    const executor = new SubprocessExecutor({ toolsPath: path.join(dir, "tools") });
    executors.push(executor);
    const session = new Session({ storage, executor });
    const code = `const n${process.pid}: number = 20; n${process.pid} + 1`;
    expect(isPrepared(code)).toBe(false);
    const result = session.run(code);
    // The start is held on the deps list: without prepareAhead the code would wait for it.
    expect(isPrepared(code)).toBe(true);
    await held.release("");
    expect((await result).value).toBe(21);
    // A second session's first run whose code does not parse: prepareAhead leaves the report to the run.
    // (Its own storage: this one's deps list is the FIFO, read once.)
    const other = new Session({ storage: new FileStorage({ basePath: path.join(dir, "other") }), executor: new SubprocessExecutor({ toolsPath: path.join(dir, "tools") }) });
    try {
      const broken = await other.run("let = ;");
      expect(broken.error?.name).toBe("SyntaxError");
    } finally {
      await other.close();
    }
  });

  it("a setup that fails (a configured package that cannot be installed) leaves no child behind", async () => {
    await mkdir(path.join(dir, "base"), { recursive: true });
    await writeFile(path.join(dir, "base", "deps.txt"), "tcm-not-in-any-cache-xyz@1.0.0\n");
    const executor = new SubprocessExecutor({ toolsPath: path.join(dir, "tools") });
    executors.push(executor);
    // A spare an earlier test's session scheduled (spare-children.ts) would start during this one.
    await waitFor(() => spareChildren().scheduled === 0, "no spare child scheduled");
    const childrenBefore = ourNodeChildren();
    // npm offline: the package cannot be installed, so the setup fails (fast, no network).
    process.env.npm_config_offline = "true";
    try {
      await expect(executor.start(storage)).rejects.toThrow(/tcm-not-in-any-cache-xyz/);
    } finally {
      delete process.env.npm_config_offline;
    }
    expect(executor.pid).toBeUndefined();
    // The child spawned first (the test above shows it is) is gone with the failed setup.
    await waitFor(() => ourNodeChildren().filter((pid) => !childrenBefore.includes(pid)).length === 0, "the early child to be gone");
  });

  it("does not read tool files: a tool file written after start() is there at the first tools.* use", async () => {
    // A held file (a FIFO) no longer works here: tool files that are not regular files are refused.
    const executor = new SubprocessExecutor({ toolsPath: path.join(dir, "tools") });
    executors.push(executor);
    await executor.start(storage);
    await writeFile(path.join(dir, "tools", "echo.yaml"), await readFile(ECHO_YAML, "utf8"));
    expect((await executor.run("(await tools.list()).map((t) => t.name)")).value).toEqual(["echo"]);
  });
});

describe("import \"ts-code-mode\" starts its early child first", () => {
  it("before node:crypto is loaded (6–10 ms that would come before the spawn on a fresh process's critical path)", async () => {
    await ensureBuilt();
    const early = path.join(REPO, "dist", "execution", "subprocess", "early-start.js");
    const probe = `await import(${JSON.stringify(early)}); console.log(JSON.stringify(process.moduleLoadList.filter((m) => /^NativeModule (crypto|child_process)$/.test(m))));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", probe], { encoding: "utf8", env: { ...process.env, TS_CODE_MODE_EARLY_CHILD: "1" } });
    expect(JSON.parse(out.trim())).toEqual(["NativeModule child_process"]);
  });
});
