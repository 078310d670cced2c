/**
 * The resident command runner (issue 32.1's speed): every program a container session runs for
 * the host (CLI tools, toolables, skill scripts, runArgv) is started by one long-lived process in
 * the container instead of one engine exec each. It keeps the exec path's promises (argv never
 * parsed by a shell, stdout and stderr apart, exit codes, exit 124 at the deadline, output cap,
 * kill with everything started), and a runner that dies, or that the guest breaks, costs only
 * the calls in flight: the next call gets a fresh runner. One session (one container) for the file.
 */
import { cp, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContainerExecutor } from "../../../src/execution/container/executor.js";
import { Session } from "../../../src/session.js";
import { EXAMPLE_TOOLS_PATH } from "../../conformance/executor.js";
import { ensureTestImage, openContainerSession, type ContainerSessionFixture } from "../../helpers/container.js";
import { waitFor } from "../../helpers/processes.js";

let fx: ContainerSessionFixture;
let s: Session;
let ex: ContainerExecutor;

/** Lists "pid cmdline" of every process in the container (through an exec, not the runner). */
const PS = ["sh", "-c", 'for p in /proc/[0-9]*; do printf "%s " "${p#/proc/}"; tr "\\0" " " < $p/cmdline; echo; done'];

async function processes(): Promise<string[]> {
  return (await ex.exec(PS)).output.split("\n").filter(Boolean);
}

async function runnerPids(): Promise<number[]> {
  return (await processes()).filter((l) => l.includes("ts-code-mode resident command runner")).map((l) => Number(l.split(" ")[0]));
}

/** The pid of the process that started the calling program. */
async function parentOfCall(): Promise<number> {
  const r = await ex.runArgv(["sh", "-c", "echo $PPID"], { timeoutMs: 30_000 });
  expect(r.exitCode, r.stderr).toBe(0);
  return Number(r.stdout.trim());
}

beforeAll(async () => {
  fx = await openContainerSession("tcm-runner-", await ensureTestImage(), async (tools) => {
    await cp(EXAMPLE_TOOLS_PATH, tools, { recursive: true });
    await writeFile(path.join(tools, "nap.yaml"), "name: nap\ndescription: Sleep\ncommand: [sleep, '41']\n");
  }, { defaultTimeoutMs: 30_000 });
  ({ session: s, executor: ex } = fx);
}, 240_000);

afterAll(async () => {
  await fx?.close();
});

describe("the resident command runner", () => {
  it("starts the programs of the session: every call has the same parent, one runner process", async () => {
    const first = await parentOfCall();
    expect(await parentOfCall()).toBe(first);
    const r = await s.run('await tools.wc.lines({ files: ["/etc/passwd"] })');
    expect(r.error).toBeNull();
    expect(await runnerPids()).toEqual([first]);
  });

  describe.each([
    ["runner", 43, 47],
    ["exec", 53, 57],
  ] as const)("started by %s", (via, nap, nap2) => {
    it("keeps the promises: argv as is, stdout and stderr apart, exit codes, start errors", async () => {
      const words = "$(touch /tmp/pwned); `id` > x | y";
      const echo = await ex.runArgv(["echo", words], { timeoutMs: 30_000, via });
      expect(echo).toMatchObject({ stdout: `${words}\n`, exitCode: 0, stopped: null });
      expect((await ex.runArgv(["ls", "/tmp/pwned"], { timeoutMs: 30_000, via })).exitCode).not.toBe(0);
      const both = await ex.runArgv(["sh", "-c", "echo out; echo err >&2; exit 3"], { timeoutMs: 30_000, via });
      expect(both).toMatchObject({ stdout: "out\n", stderr: "err\n", exitCode: 3 });
      const missing = await ex.runArgv(["tcm-no-such-program"], { timeoutMs: 30_000, via });
      expect(missing.exitCode).toBe(127);
      expect(missing.startError?.code).toBe("ENOENT");
      const noDir = await ex.runArgv(["true"], { timeoutMs: 30_000, cwd: "/tcm-no-such-dir", via });
      expect(noDir.exitCode).toBe(127);
      // The runner names the cause; the engine's exec fails in its own words.
      if (via === "runner") expect(noDir.startError?.message).toMatch(/working directory \/tcm-no-such-dir does not exist/);
    });

    it("stops a program at its deadline with what it started (exit 124), and at the output cap", async () => {
      const late = await ex.runArgv(["sh", "-c", `sleep ${nap} & sleep ${nap}`], { timeoutMs: 500, via });
      expect(late.exitCode).toBe(124);
      expect(late.stderr).toMatch(/stopped at its timeout of 500 ms/);
      await waitFor(async () => !(await processes()).some((l) => l.includes(`sleep ${nap}`)), "both sleeps to be killed", 60_000, 300);
      const loud = await ex.runArgv(["sh", "-c", "while :; do echo yyyyyyyyyyyyyyyyyyyy; done"], { timeoutMs: 30_000, maxStdoutBytes: 100_000, via });
      expect(loud.stopped).toBe("cap");
      await waitFor(async () => !(await processes()).some((l) => l.includes("while :")), "the loud loop to be killed", 20_000, 300);
    });

    it("an abort kills the program and what left its process group", { timeout: 120_000 }, async () => {
      const ac = new AbortController();
      // The image has no setsid: node starts a sleep in a session (and group) of its own.
      const leave = `require("node:child_process").spawn("sleep", ["${nap2}"], { detached: true, stdio: "ignore" }).unref()`;
      const call = ex.runArgv(["sh", "-c", `node -e '${leave}'; sleep ${nap2}`], { timeoutMs: 60_000, signal: ac.signal, via });
      await waitFor(async () => (await processes()).filter((l) => new RegExp(`^\\d+ sleep ${nap2} $`).test(l)).length === 2, "both sleeps to run", 60_000, 200);
      ac.abort();
      expect((await call).stopped).toBe("abort");
      await waitFor(async () => !(await processes()).some((l) => l.includes(`sleep ${nap2}`)), "both sleeps to be killed", 60_000, 300);
    });
  });

  it("a runner that dies ends only the calls in flight; the next call gets a fresh runner", async () => {
    const before = await parentOfCall();
    const running = s.run("await tools.nap({})");
    await waitFor(async () => (await processes()).some((l) => l.includes("sleep 41")), "the tool to run", 20_000, 200);
    await ex.exec(["node", "-e", `process.kill(${before}, "SIGKILL")`]);
    const r = await running;
    expect(r.error?.message).toMatch(/the command runner inside the container stopped .* while 'sleep' ran/);
    // What the call started is killed by its marker, though its runner is gone.
    await waitFor(async () => !(await processes()).some((l) => l.includes("sleep 41")), "the orphaned sleep to be killed", 20_000, 300);
    const after = await parentOfCall();
    expect(after).not.toBe(before);
    expect(await runnerPids()).toEqual([after]);
  });

  it("a guest that writes junk into the runner's output costs only that runner", async () => {
    const before = await parentOfCall();
    // The guest runs as the runner's user, so it can open the runner's stdout: the host must
    // read what arrives there as hostile (a frame over the cap ends the runner).
    const r = await s.run(`(await import("node:fs")).writeFileSync("/proc/${before}/fd/1", Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3])); "written"`);
    expect(r.error).toBeNull();
    await waitFor(async () => !(await runnerPids()).includes(before), "the broken runner to end", 20_000, 200);
    const w = await s.run('(await tools.wc.lines({ files: ["/etc/passwd"] })).trim()');
    expect(w.error).toBeNull();
    expect(String(w.value)).toMatch(/\/etc\/passwd$/);
    expect(await parentOfCall()).not.toBe(before);
  });
});
