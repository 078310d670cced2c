/** `ts-code-mode run`: one snippet in a fresh session; prints its output and value, or the result as JSON. */
import { readFile, stat } from "node:fs/promises";
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
import { addOtelOptions, startOtel, type OtelFlags } from "../otel.js";
import { addDurableOption, addResumeOptions, checkDurableKey, parseDecisions, resumeHint, type ResumeFlags } from "../durable.js";

/** Exit code of a run that paused for a decision (neither done nor failed). */
const EXIT_PAUSED = 3;

interface RunFlags extends StorageFlags, ExecutorFlags, RemoteFlags, OtelFlags, ResumeFlags {
  workspace?: string;
  json?: boolean;
  executor: ExecutorFlags["executor"];
  engine?: ExecutorFlags["engine"];
}

export function registerRunCommand(program: Command): void {
  const cmd = program
    .command("run")
    .description("Run TypeScript with tools, workflows, artifacts and deps in scope; print its output and last value")
    .argument("[code]", "the code, or a file of code (a path ending in .ts, .js, .mjs or .py); '-' (or no argument with piped input) reads it from stdin");
  addStorageOptions(cmd);
  addExecutorOptions(cmd);
  addToolsModuleOption(cmd);
  addJsonOption(cmd, "print the whole ExecutionResult as JSON on stdout");
  addRemoteOptions(cmd, "--token");
  addOtelOptions(cmd);
  addDurableOption(cmd, "record the run in the ledger of --base; a call that needs approval pauses it (exit code 3) and prints how to resume");
  addResumeOptions(cmd);
  cmd.option("--workspace <id>", "one tenant's workflows and artifacts (<storage>/workspaces/<id>); with --remote, the tenant's workspace on a server started with --workspace-header");
  cmd.addHelpText(
    "after",
    examples(
      "run 'await tools.list()'",
      "run --base ./demo 'await tools.echo.say({ text: [\"hi\"] })'",
      "run --json 'await workflows.triple({ n: 14 })'",
      "run - < snippet.ts",
      "run ./snippet.ts                  # a file: .py files run as Python",
      "echo 'console.log(1 + 1)' | ts-code-mode run --timeout 5000",
      "run --language python 'tools.echo.say(text=[\"hi\"])'",
      "run --remote http://10.0.0.5:8787 'await tools.list()'   # token from TS_CODE_MODE_TOKEN",
      "run --remote http://10.0.0.5:8787 --workspace team-a 'await artifacts.list()'",
      "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 ts-code-mode run --otel 'await tools.list()'",
      "run --durable 'await tools.journal.pay({ line: \"pay 100\" })'   # pauses: prints the continuation",
      `run --resume tcm1.... --decisions '[{"id":"call-0","decision":"approve"}]'`,
    ) +
      "\nEach run is a new session: variables do not carry over between commands; workflows and artifacts do.\n" +
      "Exit code: 0 when the code succeeded, 1 when it threw or timed out, 2 for a usage error, 3 when a durable run paused.\n",
  );
  cmd.action(async (code: string | undefined, flags: RunFlags) => {
    if (flags.workspace !== undefined) checkWorkspace(flags.workspace);
    const resuming = flags.resume !== undefined;
    if (resuming && code !== undefined) throw new CliUsageError("--resume takes no code: the paused run's code is in the ledger");
    if (!resuming && flags.decisions !== undefined) throw new CliUsageError("--decisions goes with --resume CONTINUATION");
    if (flags.remote !== undefined && flags.durable) {
      throw new CliUsageError("--durable with --remote: the server records the runs; start it with serve --durable (its pauses reach run --remote, and run --remote --resume goes on with them)");
    }
    // Local durable sessions sign and check continuations here; a remote server does that itself.
    if (flags.remote === undefined && (flags.durable || resuming)) checkDurableKey(resuming ? "--resume" : "--durable");
    const decisions = resuming ? parseDecisions(flags.decisions) : [];
    const file = resuming ? undefined : codeFile(code);
    if (file?.language === "python" && flags.language === undefined) flags.language = "python";
    const source = resuming ? "" : file ? await readCodeFile(file.path) : await readCode(code);
    await startOtel(flags);
    // With --remote only run() is used, so the local storage need not be the server's.
    const executor = flags.remote !== undefined ? remoteExecutor(flags, { executorWasSet: cmd.getOptionValueSource("executor") === "cli", checkStorage: false }) : undefined;
    const result = await withSession(flags, (session) => (resuming ? session.resume(flags.resume!, decisions) : session.run(source)), {
      readOnly: false,
      ...(executor ? { executor } : {}),
      ...(flags.workspace !== undefined ? { workspaceId: flags.workspace } : {}),
      durable: executor === undefined && (flags.durable === true || resuming),
    });
    if (flags.json) printJson(jsonResult(result));
    else printResult(result);
    if (result.status === "paused" && !flags.json) writeLine(process.stderr, resumeHint(`ts-code-mode run${flags.remote !== undefined ? " --remote URL" : ""}`, result.continuation!, (result.pending ?? []).map((p) => p.id)));
    if (!result.ok) process.exitCode = result.status === "paused" ? EXIT_PAUSED : EXIT_FAILURE;
  });
}

function checkWorkspace(id: string): void {
  try {
    validateWorkspaceId(id);
  } catch (err) {
    throw new CliUsageError(`--workspace: ${(err as Error).message}`);
  }
}

/** A code argument that names a file: one word ending in a code file's extension (no code is only that). */
const CODE_FILE = /^[^\s;(){}'"`]+\.(ts|mts|cts|js|mjs|cjs|py)$/;
/** Code files are read whole; a bigger one is a usage error rather than an unbounded read. */
const CODE_FILE_MAX_BYTES = 10 * 1_048_576;

/** The file `run ./x.ts` means, with the language its extension says (Python for .py). */
function codeFile(arg: string | undefined): { path: string; language: "typescript" | "python" } | undefined {
  const match = arg === undefined ? null : CODE_FILE.exec(arg);
  if (!match || arg === undefined) return undefined;
  return { path: arg, language: match[1] === "py" ? "python" : "typescript" };
}

async function readCodeFile(file: string): Promise<string> {
  let info;
  try {
    info = await stat(file);
  } catch {
    throw new CliUsageError(`no such file: ${file} (a code argument that looks like a file name is read as one; to run it as code, pipe it in)`);
  }
  if (!info.isFile()) throw new CliUsageError(`${file} is not a file`);
  if (info.size > CODE_FILE_MAX_BYTES) throw new CliUsageError(`${file} is ${info.size} bytes; code files are read up to ${CODE_FILE_MAX_BYTES} bytes`);
  const code = await readFile(file, "utf8");
  if (code.trim() === "") throw new CliUsageError(`no code given: ${file} is empty`);
  return code;
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
  // A durable run: its id and end, and a pause's calls and continuation (JSON-safe as the ledger keeps them).
  if (result.runId !== undefined) out.runId = result.runId;
  if (result.status !== undefined) out.status = result.status;
  if (result.pending !== undefined) out.pending = result.pending;
  if (result.continuation !== undefined) out.continuation = result.continuation;
  return out;
}
