/**
 * Many cheap sessions (issue 42 item 4): `new SubprocessExecutor({ sharedChild })` runs a session
 * in its own vm context inside a child `node` process it shares with other sessions, instead of a
 * child of its own. A bare node child holds ~9 MiB of PSS whatever it runs, and no node flag got it
 * near 5 MiB; a context costs a small fraction of that.
 *
 * SharedChildren starts such children as sessions need them, each holding up to
 * `sessionsPerChild` sessions (the next session starts another child), and ends a child once its
 * last session has left. Each session's executor sees a SessionGuest: a GuestHandle (as a child of
 * its own would be) that tags every message with its session (rpc/protocol.ts), so runs, tool
 * calls, output, stops and timeouts stay per session, and the executor's policy (executor.ts) is
 * the same code as for a child of its own.
 *
 * The trade-off, stated in capabilities() and docs/executors.md: the sessions of one child share
 * its heap, its memory cap, its event loop and Node's process-wide objects (`process`, `require`'s
 * cache, Buffer). Each has its own globals, but code of one session can reach another's through
 * those: put only sessions of one trust domain in one SharedChildren. Stopping a session's
 * synchronous code at its deadline is done by vm's own timeout inside the child (its variables
 * are kept, the others go on); code that can be stopped only by ending the process (asynchronous
 * code busy at its deadline or cancel), a crash, process.exit() or the memory cap ends the child
 * and with it every session in it: a run in progress in another session ends with
 * SessionLostError (or the crash's own error), an idle one is told with its next result, and each
 * goes on in a fresh context of a new child.
 */
import { ValidationError } from "../../errors.js";
import { SHARED_CHILD_ENV, type GuestToHost, type HostToGuest } from "../rpc/protocol.js";
import { ChildHandle, stringEnv, type ChildExit, type GuestHandle, type SpawnOptions } from "./child-process.js";

export interface SharedChildrenOptions {
  /** Sessions one child holds at most; the next session starts another child. Default 8, at most 256. */
  sessionsPerChild?: number;
  /**
   * Cap on each child's memory in MB, as SubprocessExecutor's maxMemoryMb: its V8 heap and, on
   * Linux, its whole resident memory. Shared by the child's sessions: one going over it ends all.
   */
  maxMemoryMb?: number;
  /** The children's environment. Default: the host's environment. */
  env?: Record<string, string>;
  /** The children's working directory (and where sessions import packages from). Default: the host's cwd. */
  cwd?: string;
}

export const DEFAULT_SESSIONS_PER_CHILD = 8;
const MAX_SESSIONS_PER_CHILD = 256;

/** How long a session that leaves in the middle of a run waits for the run to end before the child must be ended (as IDLE_STOP_GRACE_MS). */
const LEAVE_GRACE_MS = 1_000;

/** What a session's context was left with when it left a child that goes on (reset, close). */
const LEFT: ChildExit = { code: null, signal: null, stderrTail: "", fatal: null, memoryExceededMb: null, protocolViolation: null };

export class SharedChildren {
  readonly sessionsPerChild: number;
  readonly maxMemoryMb: number | undefined;
  readonly cwd: string;
  private readonly env: Record<string, string> | undefined;
  private readonly children = new Set<SharedChild>();
  private nextSession = 1;
  private closed = false;

  constructor(options: SharedChildrenOptions = {}) {
    const { sessionsPerChild = DEFAULT_SESSIONS_PER_CHILD, maxMemoryMb, env, cwd, ...rest } = options;
    const unknown = Object.keys(rest);
    if (unknown.length) throw new ValidationError(`Invalid SharedChildren options: unknown ${unknown.join(", ")}. Accepted: sessionsPerChild, maxMemoryMb, env, cwd.`);
    if (!Number.isInteger(sessionsPerChild) || sessionsPerChild < 1 || sessionsPerChild > MAX_SESSIONS_PER_CHILD) {
      throw new ValidationError(`Invalid SharedChildren options: sessionsPerChild must be a whole number from 1 to ${MAX_SESSIONS_PER_CHILD}, got ${String(sessionsPerChild)}.`);
    }
    if (maxMemoryMb !== undefined && (!Number.isInteger(maxMemoryMb) || maxMemoryMb < 16)) throw new ValidationError(`Invalid SharedChildren options: maxMemoryMb must be a whole number of megabytes, at least 16, got ${String(maxMemoryMb)}.`);
    if (env !== undefined && (typeof env !== "object" || env === null || Object.values(env).some((v) => typeof v !== "string"))) throw new ValidationError("Invalid SharedChildren options: env must map names to strings.");
    if (cwd !== undefined && (typeof cwd !== "string" || cwd === "")) throw new ValidationError("Invalid SharedChildren options: cwd must be a folder path.");
    this.sessionsPerChild = sessionsPerChild;
    this.maxMemoryMb = maxMemoryMb;
    this.env = env;
    this.cwd = cwd ?? process.cwd();
  }

  /** Children running now, their pids and their sessions (tests, benchmarks). */
  stats(): { children: number; sessions: number; pids: number[] } {
    const live = [...this.children].filter((c) => c.handle.isAlive);
    return { children: live.length, sessions: live.reduce((n, c) => n + c.sessions.size, 0), pids: live.flatMap((c) => (c.handle.pid === undefined ? [] : [c.handle.pid])) };
  }

  /**
   * The GuestLauncher of SubprocessExecutor({ sharedChild }): a new session's context in a child
   * with room, or in a new child. Throws once closed.
   */
  readonly launch = (options: SpawnOptions): GuestHandle => {
    if (this.closed) throw new ValidationError("this SharedChildren was closed; its sessions cannot start a context");
    let child: SharedChild | undefined;
    // The oldest child with room first: sessions gather in as few children as they can.
    for (const c of this.children) {
      if (c.takesSessions && c.sessions.size < this.sessionsPerChild) {
        child = c;
        break;
      }
    }
    child ??= this.startChild();
    return new SessionGuest(child, this.nextSession++, options.importBases ?? [this.cwd], options.onMessage);
  };

  /** Ends every child, and so every session in them (their next run fails). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.children].map((c) => c.end()));
  }

  private startChild(): SharedChild {
    const child: SharedChild = new SharedChild({
      maxMemoryMb: this.maxMemoryMb,
      permissions: undefined,
      env: { ...(this.env ?? stringEnv(process.env)), [SHARED_CHILD_ENV]: "1" },
      cwd: this.cwd,
      shared: true,
      onMessage: (m) => child.route(m),
    });
    this.children.add(child);
    void child.handle.exited.then(() => this.children.delete(child));
    return child;
  }
}

/** One shared child process and the sessions in it. */
class SharedChild {
  readonly handle: ChildHandle;
  readonly sessions = new Map<number, SessionGuest>();
  /** Set when the child is ended for one session's sake: why, as the others are told. */
  lostWith: string | undefined;
  private ending = false;

  constructor(options: SpawnOptions) {
    this.handle = new ChildHandle(options);
  }

  /** Still alive and not being ended: a new session may join. */
  get takesSessions(): boolean {
    return !this.ending && this.handle.isAlive;
  }

  route(message: GuestToHost): void {
    // A message without a session, or of one that left, is nobody's: its guest code ran past its run.
    if ("session" in message && message.session !== undefined) this.sessions.get(message.session)?.receive(message);
  }

  /** Frozen (../freeze.ts) only when none of its sessions is running. */
  freezeIfIdle(): boolean {
    for (const s of this.sessions.values()) if (s.running) return false;
    return this.handle.freeze();
  }

  async end(): Promise<void> {
    this.ending = true;
    await this.handle.kill();
  }
}

/** One session's view of its shared child: what SubprocessExecutor drives as its guest. */
class SessionGuest implements GuestHandle {
  readonly ready: Promise<void>;
  readonly exited: Promise<ChildExit>;
  /** Between resume() (a run starts) and freeze() (it ended): the child must not be frozen. */
  running = false;
  private resolveExit!: (exit: ChildExit) => void;
  private opened = false;
  private left = false;
  /** A run sent whose result has not come back: its code may still be executing in the child. */
  private runInChild: number | null = null;
  /** The host asked that run to stop (its deadline or a cancel) and then gave up on it: it is busy. */
  private stopAsked = false;
  /** Told when the result of runInChild arrives (a session leaving in the middle of a run waits for it). */
  private onRunEnded: (() => void) | null = null;

  constructor(
    private readonly child: SharedChild,
    private readonly session: number,
    importBases: string[],
    private readonly onMessage: (message: GuestToHost) => void,
  ) {
    child.sessions.set(session, this);
    this.exited = new Promise((resolve) => (this.resolveExit = resolve));
    void child.handle.exited.then((exit) => this.resolveExit(child.lostWith ? { ...exit, lostWith: child.lostWith } : exit));
    this.ready = child.handle.ready.then(() => {
      if (this.left) return;
      child.handle.send({ type: "open", session, importBases });
      this.opened = true;
    });
    this.ready.catch(() => undefined);
  }

  get isAlive(): boolean {
    return !this.left && this.child.handle.isAlive;
  }

  get isReady(): boolean {
    return this.opened;
  }

  get pid(): number | undefined {
    return this.child.handle.pid;
  }

  send(message: HostToGuest): void {
    if (!this.isAlive) throw new Error("the executor process is not running");
    if (message.type === "run") [this.runInChild, this.stopAsked] = [message.runId, false];
    else if (message.type === "stop" && message.runId === this.runInChild) this.stopAsked = true;
    // Object.assign, not a spread with one more property (V8's slow path on Node 20): every reply of a shared child's session.
    this.child.handle.send(Object.assign(Object.assign({}, message), { session: this.session }));
  }

  receive(message: GuestToHost): void {
    if (message.type === "result" && message.runId === this.runInChild) {
      this.runInChild = null;
      this.onRunEnded?.();
    }
    if (!this.left) this.onMessage(message);
  }

  freeze(): boolean {
    this.running = false;
    return this.child.freezeIfIdle();
  }

  resume(): void {
    this.running = true;
    this.child.handle.resume();
  }

  /** Never: a SIGINT would stop whichever session's script runs. vm's timeout bounds synchronous code instead. */
  interrupt(): boolean {
    return false;
  }

  /**
   * Leave the child: its context is closed and the child goes on for the other sessions. A session
   * that leaves in the middle of a run (closed while its code waits) has the run stopped with its
   * context and waits up to LEAVE_GRACE_MS for it to end. A run whose code is still executing
   * after that, or that the executor already gave up on at its deadline or cancel, can be stopped
   * only by ending the child, and with it every session in it; so does the last session leaving,
   * and one leaving a child that never started.
   */
  async kill(): Promise<ChildExit> {
    if (this.left) return this.exited;
    this.left = true;
    this.running = false;
    const { child } = this;
    const others = () => [...child.sessions.values()].some((s) => s !== this);
    let stuck = this.runInChild !== null && this.stopAsked;
    // A child still starting has no context of this session yet (`ready` opens none once it left).
    if (child.handle.isAlive && child.handle.isReady && others() && !stuck) {
      try {
        child.handle.send({ type: "close", session: this.session });
      } catch {
        // the child is gone: its exit reaches the other sessions
      }
      if (this.runInChild !== null) stuck = !(await this.runEnds(LEAVE_GRACE_MS));
    }
    child.sessions.delete(this.session);
    if (child.handle.isAlive && (stuck || child.sessions.size === 0)) {
      if (stuck && child.sessions.size > 0) {
        child.lostWith ??= "another session in the same shared executor process (SharedChildren) had code still executing at its deadline, cancel or close, which only ending the process stops";
      }
      await child.end();
    }
    this.resolveExit(LEFT);
    return this.exited;
  }

  /** Whether the run in the child ends (its result arrives, or the child dies) within `ms`. */
  private runEnds(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      const done = () => {
        clearTimeout(timer);
        this.onRunEnded = null;
        resolve(true);
      };
      this.onRunEnded = done;
      void this.child.handle.exited.then(done);
    });
  }
}
