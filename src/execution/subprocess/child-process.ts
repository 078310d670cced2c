/**
 * One child `node` process running child.js: spawning it, waiting until it is ready, noticing how
 * it ended, holding it to its memory cap, and ending it together with every process it started.
 * The executor owns the policy (when to restart, what to tell the agent); this module only owns
 * the process.
 */
import type { ChildProcess } from "node:child_process";
import type { GuestToHost, HostToGuest } from "../rpc/protocol.js";
import type { WireError } from "../wire-error.js";
import { canWatchMemory, MemoryWatch } from "./memory-watch.js";
import { checkGuestMessage } from "./messages.js";
import { Freezer } from "../freeze.js";
import { awaitProcessesGone, ChildrenProbe, killGuestProcesses, stopGuestProcesses } from "./process-tree.js";
import { FrameChannel } from "./frames.js";
import { keepHostAlive, startGuest, takeEarlyChild } from "./node-child.js";
import type { Readable, Writable } from "node:stream";

export interface ChildPermissions {
  /** Folders (or files) the child may read. Its own code is always readable. */
  fsRead?: string[];
  /** Folders (or files) the child may write. */
  fsWrite?: string[];
  /** May the child spawn processes? Default false. */
  childProcess?: boolean;
}

export interface SpawnOptions {
  maxMemoryMb: number | undefined;
  permissions: ChildPermissions | undefined;
  env: Record<string, string>;
  cwd: string;
  onMessage(message: GuestToHost): void;
  /** A guest that is not child.js under this Node (the Python guest); default: child.js over Node's IPC channel. */
  program?: GuestProgram;
  /** The folders the guest imports packages from, in order (also in env as TS_CODE_MODE_IMPORT_BASES); a shared child's session is opened with them. */
  importBases?: string[];
  /**
   * A child that holds several sessions (./shared-children.ts): it opens a context per session on
   * the host's word and is never interrupted with SIGINT, which would stop whichever session's
   * script happened to run; each run's synchronous code is bounded by vm's own timeout instead.
   */
  shared?: boolean;
}

/**
 * Another guest program: `command args` speaking the same protocol in frames (./frames.ts) on
 * fds 3 (to it) and 4 (from it). Process groups, the /proc sweep, freezing, the death signal and
 * the memory watch apply to it exactly as to child.js.
 */
export interface GuestProgram {
  command: string;
  args: string[];
}

/** How a child ended, for the error the agent sees. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last few KB the process wrote to its real stderr (V8's out-of-memory report lands here). */
  stderrTail: string;
  /** An uncaught exception the child reported before exiting. */
  fatal: WireError | null;
  /** Set when the host killed the child for going over maxMemoryMb: its own resident memory then. */
  memoryExceededMb: number | null;
  /** Set when the host killed the child for sending a message outside the protocol: what was wrong. */
  protocolViolation: string | null;
  /**
   * A shared child (./shared-children.ts) that ended for another session's sake: why, as the
   * sessions that lost their context with it are told.
   */
  lostWith?: string;
}

/**
 * What the executor's policy (executor.ts) needs of a running guest: a child process here, a
 * container in ../container/guest.ts. Both run the same guest runtime (guest-runtime.ts).
 */
export interface GuestHandle {
  readonly ready: Promise<void>;
  readonly exited: Promise<ChildExit>;
  readonly isAlive: boolean;
  readonly isReady: boolean;
  readonly pid: number | undefined;
  /** Throws when the guest is gone. */
  send(message: HostToGuest): void;
  freeze(): boolean;
  resume(): void;
  /** Ask the guest to stop its current run (SIGINT); false when this guest cannot be interrupted. */
  interrupt(): boolean;
  /** Stop the guest and everything it started; resolves once it is gone. Safe to call twice. */
  kill(): Promise<ChildExit>;
}

/** Starts a guest; the subprocess executor's default starts a ChildHandle. */
export type GuestLauncher = (options: SpawnOptions) => GuestHandle;

export const STDERR_TAIL_CHARS = 8_192;

export { childScriptPath, stringEnv } from "./node-child.js";

export class ChildHandle implements GuestHandle {
  readonly process: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<ChildExit>;
  private stderrTail = "";
  private fatal: WireError | null = null;
  private memoryExceededMb: number | null = null;
  private protocolViolation: string | null = null;
  private alive = true;
  private isReadyFlag = false;
  /** Inherited by every process the child starts, so they can be found when it is killed. */
  private readonly marker: string;
  private readonly memoryWatch: MemoryWatch | null = null;
  private killed = false;
  private readonly freezer: Freezer;
  /** Tells the freezer whether the child ever started a process (then /proc is swept for them). */
  private readonly childrenProbe: ChildrenProbe | null;

  /** The framed channel of a GuestProgram; null for child.js, which uses Node's IPC channel. */
  private frames: FrameChannel | null = null;

  constructor(options: SpawnOptions) {
    // The child the CLI's bin started for this very configuration (./node-child.ts), else a new one.
    const early = options.program ? null : takeEarlyChild(options);
    const { process: child, marker, freezable } = early?.started ?? startGuest(options);
    this.process = child;
    this.marker = marker;
    const pid = this.process.pid;
    // Without the permission to start processes the child has no relatives, and /proc is not read.
    const mayStart = !options.permissions || options.permissions.childProcess === true;
    const probe = mayStart && freezable && pid !== undefined ? new ChildrenProbe(pid) : null;
    this.childrenProbe = probe;
    this.freezer = new Freezer(freezable && pid !== undefined ? () => (this.alive ? stopGuestProcesses(pid, this.marker, () => probe?.hasHadChildren() ?? false) : []) : null);
    if (options.maxMemoryMb !== undefined && canWatchMemory && pid !== undefined) {
      this.memoryWatch = new MemoryWatch(pid, options.maxMemoryMb, (mb) => {
        this.memoryExceededMb = mb;
        void this.kill();
      });
    }
    this.process.stdout?.resume();
    this.process.stderr?.setEncoding("utf8");
    this.process.stderr?.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    this.exited = new Promise((resolve) => {
      this.process.once("exit", (code, signal) => {
        this.alive = false;
        this.memoryWatch?.stop();
        // What it started may still be stopped: kill() finds it by group, session and marker.
        this.freezer.forget();
        this.childrenProbe?.close();
        // Let the last stderr bytes (an OOM report) arrive before describing the exit.
        setImmediate(() =>
          resolve({
            code,
            signal,
            stderrTail: this.stderrTail,
            fatal: this.fatal,
            memoryExceededMb: this.memoryExceededMb,
            protocolViolation: this.protocolViolation,
          }),
        );
      });
    });
    // Only the agent's code (through process.send, or writes to fd 4) can break the protocol: the child is not to be trusted any more.
    const violated = (problem: string) => {
      this.protocolViolation ??= problem;
      void this.kill();
    };
    this.ready = new Promise((resolve, reject) => {
      this.process.once("error", reject);
      void this.exited.then((exit) => reject(new ChildStartError(exit)));
      const receive = (raw: unknown) => {
        const checked = checkGuestMessage(raw);
        if (!checked.ok) return violated(checked.problem);
        const message = checked.message;
        if (message.type === "ready") {
          this.isReadyFlag = true;
          resolve();
        } else if (message.type === "fatal") this.fatal = message.error;
        else options.onMessage(message);
      };
      if (!options.program) this.process.on("message", receive);
      else {
        const [toGuest, fromGuest] = [this.process.stdio[3] as Writable | null, this.process.stdio[4] as Readable | null];
        if (toGuest && fromGuest) this.frames = new FrameChannel(fromGuest, toGuest, (m) => receive(withResultValue(m)), violated);
      }
    });
    // Nobody may be awaiting `ready` when the child dies later; that is reported through `exited`.
    this.ready.catch(() => undefined);
    // Everything listens now: what the early child sent meanwhile (its "ready") is handed over.
    early?.release();
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  get isAlive(): boolean {
    return this.alive;
  }

  /** The child said it is ready (so `ready` has resolved). */
  get isReady(): boolean {
    return this.isReadyFlag;
  }

  /**
   * Whether this child keeps the host's event loop alive (its process, IPC channel and pipes): a
   * spare nobody took yet must not (./spare-children.ts); a session's child does, as before.
   */
  keepHostAlive(keep: boolean): void {
    keepHostAlive(this.process, keep);
  }

  /** Throws when the channel is closed (the child died). */
  send(message: HostToGuest): void {
    if (this.frames) {
      if (!this.alive) throw new Error("the executor process is not running");
      return this.frames.send(message);
    }
    if (!this.alive || !this.process.connected) throw new Error("the executor process is not running");
    this.process.send(message);
  }

  /** Ask the guest to stop the code it runs (SIGINT to the guest alone); false when it is gone. */
  interrupt(): boolean {
    if (!this.alive || this.process.pid === undefined) return false;
    try {
      process.kill(this.process.pid, "SIGINT");
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Stop the child and every process it started (SIGSTOP, see ../freeze.ts and process-tree.ts)
   * until resume(): between runs nothing of the guest executes — not Node's own timers, sockets,
   * nextTick loops or processes it started. False when not frozen (no parent-death launcher, the
   * child is gone). Memory polling goes on; a frozen process does not grow.
   */
  freeze(): boolean {
    return this.freezer.freeze();
  }

  resume(): void {
    this.freezer.resume();
  }

  get isFrozen(): boolean {
    return this.freezer.isFrozen;
  }

  /**
   * SIGKILL the child, its process group and every process it started (see process-tree.ts), and
   * wait for the child's exit. Safe to call more than once, and after the child died by itself
   * (what it started may still be running).
   */
  async kill(): Promise<ChildExit> {
    const pid = this.process.pid;
    if (!this.killed) {
      this.killed = true;
      if (pid !== undefined) this.killedRelatives = awaitProcessesGone(killGuestProcesses(pid, this.marker, this.alive));
      else if (this.alive) this.process.kill("SIGKILL");
    }
    await this.killedRelatives;
    return this.exited;
  }

  /** Settles once what kill() signalled is dead (bounded). */
  private killedRelatives: Promise<void> = Promise.resolve();
}

export class ChildStartError extends Error {
  override readonly name = "ExecutorStartError";
  constructor(readonly exit: ChildExit) {
    super(`the executor process exited during start-up (${describeExit(exit)})${exit.stderrTail ? `: ${exit.stderrTail.trim().slice(-2_000)}` : ""}`);
  }
}

export function describeExit(exit: ChildExit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
}

export function isOutOfMemory(exit: ChildExit): boolean {
  if (exit.memoryExceededMb !== null) return true;
  return /heap out of memory|Reached heap limit|Allocation failed/i.test(exit.stderrTail);
}

/** JSON has no undefined: a framed result without a value (a statement's) has the key set to undefined, as over IPC. */
function withResultValue(message: unknown): unknown {
  const m = message as { type?: unknown; result?: unknown } | null;
  if (m?.type === "result" && typeof m.result === "object" && m.result !== null && !("value" in m.result)) return { ...m, result: { ...m.result, value: undefined } };
  return message;
}

