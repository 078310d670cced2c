/**
 * SubprocessExecutor freezes its child between runs (issue 13, principle 3: after a run ends,
 * nothing of the guest executes until the next run): code on Node's own timers and a `setsid`
 * process the guest started stop when the run's result is out and go on at the next run; reset()
 * and close() still end everything while it is frozen. Real child processes; effects are read
 * from files the guest's code appends to, states from `ps`.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { randomInt } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deathSignalLauncher } from "../../src/execution/freeze.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { processesWith, waitFor } from "../helpers/processes.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function size(file: string): Promise<number> {
  return (await stat(file).catch(() => ({ size: 0 }))).size;
}

it("the death-signal launcher is found without running it, exactly where setpriv's --help offers --pdeathsig", () => {
  // What the old check ran; the launcher now reads the binary instead (no synchronous spawn).
  const setpriv = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map((d) => path.join(d, "setpriv")).find((f) => existsSync(f));
  const offers = process.platform === "linux" && setpriv !== undefined && execFileSync(setpriv, ["--help"], { encoding: "utf8" }).includes("--pdeathsig");
  expect(deathSignalLauncher()).toBe(offers ? setpriv : null);
  // The machines we test on have it: the freezing tests below must not be skipped silently.
  expect(process.platform !== "linux" || offers).toBe(true);
});

describe.runIf(deathSignalLauncher() !== null)("SubprocessExecutor: the child is frozen between runs", () => {
  let dir: string;
  let session: Session;
  let executor: SubprocessExecutor;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-sub-freeze-"));
    executor = new SubprocessExecutor({ defaultTimeoutMs: 10_000 });
    session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "store") }), executor });
    await session.start();
  });

  afterEach(async () => {
    await session.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  async function value(code: string): Promise<unknown> {
    const r = await session.run(code);
    expect(r.error).toBeNull();
    return r.value;
  }

  /** The child is frozen one host turn after its result (freezeSoon), so tests wait for it. */
  async function childFrozen(): Promise<void> {
    const pid = executor.pid;
    await waitFor(() => processesWith(String(pid)).find((p) => p.pid === pid)?.state.startsWith("T") === true, "the child to be frozen");
  }

  it("an interval on Node's own timers writes nothing between the run's result and the next run, then goes on", async () => {
    const file = path.join(dir, "ticks.txt");
    expect(
      await value(`
        const fs = require("node:fs");
        globalThis.keep = require("node:timers").setInterval(() => fs.appendFileSync(${JSON.stringify(file)}, "x"), 5);
        await new Promise((r) => setTimeout(r, 60));
        "started"`),
    ).toBe("started");
    await childFrozen();
    const atResult = await size(file);
    expect(atResult).toBeGreaterThan(0);
    await sleep(300);
    expect(await size(file)).toBe(atResult);
    // The next run lets it go on: the session works and keeps its state.
    expect(await value(`await new Promise((r) => setTimeout(r, 60)); typeof keep`)).toBe("object");
    expect(await size(file)).toBeGreaterThan(atResult);
  });

  it("setsid processes the guest started (a child, and a daemon that double-forked away) are frozen, not killed, between runs and go on at the next run", async () => {
    const file = path.join(dir, "loop.txt");
    const tag = `tcm-freeze-${randomInt(1e9)}`;
    // exec -a names each loop's shell so ps finds it; each appends to the file every 10 ms.
    const loop = (n: number) => `exec -a ${tag}-${n} sh -c 'while :; do echo ${n} >> ${file}; sleep 0.01; done'`;
    expect(
      await value(`
        const cp = require("node:child_process");
        cp.spawn("setsid", ["bash", "-c", ${JSON.stringify(loop(1))}], { stdio: "ignore" });
        cp.spawn("sh", ["-c", ${JSON.stringify(`setsid bash -c "${loop(2)}" >/dev/null 2>&1 & exit 0`)}], { stdio: "ignore" });
        await new Promise((r) => setTimeout(r, 200));
        "started"`),
    ).toBe("started");
    expect(processesWith(`${tag}-1`).length).toBeGreaterThan(0);
    expect(processesWith(`${tag}-2`).length).toBeGreaterThan(0);
    await childFrozen();
    expect(processesWith(tag).every((p) => p.state.startsWith("T"))).toBe(true);
    const atResult = await size(file);
    expect(atResult).toBeGreaterThan(0);
    await sleep(300);
    expect(await size(file)).toBe(atResult);
    expect(await value("await new Promise((r) => setTimeout(r, 150)); 'again'")).toBe("again");
    expect(await size(file)).toBeGreaterThan(atResult);
    expect(processesWith(tag).length).toBeGreaterThan(0);
  });

  it("reset() and close() end the frozen child and the frozen processes it started", async () => {
    const tag = `tcm-freeze-${randomInt(1e9)}`;
    const start = (n: number) => `require("node:child_process").spawn("setsid", ["bash", "-c", "exec -a ${tag}-${n} sleep 60"], { stdio: "ignore" }); await new Promise((r) => setTimeout(r, 100)); "started"`;
    expect(await value(start(1))).toBe("started");
    const child = executor.pid;
    expect(child).toBeDefined();
    await waitFor(() => processesWith(`${tag}-1`).length === 1, "the sleep to start");
    await childFrozen();
    expect(processesWith(`${tag}-1`)[0]?.state).toMatch(/^T/);
    await session.reset();
    expect(processesWith(`${tag}-1`)).toEqual([]);
    expect(processesWith(String(child)).filter((p) => p.pid === child)).toEqual([]);
    expect(await value(start(2))).toBe("started");
    await waitFor(() => processesWith(`${tag}-2`).length === 1, "the second sleep to start");
    await session.close();
    expect(processesWith(`${tag}-2`)).toEqual([]);
  });

  it("a frozen child dies with its host, even when the host is SIGKILLed", async () => {
    // A host in its own process: the built package, one run, then it waits to be killed.
    const index = pathToFileURL(path.resolve("dist/index.js")).href;
    const script = `
      import { Session, SubprocessExecutor, FileStorage } from ${JSON.stringify(index)};
      const executor = new SubprocessExecutor();
      const session = new Session({ storage: new FileStorage({ basePath: ${JSON.stringify(path.join(dir, "host-store"))} }), executor });
      await session.start();
      await session.run("1");
      console.log(JSON.stringify({ pid: executor.pid }));
      setInterval(() => {}, 1000);`;
    const host = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = once(host, "exit").then(([code]) => {
      throw new Error(`the host exited early (code ${String(code)})`);
    });
    const [line] = (await Promise.race([once(host.stdout, "data"), exited])) as [Buffer];
    const { pid } = JSON.parse(line.toString("utf8")) as { pid: number };
    const state = () => processesWith(String(pid)).find((p) => p.pid === pid)?.state;
    await waitFor(() => state()?.startsWith("T") === true, "the child to be frozen");
    host.kill("SIGKILL");
    await waitFor(() => state() === undefined, "the frozen child to end with its host");
  });
});
