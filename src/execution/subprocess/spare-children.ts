/**
 * Warm session starts without configuring anything (issue 42): once a SubprocessExecutor of some
 * configuration has started a child in this process, one more child of exactly that configuration
 * (same node flags, environment, working folder, import folders) is started in the background and
 * kept ready, so the next session of that configuration binds a running child instead of waiting
 * ~70–150 ms for node to start. ExecutorPool does the same on request (`serve`, `mcp --http`); this
 * is the default for every long-lived host (a library, `mcp`, adapters).
 *
 * The rules that keep it cheap and leak-free:
 *   - bounded: one spare per configuration, at most MAX_CONFIGS configurations (the oldest spare is
 *     killed to make room);
 *   - released when idle: a spare nobody takes within SPARE_IDLE_MS of being ready is killed (an
 *     unref'd timer);
 *   - never keeps the host alive: a spare's process, IPC channel and pipes are unref'd until a
 *     session takes it, and like every child it carries the parent-death signal (../freeze.ts), so
 *     it dies with the host however the host ends;
 *   - a session that starts while the spare is still starting takes that one and waits for it,
 *     rather than starting a second child;
 *   - short-lived hosts (the CLI's `run`, `tools`, ...) turn it off (setSpareChildren(false)): they
 *     would pay for a spare they never use.
 */
import type { GuestHandle, SpawnOptions } from "./child-process.js";
import type { GuestToHost } from "../rpc/protocol.js";

/** How long an untaken spare is kept. */
export const SPARE_IDLE_MS = 30_000;
/** How long after a child became ready its replacement spare is started (off the session's first result). */
const REFILL_DELAY_MS = 50;
/** Configurations with a spare at once. */
const MAX_CONFIGS = 2;

/** What a spare needs of a guest beyond GuestHandle: not holding the host's event loop while idle. */
export interface SpareableGuest extends GuestHandle {
  keepHostAlive(keep: boolean): void;
}

interface Spare {
  child: SpareableGuest;
  /** The session's message listener once taken; messages before that (there are none from an idle child.js) are dropped. */
  listener: ((message: GuestToHost) => void) | null;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
}

let enabled = true;
let idleMs = SPARE_IDLE_MS;
const spares = new Map<string, Spare>();
const refillTimers = new Map<string, ReturnType<typeof setTimeout>>();

/**
 * Turn implicit spares on or off for this process (the CLI turns them off for its short-lived
 * commands); `idleMs`: how long an untaken spare is kept (default SPARE_IDLE_MS). Off kills the
 * spares kept now.
 */
export function setSpareChildren(on: boolean, options: { idleMs?: number } = {}): void {
  enabled = on;
  idleMs = options.idleMs ?? SPARE_IDLE_MS;
  if (!on) {
    for (const timer of refillTimers.values()) clearTimeout(timer);
    refillTimers.clear();
    for (const key of [...spares.keys()]) drop(key);
  }
}

/** Spares kept now: started and ready, or still starting (tests, benchmarks, diagnostics). */
export function spareChildren(): { ready: number; starting: number; scheduled: number } {
  let ready = 0;
  for (const { child } of spares.values()) if (child.isReady && child.isAlive) ready++;
  return { ready, starting: spares.size - ready, scheduled: refillTimers.size };
}

/**
 * A child for `options`: the spare of this configuration when there is one (ready, or still
 * starting: the caller waits for its `ready`), else a new one from `launch`. `replenish()` starts
 * the next spare of this configuration a moment after the child is ready; the executor calls it
 * once the session's start succeeded, so a failed setup leaves no spare behind.
 */
export function launchWithSpare(options: SpawnOptions, launch: (options: SpawnOptions) => SpareableGuest): { child: GuestHandle; replenish: () => void } {
  if (!enabled && spares.size === 0) return { child: launch(options), replenish: () => undefined };
  const key = configKey(options);
  const spare = spares.get(key);
  let child: SpareableGuest;
  if (spare && spare.child.isAlive) {
    spares.delete(key);
    clearTimeout(spare.idleTimer);
    spare.listener = options.onMessage;
    spare.child.keepHostAlive(true);
    child = spare.child;
  } else {
    if (spare) drop(key);
    child = launch(options);
  }
  const replenish = () =>
    void child.ready.then(
      () => refillSoon(key, options, launch),
      () => undefined,
    );
  return { child, replenish };
}

function refillSoon(key: string, options: SpawnOptions, launch: (options: SpawnOptions) => SpareableGuest): void {
  if (!enabled || spares.has(key) || refillTimers.has(key)) return;
  const timer = setTimeout(() => {
    refillTimers.delete(key);
    if (!enabled || spares.has(key)) return;
    keep(key, options, launch);
  }, REFILL_DELAY_MS);
  timer.unref();
  refillTimers.set(key, timer);
}

/** Starts a spare for `key` and keeps it until taken, idle for idleMs after ready, or dead. */
function keep(key: string, options: Omit<SpawnOptions, "onMessage">, launch: (options: SpawnOptions) => SpareableGuest): void {
  makeRoom();
  const spare: Spare = { child: null as unknown as SpareableGuest, listener: null, idleTimer: undefined };
  try {
    spare.child = launch({ ...options, onMessage: (m) => spare.listener?.(m) });
  } catch {
    return; // a spawn that fails at once (EAGAIN, ...): the next session starts its child the ordinary way
  }
  spare.child.keepHostAlive(false);
  spares.set(key, spare);
  // Idle counts from ready: a spare slow to start on a loaded machine is not dropped before it could serve.
  void spare.child.ready.then(
    () => {
      if (spares.get(key) !== spare) return;
      spare.idleTimer = setTimeout(() => {
        if (spares.get(key) === spare) drop(key);
      }, idleMs);
      spare.idleTimer.unref();
    },
    () => undefined,
  );
  // A spare that dies while idle (killed from outside, failed to start) is forgotten, not handed out.
  void spare.child.exited.then(() => {
    if (spares.get(key) !== spare) return;
    spares.delete(key);
    clearTimeout(spare.idleTimer);
  });
}

function makeRoom(): void {
  while (spares.size >= MAX_CONFIGS) {
    const [oldest] = spares.keys();
    if (oldest === undefined) return;
    drop(oldest);
  }
}

function drop(key: string): void {
  const spare = spares.get(key);
  if (!spare) return;
  spares.delete(key);
  clearTimeout(spare.idleTimer);
  void spare.child.kill();
}

/** Everything the child is started with, so a spare (or the CLI's early child) is handed only to a session that would have started the very same child. */
export function configKey(options: Omit<SpawnOptions, "onMessage">): string {
  const env = Object.keys(options.env)
    .sort()
    .map((k) => [k, options.env[k]]);
  return JSON.stringify([options.cwd, options.maxMemoryMb ?? null, options.permissions ?? null, options.program ?? null, options.shared ?? false, env]);
}
