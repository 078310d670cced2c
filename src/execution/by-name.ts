/**
 * The one place a name (the CLI's `--executor`, project.json's `code_mode.executor`) becomes an Executor. Adding an executor to the
 * command line means: add its name to EXECUTOR_NAMES (and drop it from PLANNED_EXECUTOR_NAMES), its
 * class to ExecutorClasses and EXECUTOR_MODULES, the name → class line to classFor, and the
 * constructor call to createExecutor.
 *
 * Each executor's module is imported only when a command uses it (loadExecutor): a `run` with the
 * subprocess executor does not parse the in-process REPL, the sandbox engines or the container
 * client first, and its child process is spawned that much sooner (issue 24).
 */
import type { CodeToolSet } from "../tools/code/tool-set.js";
import { ValidationError } from "../errors.js";
import type { InProcessExecutor } from "./in-process/executor.js";
import type { Executor } from "./protocol.js";
import type { EmbedderSpec } from "../search/config.js";
import type { ToolMiddleware } from "../tools/middleware/types.js";
import type { ToolableHostOptions } from "../tools/adapters/toolable/host.js";
import type { AgentsHost } from "./host.js";
import type { SandboxExecutor } from "./sandbox/executor.js";
import type { SubprocessExecutor } from "./subprocess/executor.js";
import type { SharedChildren } from "./subprocess/shared-children.js";
import type { PythonExecutor } from "./python/executor.js";
import type { ContainerExecutor } from "./container/executor.js";

/** The executor classes, filled in by loadExecutor. */
interface ExecutorClasses {
  InProcessExecutor: typeof InProcessExecutor;
  SandboxExecutor: typeof SandboxExecutor;
  SubprocessExecutor: typeof SubprocessExecutor;
  PythonExecutor: typeof PythonExecutor;
  ContainerExecutor: typeof ContainerExecutor;
}
const classes: Partial<ExecutorClasses> = {};
/** Loaded with SubprocessExecutor: the children --sessions-per-child shares. */
let sharedChildrenClass: typeof SharedChildren | undefined;

const EXECUTOR_MODULES: { [K in keyof ExecutorClasses]: () => Promise<void> } = {
  InProcessExecutor: async () => void (classes.InProcessExecutor = (await import("./in-process/executor.js")).InProcessExecutor),
  SandboxExecutor: async () => void (classes.SandboxExecutor = (await import("./sandbox/executor.js")).SandboxExecutor),
  SubprocessExecutor: async () => {
    const [executor, shared] = await Promise.all([import("./subprocess/executor.js"), import("./subprocess/shared-children.js")]);
    classes.SubprocessExecutor = executor.SubprocessExecutor;
    sharedChildrenClass = shared.SharedChildren;
  },
  PythonExecutor: async () => void (classes.PythonExecutor = (await import("./python/executor.js")).PythonExecutor),
  ContainerExecutor: async () => void (classes.ContainerExecutor = (await import("./container/executor.js")).ContainerExecutor),
};

/** The class createExecutor builds for `name` and `language`; null for a name it refuses. */
function classFor(name: string, language: "typescript" | "python" | undefined): keyof ExecutorClasses | null {
  if (language === "python") return name === "sandbox" ? "SandboxExecutor" : name === "subprocess" ? "PythonExecutor" : null;
  switch (name) {
    case "subprocess":
      return "SubprocessExecutor";
    case "in-process":
      return "InProcessExecutor";
    case "sandbox":
      return "SandboxExecutor";
    case "container":
      return "ContainerExecutor";
    default:
      return null;
  }
}

/**
 * Imports the module createExecutor(name, { language }) needs; await it once before calling
 * createExecutor (which stays synchronous for the factories of pools and servers). A name
 * createExecutor refuses loads nothing: createExecutor then throws its usual error.
 */
export async function loadExecutor(name: string, language?: "typescript" | "python"): Promise<void> {
  const cls = classFor(name, language);
  if (cls && !classes[cls]) await EXECUTOR_MODULES[cls]();
}

function loaded<K extends keyof ExecutorClasses>(cls: K): ExecutorClasses[K] {
  const found = classes[cls];
  // A programming error of the CLI, not a user's: every command awaits loadExecutor first.
  if (!found) throw new Error(`createExecutor: ${cls} was not loaded (await loadExecutor(...) first)`);
  return found;
}

/** Executors this version of the CLI can create. */
export const EXECUTOR_NAMES = ["subprocess", "in-process", "sandbox", "container"] as const;
export type ExecutorName = (typeof EXECUTOR_NAMES)[number];

/** Used when `--executor` is not given. */
export const DEFAULT_EXECUTOR: ExecutorName = "subprocess";

/** Executors of the architecture that are not shipped yet; named so the error can say so instead of "unknown". */
const PLANNED_EXECUTOR_NAMES: readonly string[] = [];

export interface CliExecutorOptions {
  /** Folder of tool YAML files. */
  toolsPath: string;
  /** --tools-module: tools defined in code, beside the YAML tools. */
  tools?: CodeToolSet;
  /** Timeout of each run; the executor's own default when undefined. */
  defaultTimeoutMs?: number;
  /** false: agent code may not call deps.add/deps.remove (the executor then lacks "depsInstall"). */
  allowRuntimeDeps?: boolean;
  /** Tool middleware from --allow/--deny/--audit-log/--max-tool-calls. */
  middleware?: ToolMiddleware[];
  /** Read-only folders of Agent Skills (after <base>/skills; a later one wins a name clash). */
  skillRoots?: string[];
  /** --search: how tools.search / workflows.search rank. */
  search?: EmbedderSpec;
  /**
   * How long a search waits for the embedding model and the index before ranking by words only
   * (the library's default is 1 s). A one-shot `tools search` in a fresh process waits: answering
   * is all it is for.
   */
  searchWaitMs?: number;
  /** --engine: the sandbox's engine (quickjs or deno); only with the sandbox executor. */
  engine?: "quickjs" | "deno";
  /** Sampler / event listener of `type: toolable` tools. */
  toolable?: ToolableHostOptions;
  /** The agents the code may call as agents.* (the agent runtime's call); every executor serves them on the host. */
  agents?: AgentsHost;
  /** --language: python runs the code in a python3 process (subprocess) or in Pyodide in deno (sandbox). */
  language?: "typescript" | "python";
  /** --image, --network: only with the container executor. */
  container?: ContainerFlags;
  /**
   * --memory-mb: the memory cap of what runs the code, for every executor that has one (subprocess
   * and python: maxMemoryMb; sandbox and container: memoryMb). The in-process executor refuses it.
   * With sharedChild the cap is the shared children's (set it there).
   */
  memoryMb?: number;
  /**
   * --sessions-per-child: the children the sessions made with these options share (made once per
   * server by sharedChildrenFor, so its sessions land in the same children). Subprocess executor,
   * TypeScript only; any other is refused.
   */
  sharedChild?: SharedChildren;
}

/** Why --sessions-per-child does not go with an executor or language (also the CLI's usage error). */
export function sessionsPerChildProblem(name: string, language: "typescript" | "python" | undefined): string | null {
  if (name === "subprocess" && language !== "python") return null;
  return `--sessions-per-child puts several TypeScript sessions in one node child of the subprocess executor; got ${language === "python" ? "--language python" : `--executor ${name}`} (leave the flag out: each session then has a process, sandbox or container of its own)`;
}

/**
 * The SharedChildren of --sessions-per-child N (with --memory-mb as each child's cap), for the
 * sessions of one server; undefined without the flag. Call loadExecutor("subprocess") first.
 */
export function sharedChildrenFor(sessionsPerChild: number | undefined, memoryMb: number | undefined): SharedChildren | undefined {
  if (sessionsPerChild === undefined) return undefined;
  if (!sharedChildrenClass) throw new Error("sharedChildrenFor: the subprocess executor was not loaded (await loadExecutor(...) first)");
  return new sharedChildrenClass({ sessionsPerChild, ...(memoryMb !== undefined ? { maxMemoryMb: memoryMb } : {}) });
}

export interface ContainerFlags {
  image?: string;
  network?: "none" | "bridge";
  /** --workspace: a host folder mounted read-write at the same path inside, the workdir. */
  workspace?: string;
  /** --mount SRC:DST[:ro] (repeatable). */
  mounts?: Array<{ source: string; target: string; readOnly: boolean }>;
}

/** The container flags and --memory-mb given on the command line, for CliExecutorOptions. */
export function executorFlagsOf(flags: ContainerFlags & { memoryMb?: number; mount?: ContainerFlags["mounts"] }): { container?: ContainerFlags; memoryMb?: number } {
  const mounts = flags.mounts ?? flags.mount;
  const c: ContainerFlags = {
    ...(flags.image !== undefined ? { image: flags.image } : {}),
    ...(flags.network !== undefined ? { network: flags.network } : {}),
    ...(flags.workspace !== undefined ? { workspace: flags.workspace } : {}),
    ...(mounts?.length ? { mounts } : {}),
  };
  return { ...(Object.keys(c).length ? { container: c } : {}), ...(flags.memoryMb !== undefined ? { memoryMb: flags.memoryMb } : {}) };
}

/** Why the in-process executor takes no --memory-mb (also the CLI's usage error). */
export const IN_PROCESS_MEMORY_PROBLEM = "--memory-mb: the in-process executor shares this process's heap and cannot cap it; use --executor subprocess (the default), sandbox or container";

export function isExecutorName(name: string): name is ExecutorName {
  return (EXECUTOR_NAMES as readonly string[]).includes(name);
}

/** Why `name` cannot be used, for the usage error. */
export function executorNameProblem(name: string): string {
  const available = `available: ${EXECUTOR_NAMES.join(", ")}`;
  if (PLANNED_EXECUTOR_NAMES.includes(name)) return `the ${name} executor is not available in this version (${available})`;
  return `unknown executor ${JSON.stringify(name)} (${available})`;
}

export function createExecutor(name: string, options: CliExecutorOptions): Executor {
  if (options.engine !== undefined && name !== "sandbox") {
    throw new ValidationError(`--engine ${options.engine} applies to --executor sandbox only; got --executor ${name}`);
  }
  const middleware = {
    ...(options.middleware?.length ? { middleware: options.middleware } : {}),
    ...(options.search !== undefined || options.searchWaitMs !== undefined
      ? { search: { ...(options.search !== undefined ? { embedder: options.search } : {}), ...(options.searchWaitMs !== undefined ? { readyTimeoutMs: options.searchWaitMs, indexTimeoutMs: options.searchWaitMs } : {}) } }
      : {}),
    ...(options.toolable !== undefined ? { toolable: options.toolable } : {}),
    ...(options.agents !== undefined ? { agents: options.agents } : {}),
    ...(options.skillRoots?.length ? { skillRoots: options.skillRoots } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
  };
  const timeout = options.defaultTimeoutMs !== undefined ? { defaultTimeoutMs: options.defaultTimeoutMs } : {};
  const common = { ...middleware, ...timeout, ...(options.allowRuntimeDeps !== undefined ? { allowRuntimeDeps: options.allowRuntimeDeps } : {}) };
  const python = options.language === "python";
  if (python && name !== "subprocess" && name !== "sandbox") {
    throw new ValidationError(`--language python runs with --executor subprocess (python3) or --executor sandbox (Pyodide); got --executor ${name}`);
  }
  if (!python && options.container && name !== "container") {
    throw new ValidationError(`--image, --network, --workspace and --mount apply to --executor container only; got --executor ${name}`);
  }
  if (options.sharedChild) {
    const problem = sessionsPerChildProblem(name, options.language);
    if (problem) throw new ValidationError(problem);
  }
  // Each executor names its cap its own way (see CliExecutorOptions.memoryMb); shared children carry their own.
  const maxMemoryMb = options.memoryMb !== undefined && !options.sharedChild ? { maxMemoryMb: options.memoryMb } : {};
  const memoryMb = options.memoryMb !== undefined ? { memoryMb: options.memoryMb } : {};
  switch (classFor(name, options.language)) {
    case "SubprocessExecutor":
      return new (loaded("SubprocessExecutor"))({ toolsPath: options.toolsPath, ...common, ...maxMemoryMb, ...(options.sharedChild ? { sharedChild: options.sharedChild } : {}) });
    case "PythonExecutor":
      // No allowRuntimeDeps: Python sessions refuse deps.add/remove anyway (npm packages).
      return new (loaded("PythonExecutor"))({ toolsPath: options.toolsPath, ...middleware, ...timeout, ...maxMemoryMb });
    case "InProcessExecutor":
      if (options.memoryMb !== undefined) throw new ValidationError(IN_PROCESS_MEMORY_PROBLEM);
      return new (loaded("InProcessExecutor"))({ toolsPath: options.toolsPath, ...common });
    case "SandboxExecutor":
      // No deps option: the sandbox cannot import packages at all. Python: Pyodide inside the deno
      // engine, untrusted Python with no ambient authority.
      return new (loaded("SandboxExecutor"))({ toolsPath: options.toolsPath, ...middleware, ...(python ? { language: "python" as const } : options.engine ? { engine: options.engine } : {}), ...timeout, ...memoryMb });
    case "ContainerExecutor":
      // No deps option: packages go into the image (runtime installs are not supported there).
      return new (loaded("ContainerExecutor"))({ toolsPath: options.toolsPath, ...middleware, ...options.container, ...timeout, ...memoryMb });
    case null:
      throw new ValidationError(`--executor: ${executorNameProblem(name)}`);
  }
}
