/**
 * `shell_readonly`: one allow-listed, read-only command per call, split on spaces and run as argv
 * (never through a shell), with a timeout and an output cap: in a container session inside the
 * session's container (in its workdir, seeing exactly what the code sees), otherwise in the
 * project folder inside a bubblewrap sandbox that sees the project read-only and nothing else of
 * the host (refused when bwrap is missing).
 * Shell syntax (pipes, redirection, substitution, quoting) is refused rather than half-supported,
 * and so are the options that make an allow-listed command write or run something
 * (`find -exec/-delete`, `sort -o`, `git diff --output`, ...), and paths that leave the folder.
 *
 * `shell`: any argv, with approval, through the session's executor when it can run commands
 * (`exec`, e.g. inside the container executor's container), otherwise as a process on the host.
 */
import { z } from "zod";
import { ToolError } from "../../errors.js";
import { confinedArgv } from "../../tools/adapters/cli/confine.js";
import { runCommand } from "../../tools/adapters/cli/run.js";
import { READONLY_COMMAND_NAMES } from "./readonly-commands.js";
import type { ExecResult } from "../../execution/container/types.js";
import type { CommandPlace } from "../../tools/protocol.js";
import type { AgentTool, ToolsetEnv } from "./types.js";

export const READONLY_COMMANDS = READONLY_COMMAND_NAMES;
const GIT_SUBCOMMANDS = ["log", "diff", "show", "status"];
export const READONLY_TIMEOUT_MS = 30_000;
export const READONLY_MAX_OUTPUT_BYTES = 50 * 1024;
const SHELL_TIMEOUT_MS = 60_000;
const SHELL_MAX_OUTPUT_BYTES = 1024 * 1024;

/** Shell syntax: we run no shell, so these would be passed literally; refusing says so plainly. */
const METACHARACTERS = /[|><;&`$\\'"\n\r(){}]/;

/**
 * The second layer (the first is the sandbox, tools/adapters/cli/confine.ts): options that write
 * files, run programs or read a file list from elsewhere. Long options are refused by any prefix,
 * because GNU getopt and git accept unambiguous abbreviations (`--compress-prog`, `--ou=`); short
 * options are read as getopt reads a cluster (`-uo/tmp/x` is `-u -o /tmp/x`).
 */
interface OptionRules {
  long?: readonly string[];
  /** Short flags refused anywhere in a cluster. */
  short?: string;
  /** Short flags that take a value: the rest of the cluster (or the next word) is that value. */
  shortWithValue?: string;
  /** Single-dash words refused whole (find's predicates). */
  words?: RegExp;
  /** At most this many operands (uniq's second operand is its output file). */
  maxOperands?: number;
}
const OPTION_RULES: Record<string, OptionRules> = {
  find: { words: /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls|files0-from)$/ },
  sort: { long: ["output", "compress-program", "temporary-directory", "files0-from", "random-source"], short: "oT", shortWithValue: "kStTo" },
  uniq: { shortWithValue: "fsw", maxOperands: 1 },
  wc: { long: ["files0-from"] },
  git: { long: ["output", "ext-diff", "textconv", "exec", "upload-pack", "open-files-in-pager", "exec-path", "git-dir", "work-tree", "config-env"] },
};

function checkOptions(name: string, args: readonly string[]): void {
  const rules = OPTION_RULES[name] ?? {};
  let operands = 0;
  let afterDashDash = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (afterDashDash || !arg.startsWith("-") || arg === "-") {
      operands++;
    } else if (arg === "--") {
      afterDashDash = true;
    } else if (arg.startsWith("--")) {
      const [flag = "", value] = arg.slice(2).split(/=(.*)/s, 2);
      if (rules.long?.some((l) => l.startsWith(flag))) throw refuse(`refused: ${name} ${arg} can write files, run programs or read files named elsewhere (--${flag} abbreviates ${rules.long.filter((l) => l.startsWith(flag)).map((l) => `--${l}`).join(" or ")})`);
      if (value !== undefined && outside(value)) throw refuse(`refused: ${arg} points outside the project folder; use relative paths`);
    } else if (rules.words?.test(arg)) {
      throw refuse(`refused: ${name} ${arg} can write files or run programs`);
    } else if (name !== "find") {
      for (let j = 1; j < arg.length; j++) {
        const c = arg[j]!;
        if (rules.short?.includes(c)) throw refuse(`refused: ${name} -${c} can write files or run programs (in ${arg})`);
        if (rules.shortWithValue?.includes(c)) {
          if (j === arg.length - 1) i++; // the value is the next word
          break;
        }
      }
    }
  }
  if (rules.maxOperands !== undefined && operands > rules.maxOperands) {
    throw refuse(`refused: ${name} takes at most ${rules.maxOperands} file here (a further operand is a file it writes)`);
  }
}

const outside = (arg: string) => arg.startsWith("/") || arg.startsWith("~") || arg.split("/").includes("..");

function refuse(message: string): ToolError {
  return new ToolError({ tool: "shell_readonly", callable: null, code: "PERMISSION", message });
}

/** The argv of an allowed command, or a ToolError saying what was refused and why. */
export function readonlyArgv(command: string, allowed: readonly string[] = READONLY_COMMANDS): string[] {
  const bad = METACHARACTERS.exec(command);
  if (bad) throw refuse(`refused: ${JSON.stringify(bad[0])} is shell syntax; this tool runs one command without a shell (no pipes, redirection, substitution or quotes; arguments are split on spaces)`);
  const argv = command.trim().split(/\s+/).filter(Boolean);
  const name = argv[0];
  if (name === undefined) throw refuse("refused: empty command");
  if (!allowed.includes(name)) {
    throw refuse(`refused: ${name} is not an allowed read-only command (allowed: ${allowed.join(", ")}${allowed.includes("git") ? `; git only with ${GIT_SUBCOMMANDS.join("/")}` : ""})`);
  }
  if (name === "git" && !GIT_SUBCOMMANDS.includes(argv[1] ?? "")) throw refuse(`refused: git ${argv[1] ?? ""} (allowed: git ${GIT_SUBCOMMANDS.join(", git ")})`);
  for (const arg of argv.slice(1)) {
    if (outside(arg)) throw refuse(`refused: ${arg} points outside the project folder; use relative paths`);
  }
  checkOptions(name, argv.slice(name === "git" ? 2 : 1));
  return argv;
}

export interface ShellReadonlyOptions {
  /** A subset of READONLY_COMMANDS (the agent file's allowed_commands); default all of them. */
  allowedCommands?: readonly string[];
  /** Where bwrap is (default: `$TS_CODE_MODE_BWRAP`, else `bwrap` on PATH, looked up per call). */
  bwrap?: string;
  /**
   * A container session's place (ContainerExecutor.commandPlace): commands run inside it instead
   * of under bwrap on the host. Called per command; the session starts on first use.
   */
  place?: () => Promise<CommandPlace>;
}

/**
 * The command place of a container session's executor (ContainerExecutor.commandPlace). A session
 * whose executor has none (an embedding's own) is refused, never run unconfined.
 */
export function sessionCommandPlace(session: { executor: unknown }): CommandPlace {
  const place = (session.executor as { commandPlace?: unknown } | null)?.commandPlace;
  if (typeof place === "object" && place !== null && typeof (place as CommandPlace).run === "function") return place as CommandPlace;
  throw refuse('shell_readonly: code_mode.executor is "container" but this session\'s executor runs no commands in a container; refused rather than run unconfined');
}

export function shellReadonlyToolset(root: string, options: ShellReadonlyOptions = {}): AgentTool[] {
  const allowed = options.allowedCommands ?? READONLY_COMMANDS;
  return [
    {
      name: "shell_readonly",
      description:
        `Run one read-only command ${options.place ? "inside the session's container, in its working folder" : "in the project folder"}: ${allowed.join(", ")}${allowed.includes("git") ? ` (git: ${GIT_SUBCOMMANDS.join(", ")})` : ""}. ` +
        (options.place
          ? "It sees exactly the files run_code's code sees, and nothing of the host outside the container's mounts. "
          : "It runs in a sandbox that sees the project (read-only) and nothing else: no network, no files outside, symlinks out of the project dangle. ") +
        `No shell: no pipes, redirection, quotes or $; arguments are split on spaces; relative paths only. Output over ${READONLY_MAX_OUTPUT_BYTES / 1024} KB or ${READONLY_TIMEOUT_MS / 1000} s stops the command.`,
      inputSchema: z.object({ command: z.string().min(1).max(4_000).describe("e.g. grep -rn TODO src") }),
      needsApproval: false,
      async execute(args, signal) {
        const argv = readonlyArgv((args as { command: string }).command, allowed);
        // grep exits 1 for "no match": an answer, not a failure. For the others 1 is an error
        // (cat of a missing file), and its stderr is what the model needs to see.
        const call = { tool: "shell_readonly", callable: null, timeoutMs: READONLY_TIMEOUT_MS, maxStdoutBytes: READONLY_MAX_OUTPUT_BYTES, okExitCodes: argv[0] === "grep" ? [0, 1] : [0], label: "shell_readonly", signal };
        // The wall is the container (in a container session) or the sandbox; the checks above are a
        // second layer. Without either: refused.
        const out = options.place ? await (await options.place()).run(argv, call) : await runCommand(confinedArgv(argv, { root, tool: "shell_readonly", bwrap: options.bwrap }), { ...call, cwd: root });
        return out === "" ? "(no output)" : out;
      },
    },
  ];
}

/**
 * What an executor offers when it can run a command where the agent's code runs: the container
 * executor (in its container) and the remote executor (on the server) both answer with the
 * command's interleaved output, its exit code and whether the output was cut.
 */
export interface CommandExecutor {
  exec(argv: string[], options: { timeoutMs: number }): Promise<ExecResult>;
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
          signal.throwIfAborted();
          const r = await session.executor.exec(a.argv, { timeoutMs });
          return `exit code ${r.exitCode}\n${r.output}${r.truncated ? "\n[output cut]" : ""}`.slice(0, env.maxOutputChars);
        }
        const out = await runCommand(a.argv, { tool: "shell", callable: null, timeoutMs, maxStdoutBytes: SHELL_MAX_OUTPUT_BYTES, cwd: env.projectDir, signal });
        return `exit code 0\n${out}`.slice(0, env.maxOutputChars);
      },
    },
  ];
}
