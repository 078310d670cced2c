/**
 * What every command shares: the session flags and how they resolve (`--base` means what
 * `Session.fromBase` means; `--tools`/`--storage` override its two parts), opening a session that
 * is closed on every path, option parsers, JSON output, and turning an error into a message and
 * an exit code: 0 success, 1 failure, 2 usage error.
 */
import { statSync } from "node:fs";
import { readdir, rmdir, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CommanderError, InvalidArgumentError, Option, type Command } from "commander";
import { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, timeoutSchema } from "../execution/options.js";
import type { Executor } from "../execution/protocol.js";
import { parseMountSpec, parseWorkspaceDir, type MountSpec } from "../execution/container/mount-spec.js";
import { ValidationError } from "../errors.js";
import { Session } from "../session.js";
import { FileStorage } from "../storage/file/storage.js";
import { parseSearchSpec, type EmbedderSpec } from "../search/config.js";
import { auditLog, callsPerRun, policy } from "../tools/middleware/builtins.js";
import type { ToolMiddleware } from "../tools/middleware/types.js";
import { eventLine } from "../tools/adapters/toolable/host.js";
import { samplerFromFlag, samplerOption } from "./sampler.js";
import { createExecutor, DEFAULT_EXECUTOR, executorFlagsOf, loadExecutor, EXECUTOR_NAMES, executorNameProblem, IN_PROCESS_MEMORY_PROBLEM, isExecutorName, sessionsPerChildProblem, sharedChildrenFor, type ExecutorName } from "../execution/by-name.js";
import type { SharedChildren } from "../execution/subprocess/shared-children.js";

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Relative to the working directory, like every path flag. */
export const DEFAULT_BASE = "./.code-mode";

/**
 * Commands that only read or call through the host facade never run agent code, and the host
 * services are the same behind every executor, so they use the cheapest one.
 */
const HOST_ONLY_EXECUTOR: ExecutorName = "in-process";

/** A flag or argument the user got wrong: exit code 2, no stack trace. */
export class CliUsageError extends Error {
  override readonly name = "CliUsageError";
}

/**
 * What building a storage from flags threw, as the command should throw it: the user's input (a bad
 * URL, prefix or workspace id: ValidationError, InvalidNameError) is a usage error, exit 2 (their
 * messages never hold a password); anything else — a missing optional package (MissingPeerError) —
 * stays as it is, exit 1.
 */
export function storageFlagError(err: unknown): unknown {
  if (err instanceof ValidationError || (err instanceof Error && err.name === "InvalidNameError")) return new CliUsageError(err.message);
  return err;
}

export interface StorageFlags {
  base: string;
  tools?: string;
  storage?: string;
}

export interface ExecutorFlags {
  executor: ExecutorName;
  /** --tools-module FILE: a module exporting tools defined in code (run, mcp, serve). */
  toolsModule?: string;
  timeout?: number;
  allow?: string[];
  deny?: string[];
  auditLog?: string;
  maxToolCalls?: number;
  search?: EmbedderSpec;
  engine?: "quickjs" | "deno";
  /** --language: the language the agent's code is written in. */
  language?: "typescript" | "python";
  image?: string;
  network?: "none" | "bridge";
  /** --memory-mb: the memory cap of whatever runs the code (see CliExecutorOptions.memoryMb). */
  memoryMb?: number;
  /**
   * --workspace-dir DIR (absolute, existing): mounted read-write at the same path in the container.
   * (`--workspace ID` already names a tenant's workspace on run, mcp and store, so the folder has its own flag.)
   */
  workspaceDir?: string;
  /** --mount SRC:DST[:ro], repeatable. */
  mount?: Array<{ source: string; target: string; readOnly: boolean }>;
  /** --skills DIR (repeatable): read-only folders of Agent Skills, after <base>/skills. */
  skills?: string[];
  /** --sampler provider:model: answers toolable tools' sampling requests. */
  sampler?: string;
  /** --sessions-per-child N: the subprocess executor's sessions share node children, N to a child. */
  sessionsPerChild?: number;
}

export interface ResolvedPaths {
  base: string;
  toolsPath: string;
  storagePath: string;
}

// ---- options ------------------------------------------------------------------------------------

export function addStorageOptions(cmd: Command): Command {
  return cmd
    .option("--base <dir>", "base folder: storage in DIR, tool YAML in DIR/tools", DEFAULT_BASE)
    .option("--tools <dir>", "folder of tool YAML files (overrides <base>/tools)")
    .option("--storage <dir>", "folder of workflows and artifacts (overrides <base>)");
}

export function addExecutorOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("--executor <name>", `what runs the code; available: ${EXECUTOR_NAMES.join(", ")}`).default(DEFAULT_EXECUTOR).argParser(parseExecutorName),
    )
    .addOption(new Option("--timeout <ms>", `stop the run after this many milliseconds (default ${DEFAULT_TIMEOUT_MS})`).argParser(parseTimeout))
    .addOption(new Option("--allow <glob>", "only tool calls matching this glob on tool.callable run (repeatable), e.g. 'git.*'").argParser(collect))
    .addOption(new Option("--deny <glob>", "tool calls matching this glob never run (repeatable; wins over --allow)").argParser(collect))
    .addOption(new Option("--audit-log <file>", "append one JSON line per tool call (call, args, outcome, run) to this file"))
    .addOption(new Option("--max-tool-calls <n>", "at most this many tool calls per run").argParser(parseLimit))
    .addOption(new Option("--engine <name>", "with --executor sandbox: quickjs (default; in-process wasm) or deno (a deno process with no permissions)").choices(["quickjs", "deno"]))
    .addOption(new Option("--language <lang>", "the language of the agent's code: typescript (default) or python (with --executor subprocess: a python3 process; with --executor sandbox: Pyodide in a deno process without permissions)").choices(["typescript", "python"]))
    .addOption(new Option("--image <ref>", "with --executor container: the image to run (default: the one `ts-code-mode image build` makes)"))
    .addOption(new Option("--network <mode>", "with --executor container: none (default; no network at all) or bridge").choices(["none", "bridge"]))
    .addOption(new Option("--workspace-dir <dir>", "with --executor container: a host folder mounted read-write at the same path inside, the code's and the tools' working directory").argParser(parseWorkspace))
    .addOption(new Option("--mount <src:dst[:ro|rw]>", "with --executor container: mount a host path at an absolute path inside (read-only unless :rw; repeatable)").argParser(collectMount))
    .addOption(
      new Option(
        "--memory-mb <n>",
        "memory cap in MB of what runs the code: the child process (subprocess, python: V8's heap and its resident memory, polled), the sandbox, or the container (default 512); not with --executor in-process",
      ).argParser(parseMemoryMb),
    )
    .addOption(new Option("--skills <dir>", "also offer the Agent Skills in this read-only folder (repeatable; after <base>/skills, a later folder wins a name clash)").argParser(collectFolder))
    .addOption(
      new Option(
        "--sessions-per-child <n>",
        `subprocess executor, TypeScript: put up to N sessions in one node child, each in its own vm context, instead of a child each (about 0.2 MiB a session instead of 9; the sessions share the child's heap, memory cap and process-wide objects, so use it for one trust domain: docs/executors.md "Many cheap sessions"); 1 to ${MAX_SESSIONS_PER_CHILD}`,
      ).argParser(intIn(1, MAX_SESSIONS_PER_CHILD, "a number of sessions")),
    )
    .addOption(searchOption())
    .addOption(samplerOption());
}

/** The most --sessions-per-child takes (SharedChildren's own bound). */
const MAX_SESSIONS_PER_CHILD = 256;

/** A whole number from min to max, or commander's usage error saying so (`what`: "a port number"). */
export function intIn(min: number, max: number, what: string): (value: string) => number {
  return (value) => {
    const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
    if (!(n >= min && n <= max)) throw new InvalidArgumentError(`expected ${what} from ${min} to ${max}`);
    return n;
  };
}

/**
 * The children of --sessions-per-child, made once for every session a command (a server) starts
 * with these flags; undefined without it. Call after loadExecutor.
 */
export function sharedChildOf(flags: Partial<ExecutorFlags>): { sharedChild?: SharedChildren } {
  const shared = sharedChildrenFor(flags.sessionsPerChild, flags.memoryMb);
  return shared ? { sharedChild: shared } : {};
}

/** `--tools-module <file>` (run, mcp, serve): tools defined in code, see src/cli/tools-module.ts. */
export function addToolsModuleOption(cmd: Command): Command {
  return cmd.option("--tools-module <file>", "a module exporting tools defined in code (defineTool, AI SDK tools; .ts loads without a build step), beside the YAML tools");
}

/** `--search <how>`: which embedder ranks searches (run, workflows index). */
/**
 * How long `tools search` / `workflows search` wait for the embedding model (and for new entries to
 * be embedded) before ranking by words only: a fresh process loads the model in ~0.3-2 s, and the
 * command exists to answer well.
 */
export const CLI_SEARCH_WAIT_MS = 60_000;

export function searchOption(): Option {
  return new Option(
    "--search <how>",
    "how tools.search and workflows.search rank: use-lite (built-in model, offline; default), lexical, or URL#model of an OpenAI-compatible embeddings API (key in TS_CODE_MODE_SEARCH_API_KEY)",
  ).argParser(parseSearch);
}

function parseSearch(value: string): EmbedderSpec {
  try {
    return parseSearchSpec(value, process.env["TS_CODE_MODE_SEARCH_API_KEY"]);
  } catch (err) {
    throw new InvalidArgumentError(err instanceof Error ? err.message : String(err));
  }
}

function collect(value: string, previous: string[] | undefined): string[] {
  if (!value.trim()) throw new InvalidArgumentError("expected a glob such as 'git.*' or '*.delete'");
  return [...(previous ?? []), value];
}

/** Flags that only make sense together: a usage error (exit 2) otherwise. */
export function checkExecutorFlags(flags: Partial<ExecutorFlags>): void {
  if (flags.engine !== undefined && flags.executor !== "sandbox") {
    throw new CliUsageError(`--engine ${flags.engine} applies to --executor sandbox only; got --executor ${flags.executor ?? DEFAULT_EXECUTOR}`);
  }
  const executor = flags.executor ?? DEFAULT_EXECUTOR;
  if (flags.language === "python" && executor !== "subprocess" && executor !== "sandbox") {
    throw new CliUsageError(`--language python runs with --executor subprocess (a python3 process, the default) or --executor sandbox (Pyodide in deno); got --executor ${flags.executor}`);
  }
  if (flags.language === "python" && executor === "sandbox" && flags.engine === "quickjs") {
    throw new CliUsageError("--language python with --executor sandbox runs Pyodide in the deno engine; leave out --engine quickjs");
  }
  const containerFlag = flags.image !== undefined ? "--image" : flags.network !== undefined ? "--network" : flags.workspaceDir !== undefined ? "--workspace-dir" : flags.mount?.length ? "--mount" : undefined;
  if (containerFlag && flags.executor !== "container") {
    throw new CliUsageError(`${containerFlag} applies to --executor container only; got --executor ${flags.executor ?? DEFAULT_EXECUTOR}`);
  }
  if (flags.memoryMb !== undefined && executor === "in-process") throw new CliUsageError(IN_PROCESS_MEMORY_PROBLEM);
  if (flags.sessionsPerChild !== undefined) {
    const problem = sessionsPerChildProblem(executor, flags.language);
    if (problem) throw new CliUsageError(problem);
  }
  skillRootsOf(flags);
}

/**
 * The --skills folders as absolute paths, each checked to be a folder: a mistyped path is a usage
 * error at start, not a session that quietly has no skills.
 */
export function skillRootsOf(flags: { skills?: string[] | undefined }): string[] {
  return (flags.skills ?? []).map((dir) => {
    const full = userPath(dir, "--skills");
    const isFolder = (() => {
      try {
        return statSync(full).isDirectory();
      } catch {
        return false;
      }
    })();
    if (!isFolder) throw new CliUsageError(`--skills ${dir}: no such folder (${full}); give a folder of skill folders, each with a SKILL.md`);
    return full;
  });
}

/** The executor options every command builds from --memory-mb, --image, --network and --skills. */
export function executorOptionsOf(flags: Partial<ExecutorFlags>): ReturnType<typeof executorFlagsOf> & { skillRoots?: string[] } {
  const roots = skillRootsOf(flags);
  // Named field by field: the flags object also holds `--workspace ID` (a tenant), which is not the container's folder.
  const { image, network, memoryMb, mount, workspaceDir } = flags;
  const picked = { ...(image !== undefined ? { image } : {}), ...(network !== undefined ? { network } : {}), ...(memoryMb !== undefined ? { memoryMb } : {}), ...(mount !== undefined ? { mount } : {}), ...(workspaceDir !== undefined ? { workspace: workspaceDir } : {}) };
  return { ...executorFlagsOf(picked), ...(roots.length ? { skillRoots: roots } : {}) };
}

/** The tool middleware the executor flags ask for: audit outermost, so refused calls are logged too. */
export function middlewareFromFlags(flags: Partial<ExecutorFlags>): ToolMiddleware[] {
  const chain: ToolMiddleware[] = [];
  if (flags.auditLog) chain.push(auditLog({ file: flags.auditLog }));
  if (flags.allow?.length || flags.deny?.length) chain.push(policy({ ...(flags.allow ? { allow: flags.allow } : {}), ...(flags.deny ? { deny: flags.deny } : {}) }));
  if (flags.maxToolCalls !== undefined) chain.push(callsPerRun(flags.maxToolCalls));
  return chain;
}

export function addJsonOption(cmd: Command, what = "print JSON instead of text"): Command {
  return cmd.option("--json", what);
}

/** Indented `$ …` shell lines for addHelpText("after", …); a line without a command gets `ts-code-mode `. */
export function examples(...lines: string[]): string {
  // A line that already starts a command (or sets a variable for one) is shown as it is.
  const shell = (l: string) => (/^(ts-code-mode|echo|cat) |^[A-Z_][A-Z0-9_]*=/.test(l) ? l : `ts-code-mode ${l}`);
  return `\nExamples:\n${lines.map((l) => `  $ ${shell(l)}`).join("\n")}\n`;
}

export function parseExecutorName(value: string): ExecutorName {
  if (isExecutorName(value)) return value;
  throw new InvalidArgumentError(executorNameProblem(value));
}

export function parseTimeout(value: string): number {
  const ms = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!timeoutSchema.safeParse(ms).success) {
    throw new InvalidArgumentError(`expected a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, e.g. 5000`);
  }
  return ms;
}

/** A ValidationError of mount-spec.ts as commander's usage error. */
function asFlagProblem<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof ValidationError) throw new InvalidArgumentError(e.message);
    throw e;
  }
}

/** --workspace-dir DIR: an existing folder, absolute (it is the same path inside the container). */
export function parseWorkspace(value: string): string {
  return asFlagProblem(() => parseWorkspaceDir(value, "--workspace-dir", (v) => userPath(v, "--workspace-dir")));
}

/** --mount SRC:DST[:ro|rw] (read-only unless rw), collected. */
export function collectMount(value: string, previous: MountSpec[] = []): MountSpec[] {
  return [...previous, asFlagProblem(() => parseMountSpec(value, "--mount", (v) => userPath(v, "--mount")))];
}

/** The smallest and largest --memory-mb; each executor may narrow it (the sandbox: 32 to 2048). */
const MEMORY_MB_RANGE = [16, 1_048_576] as const;

export function parseMemoryMb(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!(n >= MEMORY_MB_RANGE[0] && n <= MEMORY_MB_RANGE[1])) throw new InvalidArgumentError(`expected a whole number of megabytes from ${MEMORY_MB_RANGE[0]} to ${MEMORY_MB_RANGE[1]}, e.g. 512`);
  return n;
}

function collectFolder(value: string, previous: string[] | undefined): string[] {
  if (!value.trim()) throw new InvalidArgumentError("expected a folder");
  return [...(previous ?? []), value];
}

export function parseLimit(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= 1000)) throw new InvalidArgumentError("expected a whole number from 1 to 1000");
  return n;
}

// ---- sessions -----------------------------------------------------------------------------------

/**
 * A folder flag as an absolute path. `~` and `~/…` mean the home folder, as in a shell: a quoted
 * `--base '~/x'` (or one from a config file) would otherwise become a folder literally named `~`.
 * `~user/…` is refused rather than guessed.
 */
export function userPath(value: string, flag = "--base"): string {
  if (value === "~" || value.startsWith("~/")) return path.join(os.homedir(), value.slice(1));
  if (value.startsWith("~")) throw new CliUsageError(`${flag} ${value}: only ~ and ~/… (your home folder) are expanded; give the full path`);
  return path.resolve(value);
}

export function resolvePaths(flags: StorageFlags): ResolvedPaths {
  const base = userPath(flags.base);
  return {
    base,
    toolsPath: flags.tools !== undefined ? userPath(flags.tools, "--tools") : path.join(base, "tools"),
    storagePath: flags.storage !== undefined ? userPath(flags.storage, "--storage") : base,
  };
}

async function isFolder(dir: string): Promise<boolean> {
  return stat(dir).then((s) => s.isDirectory(), () => false);
}

/** The first folder of `dir`'s path that does not exist yet (undefined when `dir` exists). */
async function firstMissing(dir: string): Promise<string | undefined> {
  if (await stat(dir).then(() => true, () => false)) return undefined;
  const parent = path.dirname(dir);
  return parent === dir ? dir : ((await firstMissing(parent)) ?? dir);
}

/** Removes `dir` and the folders under it when they hold no file: undoes folders a command created for nothing. */
async function pruneEmpty(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) await pruneEmpty(path.join(dir, e.name));
  await rmdir(dir).catch(() => undefined);
}

/**
 * Warns (stderr) about session folders that do not exist, and returns a function that removes the
 * folders opening the storage created, if nothing was saved in them: a command that only reads
 * (`tools list`, `workflows list`, `mcp` with nothing saved) leaves no `--base` folder behind, so
 * a mistyped path does not quietly become a new, empty base.
 */
export async function watchMissingFolders(
  paths: ResolvedPaths,
  options: { warn?: (line: string) => void; fileStorage?: boolean; toolsFolder?: boolean } = {},
): Promise<() => Promise<void>> {
  const warn = options.warn ?? ((l: string) => writeLine(process.stderr, `warning: ${l}`));
  const created = options.fileStorage === false ? undefined : await firstMissing(paths.storagePath);
  if (created !== undefined) warn(`${paths.storagePath} does not exist: no workflows or artifacts yet (set one up with: ts-code-mode init --base <dir>)`);
  else if (options.fileStorage !== false && !(await isFolder(paths.storagePath))) throw new CliUsageError(`${paths.storagePath} is not a folder`);
  if (options.toolsFolder !== false && !(await isFolder(paths.toolsPath)) && (created === undefined || !paths.toolsPath.startsWith(paths.storagePath + path.sep))) {
    warn(`no tool folder at ${paths.toolsPath}: no tools`);
  }
  return async () => {
    if (created !== undefined) await pruneEmpty(created);
  };
}

/**
 * Runs `fn` with a session on the resolved folders and closes session and storage afterwards,
 * whatever happens, so no executor or tool connection keeps the process alive. The session starts
 * on first use: `run()` reports a failed start in its result, facade calls throw it. Read-only by
 * default (see watchMissingFolders); `run` passes `{ readOnly: false }`.
 */
/**
 * Reads and checks the tool files of `toolsPath` now, for servers whose sessions read them only on
 * first use: a broken file stops the server at start (exit 2, naming the file and the fix), not its
 * clients' first calls. A file broken later fails only the calls that use tools, until it is
 * fixed (the registry reads a failed load again). Returns the tool names.
 */
export async function checkToolFiles(toolsPath: string): Promise<string[]> {
  const { ToolRegistry } = await import("../tools/registry.js");
  const { ValidationError } = await import("../errors.js");
  let registry: Awaited<ReturnType<typeof ToolRegistry.load>>;
  try {
    registry = await ToolRegistry.load(toolsPath);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    throw new CliUsageError(`${err.message}\nFix the tool file (or move it out of ${toolsPath}) and start again.`);
  }
  try {
    return registry.names();
  } finally {
    await registry.close();
  }
}

export async function withSession<T>(
  flags: StorageFlags & Partial<ExecutorFlags>,
  fn: (session: Session) => Promise<T>,
  options: { readOnly: boolean; executor?: Executor; workspaceId?: string; searchWaitMs?: number; durable?: boolean } = { readOnly: true },
): Promise<T> {
  checkExecutorFlags(flags);
  const paths = resolvePaths(flags);
  // A command that only reads warns about a missing base. `run` may save, so it opens the base
  // without a warning; either way the folders opening the storage made are removed again when
  // nothing was saved in them, so `run '1+1'` leaves no ./.code-mode behind.
  const undoFolders = await watchMissingFolders(paths, options.readOnly ? {} : { warn: () => undefined });
  let storage: FileStorage | undefined;
  let session: Session | undefined;
  try {
    storage = new FileStorage({ basePath: paths.storagePath, ...(options.workspaceId !== undefined ? { workspaceId: options.workspaceId } : {}) });
    if (!options.executor) await loadExecutor(flags.executor ?? HOST_ONLY_EXECUTOR, flags.language);
    const sampler = options.executor ? undefined : await samplerFromFlag(flags.sampler);
    if (options.executor && flags.toolsModule !== undefined) throw new CliUsageError("--tools-module: a remote session has the server's tools; start the server with serve --tools-module");
    const codeTools = options.executor ? {} : await (await import("./tools-module.js")).toolsModuleOption(flags);
    const executor = options.executor ?? createExecutor(flags.executor ?? HOST_ONLY_EXECUTOR, {
      toolsPath: paths.toolsPath,
      defaultTimeoutMs: flags.timeout,
      middleware: middlewareFromFlags(flags),
      ...(flags.search !== undefined ? { search: flags.search } : {}),
      ...(options.searchWaitMs !== undefined ? { searchWaitMs: options.searchWaitMs } : {}),
      ...(flags.engine !== undefined ? { engine: flags.engine } : {}),
      // Progress/log/artifact events of toolable tools, as they happen (stdout stays the result's).
      toolable: { onEvent: (e) => process.stderr.write(`${eventLine(e)}\n`), ...(sampler ? { sampler } : {}) },
      ...(flags.language !== undefined ? { language: flags.language } : {}),
      ...executorOptionsOf(flags),
      ...sharedChildOf(flags),
      ...codeTools,
    });
    session = new Session({ storage, executor, ...(options.durable ? { durable: true as const } : {}) });
    return await fn(session);
  } finally {
    await session?.close();
    await storage?.close();
    await undoFolders();
  }
}

// ---- output -------------------------------------------------------------------------------------

/** Writes `text`, adding a final newline when it lacks one; nothing for "". */
export function writeLine(stream: NodeJS.WritableStream, text: string): void {
  if (text === "") return;
  stream.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function printJson(value: unknown): void {
  if (!isJsonRepresentable(value)) {
    throw new CliUsageError("the result cannot be shown as JSON (it holds a Map, Set, BigInt, binary data or a cycle); run without --json");
  }
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Deeper than this is treated as not representable rather than risking the stack. */
const MAX_JSON_DEPTH = 500;

/**
 * True when JSON.stringify would keep `value` exactly: null, booleans, strings, finite numbers, and
 * plain arrays/objects of those. Map, Set, BigInt, Date, typed arrays, undefined members, holes and
 * cycles would be dropped, mangled or throw, so they make the value not representable.
 */
export function isJsonRepresentable(value: unknown, ancestors: Set<object> = new Set(), depth = 0): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value !== "object" || depth > MAX_JSON_DEPTH || ancestors.has(value)) return false;
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        if (!(i in value) || !isJsonRepresentable(value[i], ancestors, depth + 1)) return false;
      }
      return true;
    }
    if (!isPlainObject(value) || Object.getOwnPropertySymbols(value).length > 0) return false;
    return Object.values(value).every((v) => isJsonRepresentable(v, ancestors, depth + 1));
  } finally {
    ancestors.delete(value);
  }
}

/** Plain object of any realm (a value may come from a vm context or over a wire). */
function isPlainObject(value: object): boolean {
  if (Object.prototype.toString.call(value) !== "[object Object]") return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

// ---- errors and exit ----------------------------------------------------------------------------

/** Errors that describe the user's input or data, not a bug: a message is enough, no stack. */
const EXPECTED_ERRORS: ReadonlySet<string> = new Set([
  "ValidationError",
  "NotFoundError",
  "InvalidNameError",
  "ToolError",
  "StorageError",
  "TypeError",
  "SyntaxError",
  "TelemetrySetupError",
  "ContainerEngineError",
  "MissingPeerError",
]);

/** Prints `err` (unless commander already did) and returns the exit code for it. */
export function reportError(err: unknown): number {
  // Commander printed its own message (unknown option, bad argument, help); exitCode 0 is --help/--version.
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  if (err instanceof CliUsageError) {
    writeLine(process.stderr, `error: ${err.message}`);
    return EXIT_USAGE;
  }
  if (err instanceof Error && EXPECTED_ERRORS.has(err.name)) {
    writeLine(process.stderr, `error: ${err.message}`);
    return EXIT_FAILURE;
  }
  // Anything else is a bug in ts-code-mode; the stack is what a bug report needs.
  writeLine(process.stderr, `error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return EXIT_FAILURE;
}

const exitHooks: Array<() => Promise<void>> = [];

/** Work that must finish before the command exits (--otel's last export); each bounds its own time. */
export function onExit(hook: () => Promise<void>): void {
  exitHooks.push(hook);
}

/**
 * Exits once stdout and stderr are flushed. Exiting explicitly (after the session is closed) keeps
 * a timer or socket left behind by agent code from holding the command open.
 */
export async function exitAfterFlush(code: number): Promise<never> {
  for (const hook of exitHooks.splice(0)) await hook().catch(() => undefined);
  const flush = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write("", () => resolve()));
  await Promise.all([flush(process.stdout), flush(process.stderr)]);
  process.exit(code);
}

/** `ts-code-mode … | head` closes stdout early; that is not an error worth a stack trace. */
export function ignoreClosedStdout(): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(typeof process.exitCode === "number" ? process.exitCode : EXIT_OK);
    throw err;
  });
}
