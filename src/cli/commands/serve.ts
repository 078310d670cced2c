/**
 * `ts-code-mode serve`: the HTTP session server (src/server/) that RemoteExecutor and fleets use.
 * Every flag is checked before a port is bound. Fail closed: a token is required unless --no-auth
 * is given, and --no-auth is refused anywhere but loopback. hono is loaded only by this command.
 */
import { toolsModuleOption } from "../tools-module.js";
import { Option, type Command } from "commander";
import { isLoopbackHost, MIN_TOKEN_LENGTH } from "../../mcp/auth.js";
import type { StorageBackend } from "../../storage/protocol.js";
import type { Executor } from "../../execution/protocol.js";
import type { Session } from "../../session.js";
import { FileStorage } from "../../storage/file/storage.js";
import { RedisStorage } from "../../storage/redis/storage.js";
import { createExecutor, loadExecutor } from "../../execution/by-name.js";
import { setSpareChildren } from "../../execution/subprocess/spare-children.js";
import { samplerFromFlag } from "../sampler.js";
import { eventLine } from "../../tools/adapters/toolable/host.js";
import { packageVersion } from "../package-root.js";
import { redisToolsFolder, type ToolsFolder } from "../redis-tools.js";
import { addExecutorOptions, addToolsModuleOption, addStorageOptions, checkExecutorFlags, checkToolFiles, CliUsageError, examples, executorOptionsOf, intIn, middlewareFromFlags, resolvePaths, sharedChildOf, storageFlagError, type ExecutorFlags, type StorageFlags } from "../shared.js";
import { addOtelOptions, startOtel, type OtelFlags } from "../otel.js";
import { addDurableOption, checkDurableKey, type DurableFlags } from "../durable.js";

const TOKEN_ENV = "TS_CODE_MODE_TOKEN";
const DEFAULT_PORT = 8787;
const DEFAULT_MAX_SESSIONS = 64;
const DEFAULT_IDLE_TIMEOUT_S = 900;
const DEFAULT_MAX_BODY_BYTES = 16 * 1_048_576;

interface ServeFlags extends StorageFlags, ExecutorFlags, OtelFlags, DurableFlags {
  host: string;
  port: number;
  token?: string;
  auth: boolean;
  redis?: string;
  prefix?: string;
  workspaceHeader?: string;
  clientStorage?: boolean;
  maxSessions: number;
  idleTimeout: number;
  maxBodyBytes: number;
  spareExecutors: number;
  console?: boolean;
}

export function registerServeCommand(program: Command): void {
  const cmd = program.command("serve").description("Serve sessions over HTTP (for RemoteExecutor, `run --remote`, `mcp --remote` and fleets of servers on one Redis)");
  addStorageOptions(cmd);
  cmd
    .option("--redis <url>", "keep workflows and artifacts in Redis (shared by every server on the same --prefix); tool YAML too unless --tools is given")
    .option("--prefix <prefix>", "key prefix in Redis (required with --redis)")
    .option("--workspace-header <name>", "per-tenant workspaces: each request names its tenant in this header (e.g. X-Workspace); ids as for --workspace")
    .option("--client-storage", "let a session name its own storage (a folder or Redis URL of the client's): only for trusted clients");
  addExecutorOptions(cmd);
  addToolsModuleOption(cmd);
  addOtelOptions(cmd);
  addDurableOption(cmd, "sessions record their runs in the ledger and pause for approvals; GET /runs, POST /runs/{id}/decisions resume them on any server sharing the storage");
  cmd
    .option("--host <address>", "address to bind", "127.0.0.1")
    .addOption(new Option("--port <port>", `port (0 picks a free one; default ${DEFAULT_PORT})`).default(DEFAULT_PORT).argParser(intIn(0, 65_535, "a port number")))
    .addOption(new Option("--token <token>", `bearer token every request but GET /health must send (at least ${MIN_TOKEN_LENGTH} characters)`).env(TOKEN_ENV))
    .option("--no-auth", "no token (loopback --host only)")
    .option("--console", "also serve the web console under /console (same token; see docs/console.md)")
    .addOption(new Option("--max-sessions <n>", "sessions held at once; more are refused with 429").default(DEFAULT_MAX_SESSIONS).argParser(intIn(1, 100_000, "a number of sessions")))
    .addOption(new Option("--idle-timeout <seconds>", "close a session (and end its processes) after this long without a request").default(DEFAULT_IDLE_TIMEOUT_S).argParser(intIn(1, 604_800, "a number of seconds")))
    .addOption(new Option("--max-body-bytes <n>", "largest request body; larger is refused with 413").default(DEFAULT_MAX_BODY_BYTES).argParser(intIn(1_024, 1_073_741_824, "a number of bytes")))
    .addOption(new Option("--spare-executors <n>", "executors kept started for new sessions (warm starts; subprocess and python only; 0 for none)").default(1).argParser(intIn(0, 64, "a number of executors")));
  cmd.addHelpText(
    "after",
    examples(
      `serve --base ./.code-mode --token "$(openssl rand -hex 32)"`,
      "serve --no-auth --port 0",
      "OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 ts-code-mode serve --otel   # traces: one per request, runs and tool calls inside",
      `serve --host 0.0.0.0 --redis redis://redis:6379 --prefix app --workspace-header X-Workspace   # token from ${TOKEN_ENV}`,
      "TS_CODE_MODE_RUNS_SECRET=... ts-code-mode serve --durable --redis redis://redis:6379 --prefix app   # approvals pause; POST /runs/{id}/decisions resumes",
    ) + "\nThe API is described at GET /openapi.json; GET /health needs no token. Sessions live on the server that created them: route by session id.\n",
  );
  cmd.action(async (flags: ServeFlags) => {
    checkFlags(flags);
    await startOtel(flags);
    await serve(flags);
  });
}

function checkFlags(flags: ServeFlags): void {
  checkExecutorFlags(flags);
  if (flags.durable) checkDurableKey();
  if (flags.token !== undefined && !flags.auth) throw new CliUsageError("--token and --no-auth contradict each other; give one");
  if (flags.token !== undefined && flags.token.length < MIN_TOKEN_LENGTH) {
    throw new CliUsageError(`the token must be at least ${MIN_TOKEN_LENGTH} characters long, e.g. one made by: openssl rand -hex 32`);
  }
  if (flags.token === undefined && flags.auth) {
    throw new CliUsageError(`a bearer token is required: give --token (or ${TOKEN_ENV}), e.g. --token "$(openssl rand -hex 32)"; on a loopback --host, --no-auth serves without one`);
  }
  if (!flags.auth && !isLoopbackHost(flags.host)) {
    throw new CliUsageError(`--no-auth is refused on ${flags.host}: anyone who can reach it could run code on this machine. Give --token, or bind 127.0.0.1`);
  }
  if ((flags.prefix !== undefined) !== (flags.redis !== undefined)) throw new CliUsageError("--redis and --prefix go together: every key starts with the prefix");
  if (flags.redis !== undefined && flags.storage !== undefined) throw new CliUsageError("--storage and --redis both say where workflows and artifacts live; give one");
  if (flags.workspaceHeader !== undefined) {
    if (!/^[A-Za-z0-9-]{1,64}$/.test(flags.workspaceHeader)) throw new CliUsageError("--workspace-header: expected an HTTP header name (letters, digits, -), e.g. X-Workspace");
    if (["authorization", "host", "content-type", "content-length", "accept"].includes(flags.workspaceHeader.toLowerCase())) {
      throw new CliUsageError(`--workspace-header ${flags.workspaceHeader}: that header already means something; use e.g. X-Workspace`);
    }
    if (flags.clientStorage) throw new CliUsageError("--workspace-header and --client-storage contradict each other: the server or the client chooses the storage, not both");
    if (flags.sessionsPerChild !== undefined) {
      throw new CliUsageError("--sessions-per-child with --workspace-header would put different tenants' sessions in one child, where one tenant's code can reach another's; leave out --sessions-per-child (each session then has a child of its own)");
    }
  }
}

async function serve(flags: ServeFlags): Promise<void> {
  const log = (line: string) => process.stderr.write(`ts-code-mode serve: ${line}\n`);
  const paths = resolvePaths(flags);
  let storage: StorageBackend;
  let openWorkspace: (id: string) => Promise<StorageBackend>;
  let where: string;
  if (flags.redis !== undefined) {
    const url = flags.redis;
    const prefix = flags.prefix ?? "";
    let redis: RedisStorage;
    try {
      redis = new RedisStorage({ url, prefix });
    } catch (err) {
      throw storageFlagError(err);
    }
    await redis.connect().catch(async (err: unknown) => {
      await redis.close();
      throw err;
    });
    storage = redis;
    openWorkspace = async (workspaceId) => new RedisStorage({ url, prefix, workspaceId });
    where = `Redis at ${redis.where}, prefix ${prefix}`;
  } else {
    const file = new FileStorage({ basePath: paths.storagePath });
    storage = file;
    openWorkspace = async (workspaceId) => new FileStorage({ basePath: paths.storagePath, workspaceId });
    where = file.root;
  }
  let redisTools: ToolsFolder | null = null;
  if (storage instanceof RedisStorage && flags.tools === undefined) redisTools = await redisToolsFolder(storage);
  const toolsPath = redisTools?.dir ?? paths.toolsPath;
  await checkToolFiles(toolsPath).catch(async (err: unknown) => {
    await redisTools?.remove();
    await storage.close();
    throw err;
  });
  const createSessionExecutor = await executorFactory(flags, toolsPath, log).catch(async (err: unknown) => {
    await redisTools?.remove();
    await storage.close();
    throw err;
  });
  const consoleSession = flags.console ? await openConsoleSession(storage, createSessionExecutor) : undefined;
  // --spare-executors 0: no started executor is kept, the implicit one (spare-children.ts) neither.
  if (flags.spareExecutors === 0) setSpareChildren(false);
  const { startServer } = await import("../../server/serve.js");
  const server = await startServer({
    host: flags.host,
    port: flags.port,
    version: packageVersion(),
    ...(flags.token !== undefined ? { token: flags.token } : {}),
    loopbackOnly: flags.token === undefined,
    executorKind: flags.executor,
    spareExecutors: flags.spareExecutors,
    createExecutor: createSessionExecutor,
    storage,
    ...(flags.workspaceHeader !== undefined ? { openWorkspace } : {}),
    workspaceHeader: flags.workspaceHeader?.toLowerCase() ?? null,
    clientStorage: flags.clientStorage === true,
    maxSessions: flags.maxSessions,
    idleTimeoutMs: flags.idleTimeout * 1000,
    maxBodyBytes: flags.maxBodyBytes,
    durable: flags.durable === true,
    log,
    ...(consoleSession ? { consoleSession } : {}),
  }).catch(async (err: unknown) => {
    await consoleSession?.close();
    await storage.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") throw new CliUsageError(`port ${flags.port} is already in use on ${flags.host}; choose another --port (0 picks a free one)`);
    if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") throw new CliUsageError(`cannot bind --host ${flags.host}: no such local address`);
    throw err;
  });
  process.on("unhandledRejection", (reason) => log(`unhandled rejection (ignored, still serving): ${String(reason)}`));
  log(`listening on ${server.url} (${flags.token !== undefined ? "bearer token required" : "loopback only, no token"}; executor ${flags.executor}; storage in ${where}${flags.durable ? "; durable runs" : ""})`);
  if (consoleSession) process.stdout.write(`Console: ${consoleUrl(server.url, flags.token)}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  log("shutting down");
  await server.close();
  await consoleSession?.close();
  await redisTools?.remove();
  await storage.close();
}


/**
 * How the server (and the console) make an executor for a session: --memory-mb, --image, --network,
 * --skills, --tools-module the same for every session, the folders checked once.
 */
export async function executorFactory(flags: ExecutorFlags, toolsPath: string, log: (line: string) => void): Promise<() => Executor> {
  await loadExecutor(flags.executor, flags.language);
  const sampler = await samplerFromFlag(flags.sampler);
  // --sessions-per-child: one set of shared children for every session of this server.
  const executorExtras = { ...executorOptionsOf(flags), ...sharedChildOf(flags), ...(await toolsModuleOption(flags)) };
  const middleware = middlewareFromFlags(flags);
  return () =>
    createExecutor(flags.executor, {
      toolsPath,
      defaultTimeoutMs: flags.timeout,
      middleware,
      ...(flags.search !== undefined ? { search: flags.search } : {}),
      ...(flags.engine !== undefined ? { engine: flags.engine } : {}),
      ...(flags.language !== undefined ? { language: flags.language } : {}),
      ...executorExtras,
      // Toolable tools' progress/log/artifact events go to the server's log (a remote client does not receive them).
      toolable: { onEvent: (e) => log(eventLine(e)), ...(sampler ? { sampler } : {}) },
    });
}

/**
 * The console's own session on the server's storage. Durable when TS_CODE_MODE_RUNS_SECRET is set:
 * answering an approval resumes the paused run here, which needs the key that signed it.
 */
export async function openConsoleSession(storage: StorageBackend, createExecutor: () => Executor): Promise<Session> {
  const { Session } = await import("../../session.js");
  const durable = (process.env["TS_CODE_MODE_RUNS_SECRET"] ?? "") !== "";
  return new Session({ storage, executor: createExecutor(), ...(durable ? { durable: true as const } : {}) });
}

/** The address a person opens: with a token, the login link that trades it for the console's cookie. */
export function consoleUrl(base: string, token: string | undefined): string {
  return token === undefined ? `${base}/console/` : `${base}/console/login?token=${encodeURIComponent(token)}`;
}
