/**
 * Run one argv without a shell and collect stdout, with the limits every CLI call needs:
 * a timeout, an output cap, and an abort signal. The child gets its own process group
 * (`detached: true`) so that killing the group with SIGKILL also kills grandchildren — a
 * `sh -c 'sleep 100 &'` would otherwise outlive the timeout and keep the pipes open.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { ToolError, type ToolErrorCode } from "../../../errors.js";
import { withRealPython } from "../../../real-python.js";

/** stdout beyond this many bytes kills the process: an agent cannot use more, and memory is finite. */
export const MAX_STDOUT_BYTES = 16 * 1024 * 1024;
/** How much of stderr (the end, where the error usually is) goes into a ToolError. */
export const STDERR_EXCERPT_CHARS = 2_000;
/** setTimeout cannot wait longer than this. */
const MAX_TIMER_MS = 2_147_483_647;
const STDERR_KEEP_BYTES = 64 * 1024;
/** After a kill, how long to wait for the pipes to close before destroying them ourselves. */
const PIPE_GRACE_MS = 1_000;

export interface RunCommandOptions {
  tool: string;
  callable: string | null;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Exit codes that count as success (default [0]). */
  okExitCodes?: readonly number[];
  maxStdoutBytes?: number;
  cwd?: string;
  /** How messages name the call (default `tools.<tool>[.<callable>]`). */
  label?: string;
  /** Written to the child's stdin, which is then closed (default: no stdin at all). */
  input?: string | Uint8Array;
}

type StopReason = "timeout" | "cap" | "abort";

/** SIGKILL the child's process group (spawned with `detached: true`), or the child alone when the group is gone. */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // The group may already be gone; fall back to the direct child.
    try {
      child.kill("SIGKILL");
    } catch {
      /* already exited */
    }
  }
}

function abortError(label: string, tool: string, callable: string | null, signal: AbortSignal | undefined): ToolError {
  const reason: unknown = signal?.reason;
  const timedOut = reason instanceof Error && reason.name === "TimeoutError";
  return new ToolError({
    tool,
    callable,
    code: timedOut ? "TIMEOUT" : "INTERNAL",
    message: `${label} was aborted${timedOut ? " (timeout)" : ""}; the process was killed`,
  });
}

/** Resolve to stdout (UTF-8) when the command exits with an ok code; otherwise reject with ToolError. */
export async function runCommand(argv: readonly string[], opts: RunCommandOptions): Promise<string> {
  // A Python started through a pyenv/asdf shim costs a second per call: start the real one (real-python.ts).
  return runArgv(await withRealPython(argv, { cwd: opts.cwd ?? process.cwd(), env: process.env }), opts);
}

function runArgv(argv: readonly string[], opts: RunCommandOptions): Promise<string> {
  const { tool, callable } = opts;
  const label = opts.label ?? (callable === null ? `tools.${tool}` : `tools.${tool}.${callable}`);
  const executable = argv[0] ?? "";
  const maxStdout = opts.maxStdoutBytes ?? MAX_STDOUT_BYTES;
  const okCodes = opts.okExitCodes ?? [0];

  return new Promise<string>((resolve, reject) => {
    if (opts.signal?.aborted) {
      reject(abortError(label, tool, callable, opts.signal));
      return;
    }
    const error = (code: ToolErrorCode, message: string, extra: { exitCode?: number; stderr?: string } = {}) =>
      new ToolError({ tool, callable, code, message, ...extra });

    let child: ChildProcess;
    try {
      child = spawn(executable, argv.slice(1), {
        stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
        detached: true,
        shell: false,
        cwd: opts.cwd ?? process.cwd(),
        windowsHide: true,
      });
    } catch (e) {
      // Synchronous failures: e.g. an argument containing a NUL byte.
      reject(error("INVALID_INPUT", `${label} could not start '${executable}': ${e instanceof Error ? e.message : String(e)}`));
      return;
    }

    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr: Buffer[] = [];
    let stderrBytes = 0;
    let stopped: StopReason | null = null;
    let spawnError: NodeJS.ErrnoException | null = null;
    let settled = false;

    const stop = (reason: StopReason) => {
      if (stopped || settled) return;
      stopped = reason;
      killGroup(child);
      // A grandchild that left the group (setsid) could hold the pipes open forever.
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, PIPE_GRACE_MS).unref();
    };
    const timer = setTimeout(() => stop("timeout"), Math.min(Math.max(opts.timeoutMs, 1), MAX_TIMER_MS));
    const onAbort = () => stop("abort");
    opts.signal?.addEventListener("abort", onAbort, { once: true });

    if (opts.input !== undefined && child.stdin) {
      // A child that exits without reading all of it closes the pipe (EPIPE): its exit code says what happened.
      child.stdin.on("error", () => undefined);
      child.stdin.end(opts.input);
    }

    child.stdout?.on("data", (chunk: Buffer) => {
      if (stopped) return;
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxStdout) stop("cap");
      else stdout.push(chunk);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr.push(chunk);
      stderrBytes += chunk.length;
      if (stderrBytes > 2 * STDERR_KEEP_BYTES) {
        const all = Buffer.concat(stderr);
        stderr = [all.subarray(all.length - STDERR_KEEP_BYTES)];
        stderrBytes = STDERR_KEEP_BYTES;
      }
    });

    const finish = (outcome: { value: string } | { error: ToolError }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      if ("value" in outcome) resolve(outcome.value);
      else reject(outcome.error);
    };

    child.on("error", (err: NodeJS.ErrnoException) => {
      spawnError = err;
      // When spawn itself failed there is no process and maybe no 'close'; settle now.
      if (child.pid === undefined) finish({ error: spawnFailure(err) });
    });

    const spawnFailure = (err: NodeJS.ErrnoException): ToolError => {
      if (err.code === "ENOENT") {
        const where = executable.includes("/") ? "does not exist" : "was not found on PATH";
        return error("DEPENDENCY", `${label}: command '${executable}' ${where}; install it or fix 'command' in the tool's YAML`);
      }
      if (err.code === "EACCES") return error("PERMISSION", `${label}: command '${executable}' is not executable (permission denied)`);
      return error("INTERNAL", `${label}: could not run '${executable}': ${err.message}`);
    };

    child.on("close", (code: number | null, signal: NodeJS.Signals | null) => {
      const stderrText = Buffer.concat(stderr).toString("utf8").trim();
      const excerpt = stderrText.length > STDERR_EXCERPT_CHARS ? `…${stderrText.slice(-STDERR_EXCERPT_CHARS)}` : stderrText;
      const withStderr = excerpt ? { stderr: excerpt } : {};
      if (spawnError) return finish({ error: spawnFailure(spawnError) });
      if (stopped === "timeout") {
        return finish({ error: error("TIMEOUT", `${label} timed out after ${opts.timeoutMs} ms; the process was killed`, withStderr) });
      }
      if (stopped === "cap") {
        const mib = Math.round((maxStdout / (1024 * 1024)) * 100) / 100;
        return finish({
          error: error("INTERNAL", `${label} produced more than ${mib} MiB of output (the output cap); the process was killed. Narrow the query or write to a file.`, withStderr),
        });
      }
      if (stopped === "abort") return finish({ error: abortError(label, tool, callable, opts.signal) });
      if (code === null) {
        return finish({ error: error("INTERNAL", `${label}: '${executable}' was killed by signal ${signal ?? "unknown"}${excerpt ? `: ${excerpt}` : ""}`, withStderr) });
      }
      if (!okCodes.includes(code)) {
        return finish({
          error: error("INTERNAL", `${label}: '${executable}' exited with code ${code}: ${excerpt || "(no stderr output)"}`, { exitCode: code, ...withStderr }),
        });
      }
      finish({ value: Buffer.concat(stdout).toString("utf8") });
    });
  });
}
