/**
 * The child a CLI `run` starts before it loads anything else (src/execution/subprocess/node-child.ts,
 * issue 42 cold start): the session's ChildHandle takes it only when it is the very child it would
 * start, gets what it sent before anyone listened (its "ready"), and ends it otherwise. Observed
 * through real processes: pids, and the child's own ready message.
 */
import { afterEach, describe, expect, it } from "vitest";
import { isAlive } from "../mcp/harness.js";
import { ChildHandle, type SpawnOptions } from "../../src/execution/subprocess/child-process.js";
import { earlyChild, startEarlyChild, stringEnv, takeEarlyChild, type LaunchOptions } from "../../src/execution/subprocess/node-child.js";
import { waitFor } from "../helpers/processes.js";

const handles: ChildHandle[] = [];
const launchOptions = (extraEnv: Record<string, string> = {}): LaunchOptions => ({
  maxMemoryMb: undefined,
  permissions: undefined,
  env: { ...stringEnv(process.env), ...extraEnv },
  cwd: process.cwd(),
});
const spawnOptions = (options: LaunchOptions): SpawnOptions => ({ ...options, onMessage: () => undefined });

/** The harness's liveness check (EPERM counts as alive). */
const alive = isAlive;

afterEach(async () => {
  // An early child a test left untaken: taking it with another configuration ends it.
  takeEarlyChild(launchOptions({ TCM_TEST_NO_MATCH: "1" }));
  for (const h of handles.splice(0)) await h.kill();
});

describe("the early child", () => {
  it("is taken by the first ChildHandle of its configuration, which gets the ready it sent before anyone listened", async () => {
    const options = launchOptions();
    startEarlyChild(options);
    const early = earlyChild();
    expect(early?.pid).toBeTypeOf("number");
    // Its "ready" arrives while nobody listens but the holder.
    await waitFor(() => (earlyChild()?.held ?? 0) >= 1, "the early child's ready to be held", 60_000);
    const handle = new ChildHandle(spawnOptions(options));
    handles.push(handle);
    expect(handle.pid).toBe(early?.pid);
    expect(earlyChild()).toBeNull();
    await handle.ready;
    expect(handle.isReady).toBe(true);
  });

  it("of another configuration is killed by the first ChildHandle, which starts its own", async () => {
    startEarlyChild(launchOptions({ TCM_EARLY_TEST: "a" }));
    const earlyPid = earlyChild()?.pid as number;
    const handle = new ChildHandle(spawnOptions(launchOptions({ TCM_EARLY_TEST: "b" })));
    handles.push(handle);
    expect(handle.pid).not.toBe(earlyPid);
    await handle.ready;
    await waitFor(() => !alive(earlyPid), "the early child that does not fit to be gone", 30_000);
  });

  it("started before its import folders were known is taken by a handle that differs only in them", async () => {
    // What `import "ts-code-mode"` starts (early-start.ts): no folders yet; the session's are sent when it is taken.
    startEarlyChild(launchOptions(), { basesLater: true });
    const earlyPid = earlyChild()?.pid as number;
    const bases = ["/tmp/tcm-early-bases"];
    const handle = new ChildHandle(spawnOptions({ ...launchOptions({ TS_CODE_MODE_IMPORT_BASES: JSON.stringify(bases) }), importBases: bases }));
    handles.push(handle);
    expect(handle.pid).toBe(earlyPid);
    await handle.ready;
  });

  it("that differs in more than its import folders is not taken, even when they come later", async () => {
    startEarlyChild(launchOptions({ TCM_EARLY_TEST: "a" }), { basesLater: true });
    const earlyPid = earlyChild()?.pid as number;
    const handle = new ChildHandle(spawnOptions(launchOptions({ TCM_EARLY_TEST: "b", TS_CODE_MODE_IMPORT_BASES: "[]" })));
    handles.push(handle);
    expect(handle.pid).not.toBe(earlyPid);
    await waitFor(() => !alive(earlyPid), "the early child that does not fit to be gone", 30_000);
  });

  it("that nobody takes within its idle limit is killed", async () => {
    startEarlyChild(launchOptions(), { idleMs: 200 });
    const earlyPid = earlyChild()?.pid as number;
    await waitFor(() => earlyChild() === null && !alive(earlyPid), "the idle early child to be killed", 30_000);
  });

  it("that died before it was taken is not handed out", async () => {
    const options = launchOptions();
    startEarlyChild(options);
    const earlyPid = earlyChild()?.pid as number;
    process.kill(earlyPid, "SIGKILL");
    // Its exit is held like any event; the handle then starts a child of its own.
    await waitFor(() => (earlyChild()?.held ?? 0) >= 1, "the early child's exit to be held", 30_000);
    const handle = new ChildHandle(spawnOptions(options));
    handles.push(handle);
    expect(handle.pid).not.toBe(earlyPid);
    await handle.ready;
    expect(handle.isAlive).toBe(true);
  });
});
