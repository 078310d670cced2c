/**
 * Programs run inside the session's container for the host: command-line tools (`type: cli`),
 * toolable executables, skill scripts, and anything else that must see the guest's files and
 * nothing of the host's.
 *
 * `spawnIn` is the one seam: an argv (never parsed by a shell), with cwd and env, started by the
 * container's resident runner (runner.ts: one long-lived process per container, so a call costs a
 * spawn, not an engine exec), or, when no runner can run, through the engine's exec API by
 * exec.ts's wrapper. Either way: its own process group, exit 124 at its deadline (if given),
 * stdin, stdout and stderr streamed apart, and a kill stops it at once (every process of the call
 * carries a unique TCM_CALL marker in its environment; the groups carrying it are killed). `runArgvIn` collects a run's output (capped) on top of it;
 * `containerPlace` is the CommandPlace a container session gives its tools.
 */
import { randomUUID } from "node:crypto";
import { PassThrough } from "node:stream";
import type Docker from "dockerode";
import type { ArgvRunOptions, ArgvRunResult, ProgramLauncher } from "./types.js";
export type { ProgramLauncher } from "./types.js";

export type { ArgvRunOptions, ArgvRunResult } from "./types.js";
import { ToolError, type ToolErrorCode } from "../../errors.js";
import { MAX_STDOUT_BYTES, STDERR_EXCERPT_CHARS } from "../../tools/adapters/cli/run.js";
import type { CommandCall, CommandPlace, CommandRunner, ProgramExit, RunningProgram } from "../../tools/protocol.js";
import { EXEC_WRAPPER, execExitCode, START_FAILURE_MARK } from "./exec.js";
import { killMarked, residentRunner, RUNNER_LOST_LINE, type ProgramIo, type StartedProgram } from "./runner.js";



export interface SpawnInOptions {
  cwd: string;
  user: string;
  env?: Record<string, string>;
  /** The in-container wrapper kills the program's group at this deadline (exit 124); 0 or absent: the caller stops it. */
  timeoutMs?: number;
  /** "runner" (default): the container's resident runner, one exec when none can run; "exec": one engine exec per program. */
  via?: ProgramLauncher;
}

/** How a program is started inside the container (ContainerExecutorOptions.commandRunner). */

const STDERR_KEEP_CHARS = 64 * 1024;
/** What the host waits past the timeout for the in-container wrapper to report. */
const HOST_GRACE_MS = 5_000;
/** After a kill, how long the exec stream may stay open before the host drops it (an engine that stopped answering). */
const KILL_GRACE_MS = 5_000;
/**
 * Start argv inside the container `container()` resolves to: through the container's resident
 * runner (runner.ts) when it has one or can start one, else through one engine exec of its own.
 * Never throws: an engine failure or a program that cannot start arrives in `exit` (startError).
 */
export function spawnIn(container: () => Promise<Docker.Container>, argv: readonly string[], options: SpawnInOptions): RunningProgram {
  const io: ProgramIo = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
  const id = randomUUID();
  let started: StartedProgram | null = null;
  let killed = false;
  const kill = () => {
    if (killed) return;
    killed = true;
    started?.kill();
  };
  const exit = (async (): Promise<ProgramExit> => {
    try {
      const c = await container();
      if (killed) return { code: null, signal: "SIGKILL" };
      const runner = options.via === "exec" ? null : await residentRunner(c, options.user);
      if (killed) return { code: null, signal: "SIGKILL" };
      started = runner?.start(argv, options, io, id) ?? execProgram(c, argv, options, io, id);
      // A kill that came while the program was being started.
      if (killed) started.kill();
      return await started.exit;
    } catch (e) {
      return { code: null, signal: null, startError: { code: "EENGINE", message: `the container engine failed: ${e instanceof Error ? e.message : String(e)}` } };
    } finally {
      io.stdout.end();
      io.stderr.end();
    }
  })();
  return { ...io, exit, kill };
}

/**
 * One program as one engine exec (the way without a runner): exec.ts's wrapper runs it in its own
 * process group and stops it at the deadline; a kill runs a helper exec that kills the groups
 * carrying the call's TCM_CALL marker.
 */
function execProgram(c: Docker.Container, argv: readonly string[], options: SpawnInOptions, io: ProgramIo, id: string): StartedProgram {
  let stream: NodeJS.ReadWriteStream | null = null;
  let running = false;
  let killed = false;
  const kill = () => {
    if (killed) return;
    killed = true;
    if (running) void killMarked(c, id, options.user).catch(() => undefined);
    // An engine that no longer answers must not keep the call open forever.
    setTimeout(() => (stream as { destroy?: () => void } | null)?.destroy?.(), KILL_GRACE_MS).unref();
  };
  const exit = (async (): Promise<ProgramExit> => {
    let tail = "";
    const env = Object.entries({ ...options.env, TCM_CALL: id }).map(([k, v]) => `${k}=${v}`);
    const exec = await c.exec({
      Cmd: ["node", "-e", EXEC_WRAPPER, String(options.timeoutMs ?? 0), ...argv],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      WorkingDir: options.cwd,
      User: options.user,
      Env: env,
    });
    if (killed) return { code: null, signal: "SIGKILL" };
    const s = await exec.start({ hijack: true, stdin: true });
    stream = s;
    running = true;
    // A kill that came while the exec was being started: the program may have started already.
    if (killed) void killMarked(c, id, options.user).catch(() => undefined);
    s.on("error", () => undefined);
    // Ending stdin half-closes the exec's stream: the program reads EOF.
    io.stdin.pipe(s);
    const err = new PassThrough();
    err.on("data", (chunk: Buffer) => {
      tail = (tail + chunk.toString("utf8")).slice(-4_096);
      io.stderr.write(chunk);
    });
    c.modem.demuxStream(s, io.stdout, err);
    await new Promise<void>((resolve) => {
      s.once("end", () => resolve());
      s.once("close", () => resolve());
      s.once("error", () => resolve());
    });
    io.stdin.unpipe(s);
    const code = await execExitCode(exec);
    const mark = tail.lastIndexOf(START_FAILURE_MARK);
    if (code === 127 && mark !== -1) {
      const [errno = "EINVAL", ...rest] = tail.slice(mark + START_FAILURE_MARK.length).trim().split(": ");
      return { code: null, signal: null, startError: { code: errno, message: rest.join(": ").trim() } };
    }
    if (code < 0) return { code: null, signal: killed ? "SIGKILL" : null };
    return { code, signal: null };
  })();
  return { exit, kill };
}

/** Run argv inside `container`; never rejects for the program's own failure (see exitCode). */
export async function runArgvIn(container: Docker.Container, argv: readonly string[], options: ArgvRunOptions): Promise<ArgvRunResult> {
  if (options.signal?.aborted) return { stdout: "", stderr: "", exitCode: -1, stopped: "abort" };
  const maxStdout = options.maxStdoutBytes ?? MAX_STDOUT_BYTES;
  const p = spawnIn(() => Promise.resolve(container), argv, { cwd: options.cwd, user: options.user, timeoutMs: options.timeoutMs, ...(options.env ? { env: options.env } : {}), ...(options.via ? { via: options.via } : {}) });
  p.stdin.end();
  const stdout: Buffer[] = [];
  let stdoutBytes = 0;
  let stderr = "";
  let stopped: ArgvRunResult["stopped"] = null;
  const stop = (why: "cap" | "abort" | "timeout") => {
    if (stopped) return;
    stopped = why;
    p.kill();
  };
  p.stdout.on("data", (chunk: Buffer) => {
    if (stopped) return;
    stdoutBytes += chunk.length;
    if (stdoutBytes > maxStdout) stop("cap");
    else stdout.push(chunk);
  });
  p.stderr.setEncoding("utf8");
  p.stderr.on("data", (chunk: string) => {
    stderr += chunk;
    if (stderr.length > 2 * STDERR_KEEP_CHARS) stderr = stderr.slice(-STDERR_KEEP_CHARS);
  });
  const onAbort = () => stop("abort");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  // The wrapper inside stops the program at timeoutMs; this is for a wrapper that cannot report.
  const timer = setTimeout(() => stop("timeout"), options.timeoutMs + HOST_GRACE_MS);
  try {
    const e = await p.exit;
    const exitCode = e.startError ? 127 : (e.code ?? -1);
    if (exitCode === 124 && !stopped) stopped = "timeout";
    return { stdout: Buffer.concat(stdout).toString("utf8"), stderr: stderr.slice(-STDERR_KEEP_CHARS), exitCode, stopped, ...(e.startError ? { startError: e.startError } : {}) };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/** Where and how a container session runs its programs. */
export interface PlaceOptions {
  cwd: string;
  user: string;
  image: string;
  via?: ProgramLauncher;
}

/**
 * A CLI tool's runner for a container session: the same results and ToolErrors as the host's
 * runCommand, the command run by `runArgvIn` in the container `container()` resolves to.
 */
export function containerCommandRunner(container: () => Promise<Docker.Container>, place: PlaceOptions): CommandRunner {
  return async (argv: readonly string[], call: CommandCall): Promise<string> => {
    const label = call.label ?? (call.callable === null ? `tools.${call.tool}` : `tools.${call.tool}.${call.callable}`);
    const maxStdout = call.maxStdoutBytes ?? MAX_STDOUT_BYTES;
    const executable = argv[0] ?? "";
    const error = (code: ToolErrorCode, message: string, extra: { exitCode?: number; stderr?: string } = {}) =>
      new ToolError({ tool: call.tool, callable: call.callable, code, message, ...extra });
    if (call.signal?.aborted) throw error("INTERNAL", `${label} was aborted; the process was killed`);
    const r = await runArgvIn(await container(), argv, { cwd: place.cwd, user: place.user, timeoutMs: Math.max(1, Math.floor(call.timeoutMs)), maxStdoutBytes: maxStdout, ...(call.signal ? { signal: call.signal } : {}), ...(place.via ? { via: place.via } : {}) });
    const text = r.stderr.trim();
    const excerpt = text.length > STDERR_EXCERPT_CHARS ? `…${text.slice(-STDERR_EXCERPT_CHARS)}` : text;
    const withStderr = excerpt ? { stderr: excerpt } : {};
    if (r.stopped === "abort") {
      const reason: unknown = call.signal?.reason;
      const timedOut = reason instanceof Error && reason.name === "TimeoutError";
      throw error(timedOut ? "TIMEOUT" : "INTERNAL", `${label} was aborted${timedOut ? " (timeout)" : ""}; the process was killed`);
    }
    if (r.stopped === "timeout") throw error("TIMEOUT", `${label} timed out after ${call.timeoutMs} ms inside the container; the process was killed`, withStderr);
    if (r.stopped === "cap") throw error("INTERNAL", `${label} produced more than ${Math.round((maxStdout / 1048576) * 100) / 100} MiB of output (the output cap); the process was killed. Narrow the query or write to a file.`, withStderr);
    if (r.startError?.code === "ENOENT") {
      throw error("DEPENDENCY", `${label}: command '${executable}' is not in the container image ${place.image}; ${fixFor(place.image, executable)}, or give the tool's YAML runs_on: host to run it on the host`);
    }
    if (r.startError?.code === "EACCES") throw error("PERMISSION", `${label}: command '${executable}' is not executable inside the container (permission denied)`);
    if (r.startError) throw error("INTERNAL", `${label}: could not run '${executable}' inside the container: ${r.startError.message}`);
    if (r.exitCode < 0) {
      const why = text.includes(RUNNER_LOST_LINE.trim()) ? "the command runner inside the container stopped (the next call starts a fresh one)" : "the container went away";
      throw error("INTERNAL", `${label}: ${why} while '${executable}' ran`, withStderr);
    }
    if (!(call.okExitCodes ?? [0]).includes(r.exitCode)) {
      throw error("INTERNAL", `${label}: '${executable}' exited with code ${r.exitCode} inside the container: ${excerpt || "(no stderr output)"}`, { exitCode: r.exitCode, ...withStderr });
    }
    return r.stdout;
  };
}

/** How to get `command` into the image, for messages. */
export function fixFor(image: string, command: string): string {
  return `add it with \`ts-code-mode image build --with ${command.split("/").pop() ?? command}\` (and use that image instead of ${image})`;
}

/** The CommandPlace of a container session: tools' programs run in the container `container()` resolves to. */
export function containerPlace(container: () => Promise<Docker.Container>, place: PlaceOptions): CommandPlace {
  return {
    where: `the container (image ${place.image})`,
    run: containerCommandRunner(container, place),
    spawn: (argv, options) => spawnIn(container, argv, { cwd: options.cwd ?? place.cwd, user: place.user, ...(options.env ? { env: options.env } : {}), ...(place.via ? { via: place.via } : {}) }),
    fixFor: (command) => fixFor(place.image, command),
  };
}
