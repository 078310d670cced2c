/** `ts-code-mode run`: one snippet in a fresh session; prints its output and value, or the result as JSON. */
import type { Command } from "commander";
import type { ExecutionResult } from "../../execution/protocol.js";
import { boundedJson } from "../../values/json.js";
import { addRemoteOptions, remoteExecutor, type RemoteFlags } from "../remote.js";
import { OUTPUT_JSON_LIMITS } from "../../values/limits.js";
import { validateWorkspaceId } from "../../storage/names.js";
import {
  addExecutorOptions,
  addToolsModuleOption,
  addJsonOption,
  addStorageOptions,
  CliUsageError,
  examples,
  EXIT_FAILURE,
  printJson,
  withSession,
  writeLine,
  type ExecutorFlags,
  type StorageFlags,
} from "../shared.js";

interface RunFlags extends StorageFlags, ExecutorFlags, RemoteFlags {
  workspace?: string;
  json?: boolean;
  executor: ExecutorFlags["executor"];
  engine?: ExecutorFlags["engine"];
}

export function registerRunCommand(program: Command): void {
  const cmd = program
    .command("run")
    .description("Run TypeScript with tools, workflows, artifacts and deps in scope; print its output and last value")
    .argument("[code]", "the code; '-' (or no argument with piped input) reads it from stdin");
  addStorageOptions(cmd);
  addExecutorOptions(cmd);
  addToolsModuleOption(cmd);
  addJsonOption(cmd, "print the whole ExecutionResult as JSON on stdout");
  addRemoteOptions(cmd, "--token");
  cmd.option("--workspace <id>", "one tenant's workflows and artifacts (<storage>/workspaces/<id>); with --remote, the tenant's workspace on a server started with --workspace-header");
  cmd.addHelpText(
    "after",
    examples(
      "run 'await tools.list()'",
      "run --base ./demo 'await tools.echo.say({ text: [\"hi\"] })'",
      "run --json 'await workflows.triple({ n: 14 })'",
      "run - < snippet.ts",
      "echo 'console.log(1 + 1)' | ts-code-mode run --timeout 5000",
      "run --language python 'tools.echo.say(text=[\"hi\"])'",
      "run --remote http://10.0.0.5:8787 'await tools.list()'   # token from TS_CODE_MODE_TOKEN",
      "run --remote http://10.0.0.5:8787 --workspace team-a 'await artifacts.list()'",
    ) +
      "\nEach run is a new session: variables do not carry over between commands; workflows and artifacts do.\n" +
      "Exit code: 0 when the code succeeded, 1 when it threw or timed out, 2 for a usage error.\n",
  );
  cmd.action(async (code: string | undefined, flags: RunFlags) => {
    if (flags.workspace !== undefined) checkWorkspace(flags.workspace);
    const source = await readCode(code);
    // With --remote only run() is used, so the local storage need not be the server's.
    const executor = flags.remote !== undefined ? remoteExecutor(flags, { executorWasSet: cmd.getOptionValueSource("executor") === "cli", checkStorage: false }) : undefined;
    const result = await withSession(flags, (session) => session.run(source), {
      readOnly: false,
      ...(executor ? { executor } : {}),
      ...(flags.workspace !== undefined ? { workspaceId: flags.workspace } : {}),
    });
    if (flags.json) printJson(jsonResult(result));
    else printResult(result);
    if (!result.ok) process.exitCode = EXIT_FAILURE;
  });
}

function checkWorkspace(id: string): void {
  try {
    validateWorkspaceId(id);
  } catch (err) {
    throw new CliUsageError(`--workspace: ${(err as Error).message}`);
  }
}

/** The argument, or stdin for `-` or for no argument when input is piped. */
async function readCode(arg: string | undefined): Promise<string> {
  if (arg !== undefined && arg !== "-") {
    if (arg.trim() === "") throw new CliUsageError("no code given: the code argument is empty");
    return arg;
  }
  if (arg === undefined && process.stdin.isTTY) {
    throw new CliUsageError("no code given: pass it as an argument, e.g. ts-code-mode run 'await tools.list()', or pipe it in");
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  const code = Buffer.concat(chunks).toString("utf8");
  if (code.trim() === "") throw new CliUsageError("no code given: stdin was empty");
  return code;
}

/** Guest stdout, guest stderr, then the value; an error as `<name>: <message>` on stderr. */
function printResult(result: ExecutionResult): void {
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  writeLine(process.stdout, result.display);
  if (result.error) writeLine(process.stderr, `${result.error.name}: ${result.error.message}`);
}

/**
 * The ExecutionResult as a JSON-safe object. `value` is left out when JSON cannot hold it exactly
 * (Map, Set, BigInt, Uint8Array, Date, ...) or when its JSON would pass OUTPUT_JSON_LIMITS (the
 * same ~1,000,000 characters as each output stream); `valueOmitted` then says why, and `display`
 * still shows the value. The check is bounded whatever the value's shape (a DAG of 2^40 paths).
 */
function jsonResult(result: ExecutionResult): Record<string, unknown> {
  const out: Record<string, unknown> = { ok: result.ok };
  if (result.value !== undefined) {
    const json = boundedJson(result.value, OUTPUT_JSON_LIMITS);
    if (json.ok) out.value = result.value;
    else out.valueOmitted = `value left out of the JSON: ${json.reason}`;
  }
  out.display = result.display;
  out.stdout = result.stdout;
  out.stderr = result.stderr;
  // Rebuilt field by field: an `undefined` stack would otherwise make the whole object non-JSON.
  out.error = result.error && { name: result.error.name, message: result.error.message, ...(result.error.stack ? { stack: result.error.stack } : {}) };
  out.durationMs = result.durationMs;
  return out;
}
