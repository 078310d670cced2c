/**
 * The resident command runner: one long-lived `node -e RUNNER_SCRIPT` per container (and user),
 * started through one engine exec, that starts every later program of that container itself. An
 * engine exec costs the engine a round of process set-up (hundreds of ms on podman); a frame to a
 * process that is already there costs a spawn inside the container, so a CLI tool call in a
 * container session costs about what it costs on the host (issue 32's bench).
 *
 * Host and runner talk over the exec's stdin and stdout in frames.ts's format (length + V8
 * serialization). The host sends `start` (argv, cwd, env, timeout; the argv is never parsed by a
 * shell), `in`/`end` (the program's stdin), `kill`; the runner answers `ready` once, then per call
 * `out`/`err` (stdout and stderr apart) and one `exit`. Each program runs in its own process
 * group with a TCM_CALL=<id> marker in its environment, so a kill reaches what it started, even
 * what left the group. The runner shares the container with the guest's code and its user, so what
 * it sends is read as hostile: frames are size-capped and every message is checked; a violation
 * ends the runner, and the next call starts a fresh one (calls fall back to one exec each while
 * none can start).
 */
import type Docker from "dockerode";
import { PassThrough } from "node:stream";
import type { ProgramExit } from "../../tools/protocol.js";
import { encodeFrame, FrameReader } from "./frames.js";

/** Largest frame the runner may send (it sends pipe-sized chunks, 64 KiB). */
const MAX_RUNNER_FRAME_BYTES = 1024 * 1024;
/** Host stdin is sent in pieces of at most this. */
const STDIN_PIECE_BYTES = 256 * 1024;
/** How long a new runner may take to say it is ready. */
const READY_TIMEOUT_MS = 30_000;
/** After a failed start, calls use one exec each for this long before a runner is tried again. */
const RETRY_AFTER_MS = 5_000;
/** After a kill, how long the host waits for the runner's exit report before it reports the kill itself. */
const KILL_GRACE_MS = 5_000;
/** The line a program's stderr gets when the runner stopped while it ran. */
export const RUNNER_LOST_LINE = "[ts-code-mode] the command runner inside the container stopped while the program ran\n";

/** Inside: SIGKILLs the process groups (and processes) whose environment holds TCM_CALL=<id>. */
const KILL_MARKED_FUNCTION = `const fs = require("node:fs");
const killMarked = (id) => {
  const mark = "TCM_CALL=" + id;
  for (const p of fs.readdirSync("/proc")) {
    if (!/^\\d+$/.test(p) || Number(p) === process.pid) continue;
    let env = []; try { env = fs.readFileSync("/proc/" + p + "/environ", "utf8").split("\\0"); } catch { continue; }
    if (env.includes(mark)) { try { process.kill(-Number(p), "SIGKILL"); } catch {} try { process.kill(Number(p), "SIGKILL"); } catch {} }
  }
};`;

/**
 * Kill what a call started, by its marker, through a helper exec (`user` inside the container):
 * for a call with no runner to ask (the exec path, or a runner that died).
 */
export async function killMarked(container: Docker.Container, id: string, user: string): Promise<void> {
  const k = await container.exec({ Cmd: ["node", "-e", `${KILL_MARKED_FUNCTION}\nkillMarked(process.argv[1]);`, id], AttachStdout: true, AttachStderr: true, User: user });
  const s = await k.start({ hijack: true, stdin: false });
  await new Promise<void>((resolve) => {
    s.once("end", () => resolve());
    s.once("close", () => resolve());
    s.once("error", () => resolve());
    s.resume();
  });
}

/**
 * Runs inside the container as `node -e RUNNER_SCRIPT`. CommonJS, no dependencies: any image
 * with node (every image the executor can use) runs it.
 */
export const RUNNER_SCRIPT = `// ts-code-mode resident command runner
const v8 = require("node:v8"), os = require("node:os"), { spawn } = require("node:child_process");
const calls = new Map();
const send = (m) => { const body = v8.serialize(m); const head = Buffer.allocUnsafe(4); head.writeUInt32BE(body.length, 0); process.stdout.write(Buffer.concat([head, body])); };
${KILL_MARKED_FUNCTION}
const killGroup = (c) => { try { process.kill(-c.child.pid, "SIGKILL"); } catch {} };
const finish = (id, c, report) => {
  if (c.done) return;
  c.done = true; clearTimeout(c.timer); clearTimeout(c.late); calls.delete(id);
  send(Object.assign({ t: "exit", id }, report));
};
const start = (m) => {
  const { id, argv, cwd, env, timeoutMs } = m;
  let dir = null; try { dir = fs.statSync(cwd); } catch {}
  if (!dir || !dir.isDirectory()) return send({ t: "exit", id, code: null, signal: null, startError: { code: "ENOTDIR", message: "the working directory " + cwd + " does not exist in the container" } });
  let child;
  try { child = spawn(argv[0], argv.slice(1), { cwd, env: Object.assign({}, process.env, env, { TCM_CALL: id }), detached: true, stdio: ["pipe", "pipe", "pipe"] }); }
  catch (e) { return send({ t: "exit", id, code: null, signal: null, startError: { code: e.code || "EINVAL", message: String(e.message) } }); }
  const c = { child, done: false, killed: false, timedOut: false, exited: null, timer: undefined, late: undefined };
  calls.set(id, c);
  child.stdout.on("data", (d) => send({ t: "out", id, data: d }));
  child.stderr.on("data", (d) => send({ t: "err", id, data: d }));
  child.stdin.on("error", () => {});
  if (timeoutMs > 0) c.timer = setTimeout(() => { c.timedOut = true; killGroup(c); }, Math.min(timeoutMs, 2147483647));
  child.on("error", (e) => { if (child.pid === undefined) finish(id, c, { code: null, signal: null, startError: { code: e.code || "EINVAL", message: String(e.message) } }); });
  const report = () => {
    const [code, signal] = c.exited;
    if (c.killed) return finish(id, c, { code: null, signal: "SIGKILL" });
    if (c.timedOut) { send({ t: "err", id, data: Buffer.from("[ts-code-mode] command stopped at its timeout of " + timeoutMs + " ms\\n") }); return finish(id, c, { code: 124, signal: null }); }
    finish(id, c, { code: code ?? 128 + (os.constants.signals[signal] ?? 0), signal: null });
  };
  child.on("exit", (code, signal) => {
    c.exited = [code, signal];
    killGroup(c);
    // stdout may be held open by a process that left the group: report a while later regardless.
    c.late = setTimeout(() => { killMarked(id); child.stdout.destroy(); child.stderr.destroy(); report(); }, 2000);
  });
  child.on("close", () => { if (c.exited) report(); });
};
const handle = (m) => {
  const c = calls.get(m.id);
  if (m.t === "start") start(m);
  else if (!c) return;
  else if (m.t === "in") c.child.stdin.write(m.data);
  else if (m.t === "end") c.child.stdin.end();
  else if (m.t === "kill") { c.killed = true; killGroup(c); killMarked(m.id); }
};
let buf = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
  while (buf.length >= 4) {
    const n = buf.readUInt32BE(0);
    if (buf.length < 4 + n) break;
    const m = v8.deserialize(buf.subarray(4, 4 + n));
    buf = buf.subarray(4 + n);
    handle(m);
  }
});
// The host went away: nothing it started may outlive it.
process.stdin.on("end", () => { for (const [id, c] of calls) { killGroup(c); killMarked(id); } process.exit(0); });
send({ t: "ready" });
`;

/** Where one program's output goes and its end is reported. */
export interface ProgramIo {
  stdin: PassThrough;
  stdout: PassThrough;
  stderr: PassThrough;
}

export interface StartedProgram {
  exit: Promise<ProgramExit>;
  kill(): void;
}

interface Call {
  io: ProgramIo;
  resolve(exit: ProgramExit): void;
}

type RunnerMessage =
  | { t: "ready" }
  | { t: "out"; id: string; data: Uint8Array }
  | { t: "err"; id: string; data: Uint8Array }
  | { t: "exit"; id: string; code: number | null; signal: string | null; startError?: { code: string; message: string } };

const isShortString = (v: unknown, max = 4_096): v is string => typeof v === "string" && v.length <= max;

/** The runner's messages, checked: it shares the container with the guest's code. */
function checkRunnerMessage(m: unknown): RunnerMessage | null {
  if (typeof m !== "object" || m === null) return null;
  const r = m as Record<string, unknown>;
  if (r["t"] === "ready") return { t: "ready" };
  if (!isShortString(r["id"], 64)) return null;
  const id = r["id"];
  if (r["t"] === "out" && r["data"] instanceof Uint8Array) return { t: "out", id, data: r["data"] };
  if (r["t"] === "err" && r["data"] instanceof Uint8Array) return { t: "err", id, data: r["data"] };
  if (r["t"] !== "exit") return null;
  const code = r["code"];
  const signal = r["signal"];
  if (!(code === null || (Number.isInteger(code) && (code as number) >= 0 && (code as number) <= 255))) return null;
  if (!(signal === null || (isShortString(signal, 16) && /^SIG[A-Z0-9]+$/.test(signal)))) return null;
  const se = r["startError"];
  if (se === undefined) return { t: "exit", id, code: code as number | null, signal: signal as string | null };
  if (typeof se !== "object" || se === null) return null;
  const { code: errno, message } = se as Record<string, unknown>;
  if (!isShortString(errno, 32) || !isShortString(message)) return null;
  return { t: "exit", id, code: null, signal: null, startError: { code: errno, message } };
}

/** One runner process inside one container, for one user. */
export class ResidentRunner {
  private readonly calls = new Map<string, Call>();
  private dead = false;
  private stream: NodeJS.ReadWriteStream | null = null;
  private markReady!: (ok: boolean) => void;
  readonly ready = new Promise<boolean>((resolve) => (this.markReady = resolve));
  /** Called once when the runner ends (the registry forgets it). */
  onDead: () => void = () => undefined;

  constructor(
    private readonly container: Docker.Container,
    private readonly user: string,
  ) {}

  get alive(): boolean {
    return !this.dead;
  }

  /** Start the runner's exec; `ready` resolves true once it answers, false when it cannot start. */
  async boot(): Promise<boolean> {
    const timer = setTimeout(() => this.end(), READY_TIMEOUT_MS);
    try {
      const exec = await this.container.exec({ Cmd: ["node", "-e", RUNNER_SCRIPT], AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false, WorkingDir: "/", User: this.user });
      const s = await exec.start({ hijack: true, stdin: true });
      this.stream = s;
      // Ended (the ready timeout) while the exec was being made.
      if (this.dead) {
        (s as { destroy?: () => void }).destroy?.();
        return false;
      }
      s.on("error", () => this.end());
      s.once("end", () => this.end());
      s.once("close", () => this.end());
      const out = new PassThrough();
      const reader = new FrameReader(MAX_RUNNER_FRAME_BYTES, (m) => this.onMessage(m), () => this.end());
      out.on("data", (chunk: Buffer) => reader.push(chunk));
      // The runner's own stderr (a crash report) has no reader: drained.
      const err = new PassThrough();
      err.resume();
      this.container.modem.demuxStream(s, out, err);
      this.idle();
    } catch {
      this.end();
    }
    const ok = await this.ready;
    clearTimeout(timer);
    return ok;
  }

  /** Start a program; null when this runner has stopped (the caller falls back to one exec). */
  start(argv: readonly string[], options: { cwd: string; env?: Record<string, string>; timeoutMs?: number }, io: ProgramIo, id: string): StartedProgram | null {
    if (this.dead || !this.stream) return null;
    let resolve!: (exit: ProgramExit) => void;
    const exit = new Promise<ProgramExit>((r) => (resolve = r));
    let killed = false;
    let graceTimer: ReturnType<typeof setTimeout> | undefined;
    const call: Call = {
      io,
      resolve: (e) => {
        clearTimeout(graceTimer);
        io.stdin.removeListener("data", onData);
        io.stdin.removeListener("end", onEnd);
        io.stdin.resume();
        resolve(e);
      },
    };
    const onData = (chunk: Buffer) => {
      for (let at = 0; at < chunk.length; at += STDIN_PIECE_BYTES) this.send({ t: "in", id, data: chunk.subarray(at, at + STDIN_PIECE_BYTES) });
    };
    const onEnd = () => this.send({ t: "end", id });
    this.calls.set(id, call);
    this.busy();
    this.send({ t: "start", id, argv: [...argv], cwd: options.cwd, env: options.env ?? {}, timeoutMs: options.timeoutMs ?? 0 });
    io.stdin.on("data", onData);
    io.stdin.once("end", onEnd);
    const kill = () => {
      if (killed || !this.calls.has(id)) return;
      killed = true;
      this.send({ t: "kill", id });
      // A runner that no longer answers must not keep the call open forever.
      graceTimer = setTimeout(() => this.settle(id, { code: null, signal: "SIGKILL" }), KILL_GRACE_MS);
      graceTimer.unref();
    };
    return { exit, kill };
  }

  private send(message: unknown): void {
    if (this.dead || !this.stream) return;
    this.stream.write(encodeFrame(message));
  }

  private onMessage(raw: unknown): void {
    const m = checkRunnerMessage(raw);
    if (!m) return this.end();
    if (m.t === "ready") return this.markReady(true);
    const call = this.calls.get(m.id);
    if (!call) return;
    if (m.t === "out") call.io.stdout.write(m.data);
    else if (m.t === "err") call.io.stderr.write(m.data);
    else this.settle(m.id, m.startError ? { code: null, signal: null, startError: m.startError } : { code: m.code, signal: m.signal as NodeJS.Signals | null });
  }

  private settle(id: string, exit: ProgramExit): void {
    const call = this.calls.get(id);
    if (!call) return;
    this.calls.delete(id);
    call.resolve(exit);
    if (this.calls.size === 0) this.idle();
  }

  /** The runner stopped (or broke the protocol): its calls end, it is forgotten, the next call starts a fresh one. */
  end(): void {
    if (this.dead) return;
    this.dead = true;
    this.markReady(false);
    (this.stream as { destroy?: () => void } | null)?.destroy?.();
    for (const [id, call] of [...this.calls]) {
      // What the call started outlives a runner killed from outside: kill it by its marker.
      void killMarked(this.container, id, this.user).catch(() => undefined);
      call.io.stderr.write(RUNNER_LOST_LINE);
      this.settle(id, { code: null, signal: null });
    }
    this.onDead();
  }

  // An idle runner must not keep the host process alive; one with calls in flight must.
  private idle(): void {
    (this.stream as { unref?: () => void } | null)?.unref?.();
  }

  private busy(): void {
    (this.stream as { ref?: () => void } | null)?.ref?.();
  }
}

const runners = new Map<string, ResidentRunner>();
const failedAt = new Map<string, number>();

/**
 * The running runner of `container` for `user`, started if there is none; null when none can run
 * now (the caller uses one exec for this call).
 */
export async function residentRunner(container: Docker.Container, user: string): Promise<ResidentRunner | null> {
  const key = `${container.id}\0${user}`;
  let runner = runners.get(key);
  if (!runner) {
    const failed = failedAt.get(key);
    if (failed !== undefined && Date.now() - failed < RETRY_AFTER_MS) return null;
    failedAt.delete(key);
    const fresh = new ResidentRunner(container, user);
    runner = fresh;
    runners.set(key, fresh);
    fresh.onDead = () => {
      if (runners.get(key) === fresh) runners.delete(key);
    };
    void fresh.boot().then((ok) => {
      if (ok) failedAt.delete(key);
      else failedAt.set(key, Date.now());
    });
  }
  return (await runner.ready) && runner.alive ? runner : null;
}

/** Stop every runner of a container (its calls end); a container being removed needs nothing else. */
export function stopRunners(containerId: string): void {
  for (const [key, runner] of [...runners]) if (key.startsWith(`${containerId}\0`)) runner.end();
}
