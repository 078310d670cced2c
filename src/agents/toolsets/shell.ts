/**
 * `shell_readonly`: one allow-listed, read-only command per call, split on spaces and run as argv
 * (never through a shell), in the project folder, with a timeout and an output cap.
 * Shell syntax (pipes, redirection, substitution, quoting) is refused rather than half-supported,
 * and so are the options that make an allow-listed command write or run something
 * (`find -exec/-delete`, `sort -o`, `git diff --output`, ...), and paths that leave the folder.
 *
 * `shell`: any argv, with approval, through the session's executor when it can run commands
 * (`exec`, e.g. inside the container executor's container), otherwise as a process on the host.
 */
import { z } from "zod";
import { ToolError } from "../../errors.js";
import { runCommand } from "../../tools/adapters/cli/run.js";
import type { AgentTool, ToolsetEnv } from "./types.js";

export const READONLY_COMMANDS = ["ls", "cat", "head", "tail", "wc", "grep", "find", "sort", "uniq", "git"] as const;
const GIT_SUBCOMMANDS = ["log", "diff", "show", "status"];
export const READONLY_TIMEOUT_MS = 30_000;
export const READONLY_MAX_OUTPUT_BYTES = 50 * 1024;
const SHELL_TIMEOUT_MS = 60_000;
const SHELL_MAX_OUTPUT_BYTES = 1024 * 1024;

/** Shell syntax: we run no shell, so these would be passed literally; refusing says so plainly. */
const METACHARACTERS = /[|><;&`$\\'"\n\r(){}]/;

/** Options (or their prefixes) that write files or run programs. */
const WRITING_OPTIONS: Record<string, RegExp> = {
  find: /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/,
  sort: /^(-o|--output|--compress-program|-T|--temporary-directory)/,
  git: /^(--output|--ext-diff|--textconv|-c$|--exec|--upload-pack|--open-files-in-pager|-O)/,
  grep: /^(--include-from)$/,
};

function refuse(message: string): ToolError {
  return new ToolError({ tool: "shell_readonly", callable: null, code: "PERMISSION", message });
}

/** The argv of an allowed command, or a ToolError saying what was refused and why. */
export function readonlyArgv(command: string): string[] {
  const bad = METACHARACTERS.exec(command);
  if (bad) throw refuse(`refused: ${JSON.stringify(bad[0])} is shell syntax; this tool runs one command without a shell (no pipes, redirection, substitution or quotes; arguments are split on spaces)`);
  const argv = command.trim().split(/\s+/).filter(Boolean);
  const name = argv[0];
  if (name === undefined) throw refuse("refused: empty command");
  if (!(READONLY_COMMANDS as readonly string[]).includes(name)) {
    throw refuse(`refused: ${name} is not an allowed read-only command (allowed: ${READONLY_COMMANDS.join(", ")}; git only with ${GIT_SUBCOMMANDS.join("/")})`);
  }
  if (name === "git" && !GIT_SUBCOMMANDS.includes(argv[1] ?? "")) throw refuse(`refused: git ${argv[1] ?? ""} (allowed: git ${GIT_SUBCOMMANDS.join(", git ")})`);
  for (const arg of argv.slice(1)) {
    const writing = WRITING_OPTIONS[name];
    if (writing?.test(arg)) throw refuse(`refused: ${name} ${arg} can write files or run programs`);
    if (arg.startsWith("/") || arg.startsWith("~") || arg.split("/").includes("..")) throw refuse(`refused: ${arg} points outside the project folder; use relative paths`);
  }
  return argv;
}

export function shellReadonlyToolset(root: string): AgentTool[] {
  return [
    {
      name: "shell_readonly",
      description:
        `Run one read-only command in the project folder: ${READONLY_COMMANDS.join(", ")} (git: ${GIT_SUBCOMMANDS.join(", ")}). ` +
        `No shell: no pipes, redirection, quotes or $; arguments are split on spaces; relative paths only. Output over ${READONLY_MAX_OUTPUT_BYTES / 1024} KB or ${READONLY_TIMEOUT_MS / 1000} s stops the command.`,
      inputSchema: z.object({ command: z.string().min(1).max(4_000).describe("e.g. grep -rn TODO src") }),
      needsApproval: false,
      async execute(args, signal) {
        const argv = readonlyArgv((args as { command: string }).command);
        // grep and diff exit 1 for "no match" / "differences": an answer, not a failure.
        const out = await runCommand(argv, {
          tool: "shell_readonly",
          callable: null,
          timeoutMs: READONLY_TIMEOUT_MS,
          maxStdoutBytes: READONLY_MAX_OUTPUT_BYTES,
          okExitCodes: [0, 1],
          cwd: root,
          signal,
        });
        return out === "" ? "(no output)" : out;
      },
    },
  ];
}

/** What an executor offers when it can run a command where the agent's code runs (e.g. in its container). */
export interface CommandExecutor {
  exec(argv: readonly string[], options: { timeoutMs: number; signal?: AbortSignal }): Promise<{ exitCode: number; stdout: string; stderr: string }>;
}

function canExec(executor: unknown): executor is CommandExecutor {
  return typeof (executor as { exec?: unknown } | null)?.exec === "function";
}

export function shellToolset(env: ToolsetEnv): AgentTool[] {
  return [
    {
      name: "shell",
      description:
        "Run a command given as an argv array (no shell: each element is one argument) where the agent's code runs " +
        "(inside the container with the container executor, otherwise on the host in the project folder). Needs approval.",
      inputSchema: z.object({
        argv: z.array(z.string().max(100_000)).min(1).max(1_000).describe('e.g. ["npm", "test"]'),
        timeout_ms: z.number().int().min(1).max(600_000).optional(),
      }),
      needsApproval: true,
      async execute(args, signal) {
        const a = args as { argv: string[]; timeout_ms?: number };
        const timeoutMs = a.timeout_ms ?? SHELL_TIMEOUT_MS;
        const session = await env.session();
        if (canExec(session.executor)) {
          const r = await session.executor.exec(a.argv, { timeoutMs, signal });
          return [`exit code ${r.exitCode}`, r.stdout && `stdout:\n${r.stdout}`, r.stderr && `stderr:\n${r.stderr}`].filter(Boolean).join("\n").slice(0, env.maxOutputChars);
        }
        const out = await runCommand(a.argv, { tool: "shell", callable: null, timeoutMs, maxStdoutBytes: SHELL_MAX_OUTPUT_BYTES, cwd: env.projectDir, signal });
        return `exit code 0\n${out}`.slice(0, env.maxOutputChars);
      },
    },
  ];
}
