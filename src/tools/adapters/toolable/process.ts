/**
 * One run of a toolable executable, read line by line: stdout lines are JSON events or the final
 * envelope, stderr lines may be JSON notifications, and stdin stays open so the caller can answer
 * sampling requests or feed a session. Limits every run needs: a timeout and an abort signal (both
 * SIGKILL the whole process group, so grandchildren die too), a cap on stdout bytes, and a bounded
 * stderr excerpt. Spawned without a shell: each argv element reaches the executable as one word.
 */
import { ToolError } from "../../../errors.js";
import type { ProgramExit, ProgramSpawner, RunningProgram } from "../../protocol.js";
import { MAX_STDOUT_BYTES, STDERR_EXCERPT_CHARS } from "../cli/run.js";
import { spawnOnHost } from "../host-program.js";

const MAX_TIMER_MS = 2_147_483_647;
/** Longest stdout/stderr line kept while waiting for its newline; a longer one is cut (the cap still counts it). */
const MAX_LINE_BYTES = MAX_STDOUT_BYTES;
const STDERR_KEEP_CHARS = 64 * 1024;
/** Non-JSON stdout kept for error messages (the end of it). */
const NOISE_KEEP_CHARS = 2_000;
const PIPE_GRACE_MS = 1_000;

export interface ProcessOptions {
  tool: string;
  callable: string | null;
  /** How the call reads in messages, e.g. `tools.py.add`. */
  label: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Default: the spawner's own (a container's workdir). */
  cwd?: string;
  env: Record<string, string>;
  /** Where the program runs; default the host. A container session's spawner runs it inside. */
  spawn?: ProgramSpawner;
  /** For a missing command: how to get it where the program runs (default: install it or fix the YAML). */
  fixMissing?: string;
  maxStdoutBytes?: number;
  /** Each complete stdout line; `value` is its JSON (undefined when the line is not JSON). */
  onStdoutLine?: (value: unknown, line: string) => void;
  /** Each complete stderr line that is a JSON object. */
  onStderrJson?: (value: Record<string, unknown>) => void;
}

export interface ProcessOutcome {
  exitCode: number;
  /** Every stdout byte as text (kept only when `collect` was set), for pretty-printed answers. */
  stdout: string;
  /** The last stdout line that is a JSON object. */
  lastJson: Record<string, unknown> | undefined;
  /** The end of stdout lines that were not JSON objects. */
  noise: string;
  stderr: string;
}

type StopReason = "timeout" | "cap" | "abort" | "closed";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Splits a byte stream into lines, each bounded. */
class LineSplitter {
  private parts: Buffer[] = [];
  private bytes = 0;
  constructor(private readonly onLine: (line: string) => void) {}
  push(chunk: Buffer): void {
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      this.add(chunk.subarray(start, i));
      this.flush();
      start = i + 1;
    }
    if (start < chunk.length) this.add(chunk.subarray(start));
  }
  end(): void {
    if (this.bytes) this.flush();
  }
  private add(b: Buffer): void {
    const room = MAX_LINE_BYTES - this.bytes;
    if (room <= 0) return;
    const kept = b.length > room ? b.subarray(0, room) : b;
    this.parts.push(Buffer.from(kept));
    this.bytes += kept.length;
  }
  private flush(): void {
    const line = Buffer.concat(this.parts).toString("utf8").replace(/\r$/, "");
    this.parts = [];
    this.bytes = 0;
    this.onLine(line);
  }
}

function parseLine(line: string): unknown {
  const t = line.trim();
  if (!t.startsWith("{") && !t.startsWith("[")) return undefined;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return undefined;
  }
}

export class ToolableProcess {
  readonly done: Promise<ProcessOutcome>;
  private readonly child: RunningProgram;
  private stopped: StopReason | null = null;
  private exited = false;

  /** `collect`: keep all of stdout (discovery answers are pretty-printed over many lines). */
  constructor(argv: readonly string[], opts: ProcessOptions, collect = false) {
    const executable = argv[0] ?? "";
    const error = (code: ToolError["code"], message: string, extra: { exitCode?: number; stderr?: string } = {}) =>
      new ToolError({ tool: opts.tool, callable: opts.callable, code, message, ...extra });
    this.child = (opts.spawn ?? spawnOnHost)(argv, { ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}), env: opts.env });
    const child = this.child;
    // A tool that exits without reading stdin makes our writes fail with EPIPE: not an error of the call.
    child.stdin.on("error", () => {});
    const maxStdout = opts.maxStdoutBytes ?? MAX_STDOUT_BYTES;

    const collected: Buffer[] = [];
    let stdoutBytes = 0;
    let lastJson: Record<string, unknown> | undefined;
    let noise = "";
    let stderr = "";
    const out = new LineSplitter((line) => {
      const value = parseLine(line);
      if (isObject(value)) lastJson = value;
      else if (line.trim()) noise = `${noise}\n${line}`.slice(-NOISE_KEEP_CHARS);
      if (this.stopped) return;
      try {
        opts.onStdoutLine?.(value, line);
      } catch {
        /* a host callback's failure is not the tool's */
      }
    });
    const err = new LineSplitter((line) => {
      stderr = `${stderr}\n${line}`.slice(-STDERR_KEEP_CHARS);
      const value = parseLine(line);
      if (isObject(value) && !this.stopped) {
        try {
          opts.onStderrJson?.(value);
        } catch {
          /* as above */
        }
      }
    });
    child.stdout.on("data", (chunk: Buffer) => {
      if (this.stopped) return;
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxStdout) return this.stop("cap");
      if (collect) collected.push(chunk);
      out.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));

    const timer = setTimeout(() => this.stop("timeout"), Math.min(Math.max(opts.timeoutMs, 1), MAX_TIMER_MS));
    const onAbort = () => this.stop("abort");
    opts.signal?.addEventListener("abort", onAbort, { once: true });

    this.done = new Promise<ProcessOutcome>((resolve, reject) => {
      const spawnFailure = (e: { code: string; message: string }): ToolError => {
        const fix = opts.fixMissing ?? "install it or fix 'command' in the tool's YAML";
        if (e.code === "ENOENT") return error("DEPENDENCY", `${opts.label}: command '${executable}' ${executable.includes("/") ? "does not exist" : "was not found on PATH"}; ${fix}`);
        if (e.code === "EACCES") return error("PERMISSION", `${opts.label}: command '${executable}' is not executable (permission denied)`);
        return error("INTERNAL", `${opts.label}: could not run '${executable}': ${e.message}`);
      };
      void child.exit.then(({ code, signal, startError }: ProgramExit) => {
        clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
        this.exited = true;
        out.end();
        err.end();
        const text = stderr.trim();
        const excerpt = text.length > STDERR_EXCERPT_CHARS ? `…${text.slice(-STDERR_EXCERPT_CHARS)}` : text;
        const withStderr = excerpt ? { stderr: excerpt } : {};
        if (startError) return reject(spawnFailure(startError));
        if (this.stopped === "timeout") return reject(error("TIMEOUT", `${opts.label} timed out after ${opts.timeoutMs} ms; the process group was killed`, withStderr));
        if (this.stopped === "cap") {
          return reject(error("INTERNAL", `${opts.label} wrote more than ${Math.round(maxStdout / 1_048_576)} MiB to stdout (the output cap); the process was killed`, withStderr));
        }
        if (this.stopped === "abort") {
          const reason: unknown = opts.signal?.reason;
          const timedOut = reason instanceof Error && reason.name === "TimeoutError";
          return reject(error(timedOut ? "TIMEOUT" : "INTERNAL", `${opts.label} was aborted${timedOut ? " (timeout)" : ""}; the process was killed`));
        }
        if (this.stopped === "closed") return reject(error("INTERNAL", `${opts.label} was stopped (its session or run ended); the process was killed`));
        if (code === null) return reject(error("INTERNAL", `${opts.label}: '${executable}' was killed by signal ${signal ?? "unknown"}${excerpt ? `: ${excerpt}` : ""}`, withStderr));
        resolve({ exitCode: code, stdout: collect ? Buffer.concat(collected).toString("utf8") : "", lastJson, noise: noise.trim(), stderr: excerpt });
      });
    });
    // The caller may stop listening (a session's handle dropped); a rejection nobody awaits is not unhandled.
    this.done.catch(() => {});
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.exited;
  }

  /** One JSON line to the tool's stdin; false when stdin is closed. */
  write(value: unknown): boolean {
    const stdin = this.child.stdin;
    if (stdin.destroyed || stdin.writableEnded) return false;
    stdin.write(`${JSON.stringify(value)}\n`);
    return true;
  }

  /** EOF on stdin: a session reads it as quit, a waiting sampler as "no answer". */
  endInput(): void {
    const stdin = this.child.stdin;
    if (!stdin.writableEnded) stdin.end();
  }

  /** Kill the process group now. */
  stop(reason: StopReason = "closed"): void {
    if (this.stopped || this.exited) return;
    this.stopped = reason;
    this.child.kill();
    // A grandchild that left the group (setsid) could hold the pipes open forever.
    setTimeout(() => {
      this.child.stdout.destroy();
      this.child.stderr.destroy();
    }, PIPE_GRACE_MS).unref();
  }
}
