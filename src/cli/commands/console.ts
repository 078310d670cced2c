/**
 * `ts-code-mode console`: the web console (src/console/, docs/console.md) on a base folder, alone.
 * The same auth as `serve`: a token (from the environment variable --token-env names) exchanged
 * once for a cookie, or loopback only without one. It prints the address to open.
 */
import { Option, type Command } from "commander";
import { isLoopbackHost, MIN_TOKEN_LENGTH } from "../../mcp/auth.js";
import { FileStorage } from "../../storage/file/storage.js";
import { addExecutorOptions, addStorageOptions, addToolsModuleOption, checkExecutorFlags, checkToolFiles, CliUsageError, examples, intIn, resolvePaths, type ExecutorFlags, type StorageFlags } from "../shared.js";
import { consoleUrl, executorFactory, openConsoleSession } from "./serve.js";

const DEFAULT_TOKEN_ENV = "TS_CODE_MODE_TOKEN";
const DEFAULT_PORT = 8788;

interface ConsoleFlags extends StorageFlags, ExecutorFlags {
  host: string;
  port: number;
  tokenEnv: string;
}

export function registerConsoleCommand(program: Command): void {
  const cmd = program.command("console").description("Serve the web console: runs, approvals of paused runs, workflows, artifacts, skills and tools of a base folder");
  addStorageOptions(cmd);
  addExecutorOptions(cmd);
  addToolsModuleOption(cmd);
  cmd
    .option("--host <address>", "address to bind (anything but loopback needs a token)", "127.0.0.1")
    .addOption(new Option("--port <port>", `port (0 picks a free one; default ${DEFAULT_PORT})`).default(DEFAULT_PORT).argParser(intIn(0, 65_535, "a port number")))
    .option("--token-env <name>", "environment variable holding the token; unset: no token, loopback only", DEFAULT_TOKEN_ENV);
  cmd.addHelpText(
    "after",
    examples(
      "console --base ./demo",
      `${DEFAULT_TOKEN_ENV}="$(openssl rand -hex 32)" ts-code-mode console --base ./demo --host 0.0.0.0`,
    ) +
      "\nAnswering approvals resumes paused runs here: set TS_CODE_MODE_RUNS_SECRET to the key the durable sessions use.\n" +
      "The console prints the address to open; with a token, that link logs the browser in once (an HttpOnly cookie).\n",
  );
  cmd.action(async (flags: ConsoleFlags) => {
    checkExecutorFlags(flags);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(flags.tokenEnv)) throw new CliUsageError(`--token-env ${flags.tokenEnv}: expected the name of an environment variable`);
    const raw = process.env[flags.tokenEnv];
    const token = raw === undefined || raw === "" ? undefined : raw;
    if (token !== undefined && token.length < MIN_TOKEN_LENGTH) throw new CliUsageError(`the token in ${flags.tokenEnv} must be at least ${MIN_TOKEN_LENGTH} characters long, e.g. one made by: openssl rand -hex 32`);
    if (token === undefined && !isLoopbackHost(flags.host)) {
      throw new CliUsageError(`refusing to serve ${flags.host} without a token: anyone who can reach it could approve tool calls. Set ${flags.tokenEnv} (e.g. "$(openssl rand -hex 32)"), or bind 127.0.0.1`);
    }
    await serveConsole(flags, token);
  });
}

async function serveConsole(flags: ConsoleFlags, token: string | undefined): Promise<void> {
  const log = (line: string) => process.stderr.write(`ts-code-mode console: ${line}\n`);
  const paths = resolvePaths(flags);
  await checkToolFiles(paths.toolsPath);
  const createExecutor = await executorFactory(flags, paths.toolsPath, log);
  const storage = new FileStorage({ basePath: paths.storagePath });
  const session = await openConsoleSession(storage, createExecutor);
  const [{ createConsoleApp }, { listen }] = await Promise.all([import("../../console/app.js"), import("../../server/serve.js")]);
  const app = createConsoleApp({ session, ...(token !== undefined ? { token } : {}), loopbackOnly: token === undefined, log });
  const server = await listen(app.fetch, flags.host, flags.port).catch(async (err: unknown) => {
    await session.close();
    await storage.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") throw new CliUsageError(`port ${flags.port} is already in use on ${flags.host}; choose another --port (0 picks a free one)`);
    if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") throw new CliUsageError(`cannot bind --host ${flags.host}: no such local address`);
    throw err;
  });
  process.on("unhandledRejection", (reason) => log(`unhandled rejection (ignored, still serving): ${String(reason)}`));
  log(
    `listening on ${server.url} (${token !== undefined ? "token required" : "loopback only, no token"}; storage in ${storage.root}; ` +
      `${session.isDurable ? "approvals resume runs here" : "set TS_CODE_MODE_RUNS_SECRET to answer approvals"})`,
  );
  process.stdout.write(`Open ${consoleUrl(server.url, token)}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  log("shutting down");
  await server.close();
  await session.close();
  await storage.close();
}
