/**
 * SubprocessExecutor.start() spawns its child before the host's own setup (tool YAML, deps, search),
 * so the child's node start-up overlaps it (issue 24). Observed without timing: a tool file that is
 * a FIFO holds the tool loading open until the test writes it; the child must already exist then.
 * A setup that fails takes the child started for it along.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { waitFor } from "../helpers/processes.js";

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
  await rm(dir, { recursive: true, force: true });
});

/** A tool file whose reading blocks until `release()` writes its content. */
function heldToolFile(): { release: (yaml: string) => Promise<void> } {
  const fifo = path.join(dir, "echo.fifo");
  execFileSync("mkfifo", [fifo]);
  const linked = symlink(fifo, path.join(dir, "tools", "echo.yaml"));
  return { release: async (yaml) => (await linked, writeFile(fifo, yaml)) };
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const ECHO_YAML = path.join(import.meta.dirname, "..", "..", "examples", "tools", "echo.yaml");

describe("SubprocessExecutor.start()", () => {
  it("spawns the child while the tool YAML is still loading", async () => {
    const held = heldToolFile();
    const executor = new SubprocessExecutor({ toolsPath: path.join(dir, "tools") });
    executors.push(executor);
    const started = executor.start(storage);
    // Without the early spawn the child would wait for the tool file, and this would time out.
    await waitFor(() => executor.pid !== undefined, "the child to be spawned while tools load");
    const pid = executor.pid;
    await held.release(await readFile(ECHO_YAML, "utf8"));
    await started;
    expect(executor.pid).toBe(pid);
    const result = await executor.run("(await tools.list()).map((t) => t.name)");
    expect(result.value).toEqual(["echo"]);
  });

  it("a setup that fails (a broken tool file) leaves no child behind", async () => {
    const held = heldToolFile();
    const executor = new SubprocessExecutor({ toolsPath: path.join(dir, "tools") });
    executors.push(executor);
    const started = executor.start(storage);
    await waitFor(() => executor.pid !== undefined, "the child to be spawned while tools load");
    const pid = executor.pid!;
    await held.release("name: [not, a, name\n");
    await expect(started).rejects.toThrow(/echo\.yaml/);
    expect(executor.pid).toBeUndefined();
    await waitFor(() => !isAlive(pid), "the early child to be gone");
  });
});
