/**
 * PythonExecutor: the agent's code is Python, run by a CPython child (`python3` by default) with
 * the guest runtime of ./guest/runtime.py. Everything but the language is the subprocess
 * executor's: the same RpcProvider answers namespace calls, the same child machinery starts the
 * process with a parent-death signal, freezes it between runs, watches its resident memory and
 * kills it with every process it started (see ../subprocess/). Only the channel differs: length-
 * prefixed JSON frames on two pipes (../subprocess/frames.ts) instead of Node's IPC channel.
 *
 * Timeouts: at the deadline the host sends the guest SIGINT, which raises in the running code and
 * ends the run with a TimeoutError, variables kept. Code that does not stop within
 * PYTHON_KILL_GRACE_MS (it catches BaseException, sits in a C call, ignores SIGINT) is killed with
 * its process, and the error says the variables were lost.
 */
import path from "node:path";
import { z } from "zod";
import { lazy } from "../../lazy.js";
import type { DepsService } from "../../deps/service.js";
import { parsePythonSpec, pythonDepsServiceFor, venvOf } from "../../deps/python/index.js";
import { ValidationError } from "../../errors.js";
import type { StorageBackend } from "../../storage/protocol.js";
import { admitRun, type Admission } from "../admit.js";
import { MAX_CHUNK_CHARS, OUTPUT_FLUSH_MS } from "../output-stream.js";
import { MAX_STREAM_CHARS } from "../output.js";
import type { CapabilityReport } from "../protocol.js";
import { MAX_DISPLAY_CHARS } from "../result.js";
import type { GuestProgram } from "../subprocess/child-process.js";
import { SubprocessExecutor, type SubprocessExecutorOptions } from "../subprocess/executor.js";
import { canWatchMemory, MEMORY_POLL_MS } from "../subprocess/memory-watch.js";
import { MESSAGE_LIMITS } from "../subprocess/message-limits.js";
import { deathSignalLauncher } from "../freeze.js";
import { pythonGuestFile } from "./guest-files.js";
import { MAX_FRAME_BYTES } from "../subprocess/frames.js";
import { realPython } from "../../real-python.js";

export interface PythonExecutorOptions extends Omit<SubprocessExecutorOptions, "sharedChild" | "permissions" | "deps" | "depsFile" | "depsDir" | "allowInstallScripts" | "allowLocalPaths"> {
  /**
   * Python packages the operator wants (PEP 508 names, extras and version specifiers, e.g.
   * "requests>=2"): checked here, installed with pip into the base's venv when the executor starts
   * (progress to `onDepsOutput`), always in deps.list(), not removable by agent code.
   */
  deps?: string[];
  /** The Python interpreter: a command on PATH or a path. Default `python3`. */
  python?: string;
}

/** After the SIGINT at the deadline, how long Python code has to stop before its process is killed. */
export const PYTHON_KILL_GRACE_MS = 500;

const pythonShape = lazy(() => z.strictObject({
  python: z
    .string({ error: "must be a command or path" })
    .min(1, "must not be empty")
    .max(4_096)
    // It is the program spawned (never through a shell); a leading dash would read as an option of setpriv.
    .refine((p) => !p.startsWith("-") && !p.includes("\0"), "must be a command name or path, not an option")
    .optional(),
}));

export class PythonExecutor extends SubprocessExecutor {
  override readonly kind: string = "python";
  /** A prelude is JavaScript: the Python guest refuses it. */
  override readonly runsPreludes: boolean = false;
  readonly language = "python" as const;
  protected override readonly interruptsAtDeadline: boolean = true;
  protected override readonly killGraceMs: number = PYTHON_KILL_GRACE_MS;
  /** runtime.py's SIGINT handler ignores a signal that arrives between runs: a late one harms no later run. */
  protected override readonly interruptNeedsAck: boolean = false;
  private readonly python: string;
  /** `python` resolved past a pyenv/asdf shim (real-python.ts), found before the first start. */
  private startedPython: string | undefined;
  private readonly guestPlace: { cwd: string | undefined; env: Record<string, string> | undefined };
  private readonly maxMemory: number | undefined;
  private readonly allowDeps: boolean;
  private readonly configuredDeps: string[];
  /** The venv deps.add installs into; the guest puts its site-packages on sys.path. */
  private depsVenv: string | null = null;

  constructor(options: PythonExecutorOptions = {}) {
    const { python, deps, ...rest } = options;
    const own = pythonShape.safeParse(python === undefined ? {} : { python });
    if (!own.success) throw new ValidationError(`Invalid PythonExecutor options: python: ${own.error.issues[0]?.message ?? "invalid"}.`);
    if (deps !== undefined && (!Array.isArray(deps) || deps.some((d) => typeof d !== "string"))) throw new ValidationError("Invalid PythonExecutor options: deps: must be an array of package spec strings.");
    // A typo in the operator's list fails here, at once, saying what is accepted.
    for (const spec of deps ?? []) parsePythonSpec(spec);
    for (const key of ["permissions", "depsFile", "depsDir", "allowInstallScripts", "allowLocalPaths"]) {
      if (key in rest) throw new ValidationError(`Invalid PythonExecutor options: ${key} is not supported for Python guests (Node's permission model and npm deps do not apply to them).`);
    }
    // A shared child is a node process holding TypeScript sessions' contexts; a Python guest is a python3 process of its own.
    if ("sharedChild" in rest) throw new ValidationError("Invalid PythonExecutor options: sharedChild is not supported for Python guests (a shared child holds TypeScript sessions); each Python session has its own python3 process.");
    super(rest);
    this.python = own.data.python ?? "python3";
    this.guestPlace = { cwd: rest.cwd, env: rest.env };
    this.allowDeps = rest.allowRuntimeDeps ?? true;
    this.maxMemory = rest.maxMemoryMb;
    this.configuredDeps = deps ?? [];
  }

  override capabilities(): CapabilityReport {
    const notes = [
      `timeout: at the deadline the code gets SIGINT (a RunInterrupted exception, not caught by \`except Exception\`) and the run ends with a TimeoutError, variables kept; code that has not stopped ${PYTHON_KILL_GRACE_MS} ms later is stopped by restarting the Python process, which loses variables.`,
      "Tool calls count toward the run's timeout: each gets min(its own timeout, time left in the run) and is aborted when the run is stopped.",
      "processIsolation: a crash, sys.exit(), os._exit() or a signal ends only the Python process; the next run gets a fresh one.",
      "No network or filesystem isolation: the Python process has the host user's authority. Use SandboxExecutor to contain code.",
      "Child processes: reset(), close() and every restart kill the Python process and every process it started (as for SubprocessExecutor).",
      "Runs end: asyncio tasks the code left are cancelled when its run ends, and a namespace call made after its run ended is refused by the host.",
      deathSignalLauncher() !== null
        ? "Between runs the Python process and what it started are frozen (SIGSTOP): threads and processes it left do not execute until the next run."
        : "Between runs the Python process is not frozen here (that needs Linux and util-linux's setpriv): threads it left may keep running until reset() or close(), without reaching the host.",
      "deps: Python packages (PEP 508 name, extras and version specifiers) installed with pip into a venv of the base folder (<base>/deps/python/venv), with the machine's pip configuration; importable in the next statement. The list is the base's deps-python.txt (on Redis, the prefix's shared <base>:deps:python list), apart from npm specs; the operator's `deps` are installed at start.",
      "workflows: workflows.create({ name, source, language: \"python\" }) saves a Python workflow (a module defining run; docstring and signature become its description and params); workflows.<name>(**kwargs) runs a Python workflow in this interpreter. A TypeScript workflow is refused here (and a Python one in a TypeScript session).",
    ];
    if (this.maxMemory === undefined) notes.push("memoryLimit: no maxMemoryMb set, so the Python process may use any memory.");
    else if (canWatchMemory) notes.push(`memoryLimit: maxMemoryMb caps the Python process's own resident memory, read every ${MEMORY_POLL_MS} ms from /proc; past it the process is killed (MemoryLimitError) and variables are lost.`);
    else notes.push("memoryLimit: not enforced on this platform (the whole-process cap needs Linux's /proc).");
    return { capabilities: ["timeout", "processIsolation", "memoryLimit", "reset"], notes };
  }

  /** Python is not prepared on the host: the guest parses it, and reports its SyntaxError. */
  protected override admit(code: unknown, state: { closed: boolean; started: boolean }, startedAt: number, prelude?: string): Admission {
    return admitRun(code, state, startedAt, (c) => c, prelude);
  }

  override async prestart(likely?: StorageBackend): Promise<void> {
    await this.findPython();
    return super.prestart(likely);
  }

  override async start(storage: StorageBackend): Promise<void> {
    await this.findPython();
    return super.start(storage);
  }

  /** Every later (re)start of the guest skips the shim: a restart after a timeout is not a second slower. */
  private async findPython(): Promise<void> {
    this.startedPython ??= await realPython(this.python, { cwd: this.guestPlace.cwd ? path.resolve(this.guestPlace.cwd) : process.cwd(), env: this.guestPlace.env ?? process.env });
  }

  protected override guestProgram(): GuestProgram {
    // -u: unbuffered; -X utf8: UTF-8 whatever the locale. The runtime replaces sys.stdout itself.
    return { command: this.startedPython ?? this.python, args: ["-u", "-X", "utf8", pythonRuntimePath()] };
  }

  protected override depsService(storage: StorageBackend): DepsService {
    const deps = pythonDepsServiceFor({ python: this.python, allowRuntimeDeps: this.allowDeps, deps: this.configuredDeps }, storage);
    this.depsVenv = venvOf(deps.dir);
    return deps;
  }

  protected override guestEnv(): Record<string, string> {
    const limits = {
      display: MAX_DISPLAY_CHARS,
      stream: MAX_STREAM_CHARS,
      chunk: MAX_CHUNK_CHARS,
      flushMs: OUTPUT_FLUSH_MS,
      // The guest cuts its errors to fit what the host accepts (messages.ts), leaving room for the cut marker.
      errorName: MESSAGE_LIMITS.errorName - 100,
      errorMessage: MESSAGE_LIMITS.errorMessage - 100,
      errorStack: MESSAGE_LIMITS.errorStack - 100,
      // A result value larger than a frame may carry is dropped (its display is kept).
      value: Math.floor(MAX_FRAME_BYTES / 2),
    };
    return { TS_CODE_MODE_LIMITS: JSON.stringify(limits), PYTHONDONTWRITEBYTECODE: "1", ...(this.depsVenv ? { TS_CODE_MODE_PY_VENV: this.depsVenv } : {}) };
  }
}

/** guest/runtime.py, from the source tree or the built package (guest-files.ts). */
export function pythonRuntimePath(): string {
  return pythonGuestFile("runtime.py");
}
