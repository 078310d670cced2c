/**
 * Shell commands inside the executor's container (the deep agent's `execute`): `session.exec()`
 * and, for agent code, the `shell` tool (`tools.shell.exec({ command })`), which goes through the
 * tool registry so middleware (deny, approval, audit, limits) applies like to any tool call.
 *
 * A command is an argv array, run as is, or a string, run by `/bin/sh -c` INSIDE the container
 * (never by a host shell). Inside, a small node wrapper runs it in its own process group and
 * kills the group at the timeout (exit code 124), so nothing it started lingers; the host keeps
 * its own deadline too. Output (stdout and stderr interleaved) is capped; past the cap it is
 * drained and dropped, and `truncated` says so.
 */
import { PassThrough } from "node:stream";
import { z } from "zod";
import { lazy } from "../../lazy.js";
import { ToolError, ValidationError } from "../../errors.js";
import type { CallContext, ToolAdapter, ToolInfo } from "../../tools/protocol.js";
import type Docker from "dockerode";
import type { ExecOptions, ExecResult } from "./types.js";

export type { ExecOptions, ExecResult } from "./types.js";



export const DEFAULT_EXEC_TIMEOUT_MS = 30_000;
export const MAX_EXEC_OUTPUT_CHARS = 100_000;
/** The wrapper's stderr line for a command that could not start: `<mark> ENOENT: spawn x ENOENT`. */
export const START_FAILURE_MARK = "[ts-code-mode] cannot start:";
/** What the host waits past the timeout for the in-container wrapper to report before giving up. */
const HOST_GRACE_MS = 5_000;

export const execInputSchema = lazy(() => z.strictObject({
  command: z.union([z.string().min(1, "must not be empty").max(100_000), z.array(z.string().max(100_000)).min(1, "must name a program").max(1_000)], {
    error: "must be a string (run by /bin/sh -c inside the container) or an argv array of strings",
  }),
  timeoutMs: z.number().int().min(1).max(3_600_000).optional(),
  cwd: z.string().startsWith("/", "must be an absolute path inside the container").max(4_096).optional(),
}));

/**
 * Runs inside the container as `node -e WRAPPER <timeoutMs> <argv...>`: argv arrives as separate
 * process arguments (never parsed by a shell); the wrapper kills the command's whole group at the
 * deadline (0: none; the host stops it) and exits 124. The command inherits the exec's stdin. A
 * command that cannot start exits 127 with a `[ts-code-mode] cannot start` line naming the errno.
 */
export const EXEC_WRAPPER = `
const [t, file, ...args] = process.argv.slice(1);
const { spawn } = require("node:child_process");
let timedOut = false;
const child = spawn(file, args, { stdio: "inherit", detached: true });
const timer = Number(t) > 0 ? setTimeout(() => { timedOut = true; try { process.kill(-child.pid, "SIGKILL"); } catch {} }, Math.min(Number(t), 2147483647)) : undefined;
child.on("error", (e) => { clearTimeout(timer); process.stderr.write("${START_FAILURE_MARK} " + (e.code || "EINVAL") + ": " + String(e.message) + "\\n"); process.exit(127); });
child.on("exit", (code, signal) => {
  clearTimeout(timer);
  try { process.kill(-child.pid, "SIGKILL"); } catch {}
  if (timedOut) { process.stderr.write("[ts-code-mode] command stopped at its timeout of " + t + " ms\\n"); process.exit(124); }
  process.exit(code ?? 128 + (require("node:os").constants.signals[signal] ?? 0));
});`;

export async function execIn(container: Docker.Container, command: string | string[], options: ExecOptions & { workdir: string; user: string }): Promise<ExecResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
  const argv = typeof command === "string" ? ["/bin/sh", "-c", command] : command;
  const exec = await container.exec({
    Cmd: ["node", "-e", EXEC_WRAPPER, String(timeoutMs), ...argv],
    AttachStdout: true,
    AttachStderr: true,
    AttachStdin: false,
    Tty: false,
    WorkingDir: options.cwd ?? options.workdir,
    User: options.user,
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  const sink = new PassThrough();
  let output = "";
  let truncated = false;
  sink.setEncoding("utf8");
  sink.on("data", (chunk: string) => {
    const room = MAX_EXEC_OUTPUT_CHARS - output.length;
    if (chunk.length > room) truncated = true;
    if (room > 0) output += chunk.slice(0, room);
  });
  container.modem.demuxStream(stream, sink, sink);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ended = await Promise.race([
    new Promise<boolean>((resolve) => {
      stream.once("end", () => resolve(true));
      stream.once("close", () => resolve(true));
      stream.once("error", () => resolve(true));
    }),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs + HOST_GRACE_MS))),
  ]);
  clearTimeout(timer);
  if (!ended) (stream as { destroy?: () => void }).destroy?.();
  const exitCode = ended ? await execExitCode(exec) : 124;
  return { output, exitCode, truncated };
}

/** The exit code of a finished exec, or -1 when the engine cannot say (the container went away). */
export async function execExitCode(exec: { inspect(): Promise<{ ExitCode?: number | null }> }): Promise<number> {
  try {
    const info = await exec.inspect();
    return typeof info.ExitCode === "number" ? info.ExitCode : -1;
  } catch {
    return -1;
  }
}

/** The `shell` tool: `tools.shell.exec({ command, timeoutMs?, cwd? })` in agent code. */
export class ShellAdapter implements ToolAdapter {
  readonly name = "shell";

  constructor(private readonly run: (command: string | string[], options: ExecOptions, ctx: CallContext) => Promise<ExecResult>) {}

  async info(): Promise<ToolInfo> {
    return {
      name: "shell",
      type: "toolable",
      description: "Run a shell command inside the executor's container (workdir /workspace by default): a string runs under /bin/sh -c, an array runs as argv. Returns { output, exitCode, truncated }.",
      tags: ["shell", "exec", "command"],
      direct: null,
      callables: [
        {
          name: "exec",
          description: "Run a command in the container; output is stdout and stderr interleaved, capped",
          params: [
            { name: "command", type: "unknown", required: true, description: "a string (run by /bin/sh -c inside the container) or an argv array" },
            { name: "timeoutMs", type: "integer", required: false, description: `default ${DEFAULT_EXEC_TIMEOUT_MS}` },
            { name: "cwd", type: "string", required: false, description: "absolute path inside the container" },
          ],
          returns: "{ output: string; exitCode: number; truncated: boolean }",
        },
      ],
    };
  }

  async call(callable: string | null, args: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
    if (callable !== "exec") throw new ToolError({ tool: "shell", callable, code: "INVALID_INPUT", message: "shell has one callable: exec({ command, timeoutMs?, cwd? })" });
    const parsed = execInputSchema.safeParse(args);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ToolError({ tool: "shell", callable, code: "INVALID_INPUT", message: `shell.exec: ${issue?.path.join(".") || "args"} ${issue?.message ?? "is invalid"}` });
    }
    const { command, ...options } = parsed.data;
    // A run's remaining time bounds the command too.
    const timeoutMs = Math.min(options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS, ctx.timeoutMs ?? Number.POSITIVE_INFINITY);
    return this.run(command, { ...options, timeoutMs: Math.max(1, Math.floor(timeoutMs)) }, ctx);
  }

  async close(): Promise<void> {}
}

export function parseExecInput(command: unknown, options: unknown): z.infer<typeof execInputSchema> {
  const parsed = execInputSchema.safeParse({ command, ...(typeof options === "object" && options !== null ? options : {}) });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ValidationError(`exec: ${issue?.path.join(".") || "options"} ${issue?.message ?? "is invalid"}`);
  }
  return parsed.data;
}
