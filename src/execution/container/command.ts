/**
 * Programs run inside the session's container for the host: command-line tools (`type: cli`)
 * and anything else that must see the guest's files and nothing of the host's.
 *
 * `runArgvIn` is the one seam: an argv (never parsed by a shell), with cwd, env and a timeout, run
 * through the engine's exec API by exec.ts's wrapper (own process group, killed at the deadline,
 * exit 124). stdout and stderr come back apart, each capped. A cap or an abort kills the program
 * at once: every process of the call carries a unique TCM_CALL marker in its environment, and a
 * helper exec kills the processes that carry it (exec.ts's output-only approach would let it run
 * on to its timeout).
 *
 * `containerCommandRunner` turns it into the CommandRunner a CLI tool call uses, with the host
 * runner's errors (cli/run.ts), and says how to fix a command missing from the image.
 */
import { randomUUID } from "node:crypto";
import { PassThrough } from "node:stream";
import type Docker from "dockerode";
import { ToolError, type ToolErrorCode } from "../../errors.js";
import { MAX_STDOUT_BYTES, STDERR_EXCERPT_CHARS } from "../../tools/adapters/cli/run.js";
import type { CommandCall, CommandRunner } from "../../tools/protocol.js";
import { EXEC_WRAPPER, execExitCode } from "./exec.js";

export interface ArgvRunOptions {
  /** Working directory inside the container (absolute). */
  cwd: string;
  /** "uid" or "uid:gid" inside the container. */
  user: string;
  timeoutMs: number;
  /** Added to the container's environment (the host's is never passed). */
  env?: Record<string, string>;
  signal?: AbortSignal;
  /** stdout past this many bytes stops the program (default 16 MiB, as on the host). */
  maxStdoutBytes?: number;
}

export interface ArgvRunResult {
  stdout: string;
  /** The end of stderr (64 KiB at most). */
  stderr: string;
  /** The program's exit code; 124 when stopped at the timeout, 127 when it could not start, -1 when unknown. */
  exitCode: number;
  /** Why it was stopped early, if it was. */
  stopped: "cap" | "abort" | "timeout" | null;
}

const STDERR_KEEP_CHARS = 64 * 1024;
/** What the host waits past the timeout for the in-container wrapper to report. */
const HOST_GRACE_MS = 5_000;
/** Inside: SIGKILLs the process groups whose environment holds TCM_CALL=<id>. */
const KILL_MARKED = `const fs = require("node:fs"); const mark = "TCM_CALL=" + process.argv[1];
for (const p of fs.readdirSync("/proc")) {
  if (!/^\\d+$/.test(p) || Number(p) === process.pid) continue;
  let env = []; try { env = fs.readFileSync("/proc/" + p + "/environ", "utf8").split("\\0"); } catch { continue; }
  if (!env.includes(mark)) continue;
  try { process.kill(-Number(p), "SIGKILL"); } catch {} try { process.kill(Number(p), "SIGKILL"); } catch {}
}`;

/** Run argv inside `container`; never rejects for the program's own failure (see exitCode). */
export async function runArgvIn(container: Docker.Container, argv: readonly string[], options: ArgvRunOptions): Promise<ArgvRunResult> {
  const id = randomUUID();
  const env = Object.entries({ ...options.env, TCM_CALL: id }).map(([k, v]) => `${k}=${v}`);
  const maxStdout = options.maxStdoutBytes ?? MAX_STDOUT_BYTES;
  let stopped: ArgvRunResult["stopped"] = null;
  const killInside = async () => {
    const k = await container.exec({ Cmd: ["node", "-e", KILL_MARKED, id], AttachStdout: true, AttachStderr: true, User: options.user });
    const s = await k.start({ hijack: true, stdin: false });
    await new Promise<void>((resolve) => {
      s.once("end", () => resolve());
      s.once("close", () => resolve());
      s.once("error", () => resolve());
      s.resume();
    });
  };
  if (options.signal?.aborted) return { stdout: "", stderr: "", exitCode: -1, stopped: "abort" };

  const exec = await container.exec({
    Cmd: ["node", "-e", EXEC_WRAPPER, String(options.timeoutMs), ...argv],
    AttachStdout: true,
    AttachStderr: true,
    AttachStdin: false,
    Tty: false,
    WorkingDir: options.cwd,
    User: options.user,
    Env: env,
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  const out = new PassThrough();
  const err = new PassThrough();
  const stdout: Buffer[] = [];
  let stdoutBytes = 0;
  let stderr = "";
  let killing: Promise<void> | null = null;
  const stop = (why: "cap" | "abort") => {
    if (stopped) return;
    stopped = why;
    killing = killInside().catch(() => undefined);
  };
  out.on("data", (chunk: Buffer) => {
    if (stopped) return;
    stdoutBytes += chunk.length;
    if (stdoutBytes > maxStdout) stop("cap");
    else stdout.push(chunk);
  });
  err.setEncoding("utf8");
  err.on("data", (chunk: string) => {
    stderr += chunk;
    if (stderr.length > 2 * STDERR_KEEP_CHARS) stderr = stderr.slice(-STDERR_KEEP_CHARS);
  });
  container.modem.demuxStream(stream, out, err);
  const onAbort = () => stop("abort");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const ended = await Promise.race([
      new Promise<boolean>((resolve) => {
        stream.once("end", () => resolve(true));
        stream.once("close", () => resolve(true));
        stream.once("error", () => resolve(true));
      }),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), options.timeoutMs + HOST_GRACE_MS))),
    ]);
    if (!ended) {
      (stream as { destroy?: () => void }).destroy?.();
      stopped ??= "timeout";
      await killInside().catch(() => undefined);
    }
    await killing;
    const exitCode = ended ? await execExitCode(exec) : -1;
    if (exitCode === 124 && !stopped) stopped = "timeout";
    return { stdout: Buffer.concat(stdout).toString("utf8"), stderr: stderr.slice(-STDERR_KEEP_CHARS), exitCode, stopped };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * A CLI tool's runner for a container session: the same results and ToolErrors as the host's
 * runCommand, the command run by `runArgvIn` in the container `container()` resolves to.
 */
export function containerCommandRunner(container: () => Promise<Docker.Container>, place: { cwd: string; user: string; image: string }): CommandRunner {
  return async (argv: readonly string[], call: CommandCall): Promise<string> => {
    const label = call.callable === null ? `tools.${call.tool}` : `tools.${call.tool}.${call.callable}`;
    const executable = argv[0] ?? "";
    const error = (code: ToolErrorCode, message: string, extra: { exitCode?: number; stderr?: string } = {}) =>
      new ToolError({ tool: call.tool, callable: call.callable, code, message, ...extra });
    if (call.signal?.aborted) throw error("INTERNAL", `${label} was aborted; the process was killed`);
    const r = await runArgvIn(await container(), argv, { cwd: place.cwd, user: place.user, timeoutMs: Math.max(1, Math.floor(call.timeoutMs)), ...(call.signal ? { signal: call.signal } : {}) });
    const text = r.stderr.trim();
    const excerpt = text.length > STDERR_EXCERPT_CHARS ? `…${text.slice(-STDERR_EXCERPT_CHARS)}` : text;
    const withStderr = excerpt ? { stderr: excerpt } : {};
    if (r.stopped === "abort") {
      const reason: unknown = call.signal?.reason;
      const timedOut = reason instanceof Error && reason.name === "TimeoutError";
      throw error(timedOut ? "TIMEOUT" : "INTERNAL", `${label} was aborted${timedOut ? " (timeout)" : ""}; the process was killed`);
    }
    if (r.stopped === "timeout") throw error("TIMEOUT", `${label} timed out after ${call.timeoutMs} ms inside the container; the process was killed`, withStderr);
    if (r.stopped === "cap") throw error("INTERNAL", `${label} produced more than ${Math.round((MAX_STDOUT_BYTES / 1048576) * 100) / 100} MiB of output (the output cap); the process was killed. Narrow the query or write to a file.`, withStderr);
    // The wrapper exits 127 with the spawn error when the program is not there.
    if (r.exitCode === 127 && /\bENOENT\b/.test(text)) {
      throw error(
        "DEPENDENCY",
        `${label}: command '${executable}' is not in the container image ${place.image}; add it with \`ts-code-mode image build --with ${executable.split("/").pop() ?? executable}\` (and use that image), or give the tool's YAML runs_on: host to run it on the host`,
      );
    }
    if (r.exitCode === 127 && /\bEACCES\b/.test(text)) throw error("PERMISSION", `${label}: command '${executable}' is not executable inside the container (permission denied)`);
    if (r.exitCode < 0) throw error("INTERNAL", `${label}: the container went away while '${executable}' ran`, withStderr);
    if (!(call.okExitCodes ?? [0]).includes(r.exitCode)) {
      throw error("INTERNAL", `${label}: '${executable}' exited with code ${r.exitCode} inside the container: ${excerpt || "(no stderr output)"}`, { exitCode: r.exitCode, ...withStderr });
    }
    return r.stdout;
  };
}
