/**
 * `ts-code-mode mcp`: ts-code-mode as one MCP tool server, over stdio (default) or Streamable HTTP
 * (`--http PORT`). Every flag is checked before anything is served, and a flag that does not fit
 * the chosen mode or backend is a usage error (exit 2) rather than silently ignored. Logs go to
 * stderr: on stdio, stdout is the protocol stream.
 */
import { toolsModuleOption } from "../tools-module.js";
import { InvalidArgumentError, Option, type Command } from "commander";
import { authConfigProblem, isLoopbackHost } from "../../mcp/auth.js";
import { DEFAULT_MAX_OUTPUT, MIN_MAX_OUTPUT, stderrLog } from "../../mcp/limits.js";
import type { CodeModeServerOptions } from "../../mcp/server.js";
import type { ClientApprovals } from "../../mcp/approvals.js";
import type { Executor } from "../../execution/protocol.js";
import { approval } from "../../tools/middleware/builtins.js";
import { Session } from "../../session.js";
import { FileStorage } from "../../storage/file/storage.js";
import type { StorageBackend } from "../../storage/protocol.js";
import { RedisStorage } from "../../storage/redis/storage.js";
import { createExecutor, loadExecutor } from "../../execution/by-name.js";
import { setSpareChildren } from "../../execution/subprocess/spare-children.js";
import { addRemoteOptions, remoteExecutor, type RemoteFlags } from "../remote.js";
import { addDurableOption, checkDurableKey, type DurableFlags } from "../durable.js";
import { packageVersion } from "../package-root.js";
import { redisToolsFolder, type ToolsFolder } from "../redis-tools.js";
import { samplerFromFlag } from "../sampler.js";
import { addExecutorOptions, addToolsModuleOption, addStorageOptions, checkExecutorFlags, checkToolFiles, CliUsageError, examples, executorOptionsOf, middlewareFromFlags, resolvePaths, sharedChildOf, storageFlagError, watchMissingFolders, type ExecutorFlags, type StorageFlags } from "../shared.js";
import { count } from "../../values/count.js";
import { addOtelOptions, startOtel, type OtelFlags } from "../otel.js";

/** Environment variable read when --token is not given, so the token need not appear in `ps`. */
const TOKEN_ENV = "TS_CODE_MODE_TOKEN";
const MAX_OUTPUT_LIMIT = 10_000_000;
const SURFACES = ["code", "full"] as const;
/** Default --idle-timeout in seconds (15 minutes). */
const DEFAULT_IDLE_TIMEOUT_S = 900;

interface McpFlags extends StorageFlags, ExecutorFlags, Pick<RemoteFlags, "remote">, OtelFlags, DurableFlags {
  /** --remote-token: the --remote server's token (--token is this server's own). */
  remoteToken?: string;
  redis?: string;
  prefix?: string;
  workspace?: string;
  runtimeDeps: boolean;
  maxOutput: number;
  http?: number;
  host?: string;
  token?: string;
  /** False when --no-auth was given. */
  auth: boolean;
  surface: (typeof SURFACES)[number];
  idleTimeout?: number;
  requireApproval?: string[];
  /** --languages: the languages run_code offers (its `language` argument picks one per call). */
  languages?: Language[];
  /** --spare-executors (with --http): executors kept started for new MCP sessions; default 1. */
  spareExecutors?: number;
}

type Language = "typescript" | "python";
const LANGUAGES: readonly Language[] = ["typescript", "python"];

export function registerMcpCommand(program: Command): void {
  const cmd = program
    .command("mcp")
    .description("Serve ts-code-mode as an MCP tool server (run_code plus tools, workflows, artifacts) over stdio or HTTP");
  addStorageOptions(cmd);
  cmd
    .option("--redis <url>", "keep workflows and artifacts in Redis (redis://[user:password@]host[:port][/db]) instead of a folder; tool YAML too (<prefix>:tools) unless --tools is given")
    .option("--prefix <prefix>", "key prefix in Redis, e.g. myapp (required with --redis)")
    .option("--workspace <id>", "isolate one tenant's workflows and artifacts (<storage>/workspaces/<id>, or <prefix>:ws:<id>); with --remote, also that tenant's workspace on a server started with --workspace-header");
  addExecutorOptions(cmd);
  addToolsModuleOption(cmd);
  addOtelOptions(cmd);
  addDurableOption(cmd, "durable sessions: a call that needs approval pauses the run, and run_code takes resume: { continuation, decisions } (in any later server on the same storage)");
  cmd
    .addOption(
      new Option(
        "--languages <list>",
        "languages run_code offers, comma-separated: typescript,python adds a per-call `language` argument (default: --language if given, else the first listed); the other language's executor starts on its first call",
      ).argParser(parseLanguages),
    )
    .option("--no-runtime-deps", "no installing packages while serving: no add_dep/remove_dep tools, and deps.add in code is refused")
    .addOption(
      new Option("--max-output <chars>", `longest text a tool returns; longer output is cut with a marker`).default(DEFAULT_MAX_OUTPUT).argParser(parseMaxOutput),
    )
    .addOption(new Option("--surface <surface>", "code: run_code alone (about 1,000 tokens, whatever the store holds); full: also one tool per operation (list_tools, load_artifact, ...)").choices(SURFACES).default("code"))
    .addOption(
      new Option("--require-approval <glob>", "ask the user (MCP elicitation) before tool calls matching this glob on tool.callable run (repeatable); clients without elicitation get them refused").argParser(collect),
    )
    .addOption(new Option("--http <port>", "serve Streamable HTTP on this port (0: any free port) instead of stdio").argParser(parsePort))
    .addOption(new Option("--idle-timeout <seconds>", `with --http: close an MCP session (and stop its executor) after this long without a request (default ${DEFAULT_IDLE_TIMEOUT_S})`).argParser(parseIdleTimeout))
    .addOption(
      new Option("--spare-executors <n>", "with --http: executors kept started for new MCP sessions (warm starts; each serves one session; subprocess and python only; 0 for none; default 1)").argParser(
        parseSpareExecutors,
      ),
    )
    .option("--host <address>", "address to bind with --http (default 127.0.0.1; others need --token or --no-auth)")
    .addOption(new Option("--token <token>", "bearer token HTTP clients must send").env(TOKEN_ENV))
    .option("--no-auth", "serve a non-loopback --host without a token (only on a trusted network)");
  addRemoteOptions(cmd, "--remote-token");
  cmd.addHelpText(
    "after",
    examples(
      "mcp --base ./.code-mode",
      "mcp --tools ./tools --storage ./data --timeout 60000",
      "mcp --http 8765",
      "mcp --languages typescript,python",
      `mcp --http 8765 --host 0.0.0.0 --token "$(openssl rand -hex 32)"`,
    ) +
      "\nClaude Code (from a clone, after npm run build; see docs/mcp.md for npm link, a tarball, and npx once published):\n" +
      "  claude mcp add ts-code-mode -- node /abs/path/to/ts-code-mode/dist/cli/main.js mcp --base /abs/path/.code-mode\n" +
      "HTTP clients connect to http://HOST:PORT/mcp. Logs go to stderr; on stdio, stdout carries only the protocol.\n",
  );
  cmd.action(async (flags: McpFlags) => {
    checkFlags(flags, cmd.getOptionValueSource("token") === "env");
    // --remote: the code runs on a serve instance; the storage flags must name the server's storage (it checks).
    if (flags.remote !== undefined) remoteExecutor(remoteFlagsOf(flags), { executorWasSet: cmd.getOptionValueSource("executor") === "cli", checkStorage: true });
    await startOtel(flags);
    await serve(flags);
  });
}

/** Every combination that cannot work is refused here, before a port is bound or stdout claimed. */
function checkFlags(flags: McpFlags, tokenFromEnv: boolean): void {
  checkExecutorFlags(flags);
  if (flags.durable && flags.remote !== undefined) throw new CliUsageError("--durable with --remote: the server records the runs; start it with serve --durable");
  if (flags.durable) checkDurableKey();
  if (flags.languages !== undefined) {
    if (flags.language !== undefined && !flags.languages.includes(flags.language)) {
      throw new CliUsageError(`--language ${flags.language} is the default of --languages, so it must be one of them; got --languages ${flags.languages.join(",")}`);
    }
    if (flags.remote !== undefined && flags.languages.length > 1) throw new CliUsageError("--languages with two languages needs a local executor; --remote runs one");
    // Each language's executor must be possible with these flags (Python: the executors that run it).
    for (const language of flags.languages) checkExecutorFlags({ ...flags, language });
  }
  if (flags.prefix !== undefined && flags.redis === undefined) {
    throw new CliUsageError("--prefix only applies to Redis storage; give --redis URL with it, or drop --prefix");
  }
  if (flags.redis !== undefined && flags.prefix === undefined) {
    throw new CliUsageError("--redis needs --prefix P: every key starts with P:, so several applications can share one server");
  }
  if (flags.redis !== undefined && flags.storage !== undefined) {
    throw new CliUsageError("--storage and --redis both say where workflows and artifacts live; give one");
  }
  if (flags.http === undefined) {
    const httpOnly = [
      flags.host !== undefined && "--host",
      flags.token !== undefined && !tokenFromEnv && "--token",
      !flags.auth && "--no-auth",
      flags.idleTimeout !== undefined && "--idle-timeout",
      flags.spareExecutors !== undefined && "--spare-executors",
    ].filter((f): f is string => typeof f === "string");
    if (httpOnly.length) {
      throw new CliUsageError(`${httpOnly.join(", ")} only ${httpOnly.length === 1 ? "applies" : "apply"} with --http PORT (stdio needs no address or token)`);
    }
    return;
  }
  const problem = authConfigProblem({
    host: flags.host ?? "127.0.0.1",
    ...(flags.token !== undefined ? { token: flags.token } : {}),
    noAuth: !flags.auth,
  });
  if (problem) throw new CliUsageError(problem);
}

async function serve(flags: McpFlags): Promise<void> {
  const log = stderrLog;
  const paths = resolvePaths(flags);
  // Serving reads until the agent saves something: a missing base is reported, not created empty.
  // With --redis and no --tools the tool YAML comes from Redis, so there is no tools folder to check.
  const undoFolders = await watchMissingFolders(paths, {
    warn: (l) => log(`warning: ${l}`),
    fileStorage: flags.redis === undefined,
    toolsFolder: flags.redis === undefined || flags.tools !== undefined,
  });
  const { storage, where: storedIn } = await openStorage(flags, paths.storagePath);
  // With Redis storage and no --tools, the tool YAML comes from Redis too (`store bootstrap --type tools`).
  let redisTools: ToolsFolder | null = null;
  if (storage instanceof RedisStorage && flags.tools === undefined) {
    try {
      redisTools = await redisToolsFolder(storage);
    } catch (err) {
      await storage.close();
      throw err;
    }
  }
  const toolsPath = redisTools?.dir ?? paths.toolsPath;
  // One chain for every MCP session: the audit log and per-run limits see all of them.
  const toolMiddleware = middlewareFromFlags(flags);
  // Approval is per MCP session: the question goes to the client whose code made the call.
  const approvalGlobs = flags.requireApproval;
  // --languages: run_code's default language, and the other one, whose session starts on its first call.
  const defaultLanguage: Language = flags.language ?? flags.languages?.[0] ?? "typescript";
  const otherLanguage = flags.languages?.find((l) => l !== defaultLanguage);
  // The executor modules this server builds sessions with (the factories below are synchronous).
  if (flags.remote === undefined) await Promise.all([defaultLanguage, ...(otherLanguage ? [otherLanguage] : [])].map((l) => loadExecutor(flags.executor, l)));
  // --sampler: this model answers toolable sampling requests instead of the client's.
  const sampler = flags.remote === undefined ? await samplerFromFlag(flags.sampler) : undefined;
  // --memory-mb, --image, --network, --skills: the same for every session (the folders checked once).
  // --sessions-per-child: one set of shared children for every session of this server.
  const executorExtras = { ...executorOptionsOf(flags), ...(flags.remote === undefined ? sharedChildOf(flags) : {}), ...(await toolsModuleOption(flags)) };
  const newExecutor = (approvals: ClientApprovals, language: Language = defaultLanguage): Executor =>
    flags.remote !== undefined ? remoteExecutor(remoteFlagsOf(flags), { executorWasSet: false, checkStorage: true }) : createExecutor(flags.executor, {
        toolsPath,
        defaultTimeoutMs: flags.timeout,
        middleware: approvalGlobs?.length ? [...toolMiddleware, approval(approvals.approver, { only: approvalGlobs })] : toolMiddleware,
        ...(flags.search !== undefined ? { search: flags.search } : {}),
        ...(flags.engine !== undefined ? { engine: flags.engine } : {}),
        ...(language !== "typescript" || flags.language !== undefined ? { language } : {}),
        ...executorExtras,
        // Also refuses deps.add/deps.remove inside run_code, not only the MCP tools.
        ...(flags.runtimeDeps ? {} : { allowRuntimeDeps: false }),
        // toolable tools: sampling through the client's model (or --sampler's), events as notifications.
        toolable: sampler ? { ...approvals.toolable, sampler } : approvals.toolable,
      });
  const newSession = (approvals: ClientApprovals, language: Language = defaultLanguage) => new Session({ storage, executor: newExecutor(approvals, language), ...(flags.durable ? { durable: true as const } : {}) });
  const serverOptions: Omit<CodeModeServerOptions, "otherLanguage"> = {
    maxOutput: flags.maxOutput,
    runtimeDeps: flags.runtimeDeps,
    surface: flags.surface,
    serverInfo: { name: "ts-code-mode", version: packageVersion() },
    log,
  };
  if (flags.executor === "in-process") {
    log("warning: with --executor in-process the agent's code runs inside this server: process.exit() ends it and a runaway async loop blocks it");
  }
  keepServing(log, flags.executor === "in-process");
  const toolsFrom = redisTools && storage instanceof RedisStorage ? `${count(redisTools.count, "tool file")} from Redis (${storage.prefix}:tools)` : `tools from ${paths.toolsPath}`;
  const where = `${toolsFrom}, storage in ${storedIn}`;
  const toolsWhere = redisTools && storage instanceof RedisStorage ? `Redis (${storage.prefix}:tools)` : paths.toolsPath;
  let spares: Awaited<ReturnType<typeof sparePool>> = null;
  try {
    if (flags.http === undefined) {
      const { ClientApprovals } = await import("../../mcp/approvals.js");
      const approvals = new ClientApprovals();
      const session = newSession(approvals);
      try {
        // The executor starts (child process, tool files) once the handshake is done: after the
        // answer to the client's first tools/list (see serveStdio's onHandshakeDone). Spawning and
        // parsing tool YAML are work on this thread that would otherwise delay initialize and
        // tools/list (issue 24). A call that comes earlier starts it itself (Session.run starts the
        // session) and waits inside Session.
        let handshakeDone!: () => void;
        const handshake = new Promise<void>((resolve) => (handshakeDone = resolve));
        // A failure here (a broken tool file, a missing container image, a remote that refuses the
        // token) is logged, never fatal: the client is connected, so each call that needs what
        // failed answers with the error (Session.run retries the start), until the cause is fixed.
        const starting = handshake
          .then(() => session.start())
          .then(async () => warnIfNoTools(log, await session.listTools(), toolsWhere))
          .catch((err: unknown) => log(`warning: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}\nstill serving: calls that need it answer with this error until it is fixed`));
        // The SDK is loaded only by this command, so every other command starts fast.
        const { serveStdio } = await import("../../mcp/stdio.js");
        const serving = await serveStdio(session, {
          ...serverOptions,
          approvals,
          onHandshakeDone: handshakeDone,
          ...(otherLanguage ? { otherLanguage: { language: otherLanguage, createSession: () => newSession(approvals, otherLanguage) } } : {}),
        });
        log(`serving ${count(serving.tools.length, "MCP tool")} over stdio (${where})`);
        await Promise.race([serving.closed, shutdownSignal()]).finally(() => serving.close());
        await starting;
      } finally {
        await session.close();
      }
      return;
    }
    // Each HTTP client gets its own session, started on first use: check the tool files now.
    if (flags.remote === undefined) {
      warnIfNoTools(log, await checkToolFiles(toolsPath), toolsWhere);
    }
    const { serveHttp } = await import("../../mcp/http.js");
    spares = await sparePool(flags, storage, (approvals) => newExecutor(approvals), log);
    const serving = await serveHttp({
      ...serverOptions,
      port: flags.http,
      ...(flags.host !== undefined ? { host: flags.host } : {}),
      ...(flags.token !== undefined ? { token: flags.token } : {}),
      noAuth: !flags.auth,
      ...(flags.idleTimeout !== undefined ? { idleTimeoutMs: flags.idleTimeout * 1000 } : {}),
      createSession: ({ approvals }) => spares?.take(storage) ?? newSession(approvals),
      ...(otherLanguage ? { otherLanguage: { language: otherLanguage, createSession: ({ approvals }: { approvals: ClientApprovals }) => newSession(approvals, otherLanguage) } } : {}),
    }).catch((err: unknown) => {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE") throw new CliUsageError(`port ${flags.http} is already in use on ${flags.host ?? "127.0.0.1"}; choose another --http PORT (0 picks a free one)`);
      if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") throw new CliUsageError(`cannot bind --host ${flags.host ?? ""}: no such local address`);
      throw err;
    });
    const auth = flags.token !== undefined ? "bearer token required" : isLoopbackHost(flags.host ?? "127.0.0.1") ? "loopback only, no token" : "NO AUTH (--no-auth)";
    log(`listening on ${serving.url} (${auth}; ${where})`);
    await shutdownSignal();
    log("shutting down");
    await serving.close();
  } finally {
    // Spares are closed before the storage their sessions would have used.
    await spares?.close();
    await redisTools?.remove();
    await storage.close();
    await undoFolders();
  }
}

/**
 * Warm starts for --http (issue 24): an ExecutorPool of spares, each built with its own fresh
 * ClientApprovals, which no client holds until the spare is handed to one new MCP session; then
 * that session's server binds it (serveHttp's createSession may return the approvals it wired). A
 * spare never carries another client's approvals, and serves one session only. Null when off
 * (--spare-executors 0, --remote, or an executor kind without a guest to prestart).
 */
async function sparePool(flags: McpFlags, storage: StorageBackend, newExecutor: (approvals: ClientApprovals) => Executor, log: (line: string) => void) {
  const count = flags.spareExecutors ?? 1;
  // --spare-executors 0: no started executor is kept, the implicit one (spare-children.ts) neither.
  if (count === 0) setSpareChildren(false);
  if (count === 0 || flags.remote !== undefined) return null;
  const [{ ExecutorPool }, { ClientApprovals }] = await Promise.all([import("../../execution/pool.js"), import("../../mcp/approvals.js")]);
  const approvalsOf = new WeakMap<Executor, ClientApprovals>();
  const pool = new ExecutorPool(
    () => {
      const approvals = new ClientApprovals();
      const executor = newExecutor(approvals);
      approvalsOf.set(executor, approvals);
      return executor;
    },
    { spares: count, likelyStorage: storage, log },
  );
  return {
    take(sessionStorage: StorageBackend): { session: Session; approvals: ClientApprovals } | null {
      const executor = pool.take();
      const approvals = approvalsOf.get(executor);
      // Every executor the pool hands out was made by the factory above.
      if (!approvals) {
        void executor.close();
        return null;
      }
      approvalsOf.delete(executor);
      return { session: new Session({ storage: sessionStorage, executor, ...(flags.durable ? { durable: true as const } : {}) }), approvals };
    },
    close: () => pool.close(),
  };
}

function remoteFlagsOf(flags: McpFlags): RemoteFlags {
  return {
    remote: flags.remote,
    ...(flags.remoteToken !== undefined ? { token: flags.remoteToken } : {}),
    // The same workspace names the local storage (checked by the server) and the server's tenant.
    ...(flags.workspace !== undefined ? { workspace: flags.workspace } : {}),
    ...(flags.timeout !== undefined ? { timeout: flags.timeout } : {}),
    ...(flags.engine !== undefined ? { engine: flags.engine } : {}),
    ...(flags.sampler !== undefined ? { sampler: flags.sampler } : {}),
    // Flags that belong to the server's executor, so that remoteExecutor refuses them by name.
    ...(flags.memoryMb !== undefined ? { memoryMb: flags.memoryMb } : {}),
    ...(flags.skills !== undefined ? { skills: flags.skills } : {}),
    ...(flags.sessionsPerChild !== undefined ? { sessionsPerChild: flags.sessionsPerChild } : {}),
  };
}

/** An agent offered run_code with an empty `tools` namespace should not be the first to notice. */
function warnIfNoTools(log: (line: string) => void, tools: readonly unknown[], toolsWhere: string): void {
  if (tools.length === 0) log(`warning: no tools loaded (no tool YAML in ${toolsWhere}); agents get run_code with workflows, artifacts and deps only`);
}

/**
 * FileStorage at the storage folder, or RedisStorage with --redis. Redis is reached before serving:
 * an unreachable server fails the command (exit 1, naming host:port) instead of every later call.
 */
async function openStorage(flags: McpFlags, storagePath: string): Promise<{ storage: StorageBackend; where: string }> {
  const workspace = flags.workspace !== undefined ? { workspaceId: flags.workspace } : {};
  if (flags.redis !== undefined) {
    let redis: RedisStorage;
    try {
      redis = new RedisStorage({ url: flags.redis, prefix: flags.prefix ?? "", ...workspace });
    } catch (err) {
      throw storageFlagError(err);
    }
    try {
      await redis.connect();
    } catch (err) {
      await redis.close();
      throw err;
    }
    const ws = redis.workspaceId !== undefined ? `, workspace ${redis.workspaceId}` : "";
    return { storage: redis, where: `Redis at ${redis.where}, prefix ${redis.prefix}${ws}` };
  }
  try {
    const file = new FileStorage({ basePath: storagePath, ...workspace });
    return { storage: file, where: file.root };
  } catch (err) {
    // A bad --workspace is the user's input; storage failures (permissions) stay errors.
    if (flags.workspace !== undefined && err instanceof Error && err.name !== "StorageError") throw new CliUsageError(`--workspace: ${err.message}`);
    throw err;
  }
}

/**
 * One agent's stray error must not end the server for every client. A rejected promise nobody
 * awaited (a tool adapter's, or in-process agent code's) is logged, not fatal. An uncaught
 * exception is survived only with the in-process executor, where agent code's timers throw into
 * this process; otherwise it is a bug in ts-code-mode and ends the process as usual.
 */
function keepServing(log: (line: string) => void, survivesExceptions: boolean): void {
  const describe = (err: unknown) => (err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.on("unhandledRejection", (reason) => log(`unhandled rejection (ignored, still serving): ${describe(reason)}`));
  if (survivesExceptions) process.on("uncaughtException", (err) => log(`uncaught exception in agent code (ignored, still serving): ${describe(err)}`));
}

/** Resolves on SIGINT or SIGTERM: how a client (or Ctrl-C) asks the server to stop. */
function shutdownSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
}

function parseMaxOutput(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!(n >= MIN_MAX_OUTPUT && n <= MAX_OUTPUT_LIMIT)) {
    throw new InvalidArgumentError(`expected a whole number of characters from ${MIN_MAX_OUTPUT} to ${MAX_OUTPUT_LIMIT}, e.g. 24000`);
  }
  return n;
}

function parseSpareExecutors(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!(n >= 0 && n <= 64)) throw new InvalidArgumentError("expected a number of executors from 0 to 64, e.g. 1");
  return n;
}

function parseIdleTimeout(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= 604_800)) throw new InvalidArgumentError("expected a whole number of seconds from 1 to 604800 (a week), e.g. 900");
  return n;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function parseLanguages(value: string): Language[] {
  const list = value.split(",").map((l) => l.trim().toLowerCase());
  const accepted = `expected typescript, python or typescript,python`;
  if (list.some((l) => !(LANGUAGES as readonly string[]).includes(l))) throw new InvalidArgumentError(`unknown language in ${JSON.stringify(value)}; ${accepted}`);
  if (new Set(list).size !== list.length) throw new InvalidArgumentError(`a language is listed twice in ${JSON.stringify(value)}; ${accepted}`);
  return list as Language[];
}

function parsePort(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!(n >= 0 && n <= 65_535)) throw new InvalidArgumentError("expected a port number from 0 to 65535 (0 picks a free port)");
  return n;
}
