/** `ts-code-mode tools list|search|describe|call`: the host facade over the tool registry. */
import { readFile, stat } from "node:fs/promises";
import type { Command } from "commander";
import { toWireError } from "../../execution/wire-error.js";
import type { ToolListing } from "../../tools/registry.js";
import { formatScore, oneLine, table } from "../format.js";
import {
  CLI_SEARCH_WAIT_MS,
  searchOption,
  addJsonOption,
  addStorageOptions,
  CliUsageError,
  DEFAULT_BASE,
  EXIT_FAILURE,
  EXIT_USAGE,
  examples,
  parseLimit,
  printJson,
  resolvePaths,
  withSession,
  writeLine,
  type StorageFlags,
} from "../shared.js";

interface JsonFlags extends StorageFlags {
  json?: boolean;
}

interface SearchFlags extends JsonFlags {
  limit?: number;
}

interface CallFlags extends JsonFlags {
  args: string;
}

export function registerToolsCommands(program: Command): void {
  const tools = program
    .command("tools")
    .description("List, search, describe and call the tools of a base folder")
    .addHelpText("after", examples("tools list", "tools search 'count lines'", "tools describe echo", "tools call echo.say --args '{\"text\":[\"hi\"]}'"));

  const list = tools.command("list").description("List every tool with its callables");
  addStorageOptions(list);
  addJsonOption(list, "print the tool listings as JSON");
  list.addHelpText("after", examples("tools list", "tools list --base ./demo --json"));
  list.action(async (flags: JsonFlags) => {
    const listings = await withSession(flags, (s) => s.listTools());
    if (flags.json) return printJson(listings);
    if (listings.length === 0) return writeLine(process.stdout, noTools(flags));
    writeLine(process.stdout, toolTable(listings));
  });

  const search = tools.command("search").description("Find tools by what they do, best match first").argument("<query>", "words describing the task");
  addStorageOptions(search);
  search.option("--limit <n>", "at most this many results (default 10)", parseLimit);
  search.addOption(searchOption());
  addJsonOption(search, "print the matches (with scores) as JSON");
  search.addHelpText("after", examples("tools search 'search text in files'", "tools search date --limit 3 --json"));
  search.action(async (query: string, flags: SearchFlags) => {
    const found = await withSession(flags, (s) => s.searchTools(query, limitOption(flags)), { readOnly: true, searchWaitMs: CLI_SEARCH_WAIT_MS });
    if (flags.json) return printJson(found);
    if (found.length === 0) return writeLine(process.stdout, `No tools match ${JSON.stringify(query)}.`);
    writeLine(process.stdout, toolTable(found, (t) => formatScore(t.score)));
  });

  const describe = tools.command("describe").description("Print a tool's TypeScript declaration (what the agent's code can call)").argument("<name>", "tool name");
  addStorageOptions(describe);
  addJsonOption(describe, 'print { "name", "declaration" } as JSON (failures as { "error": ... })');
  describe.addHelpText("after", examples("tools describe echo", "tools describe grep --base ./demo", "tools describe wc --json"));
  describe.action(async (name: string, flags: JsonFlags) => {
    await reportingJson(flags, async () => {
      const declaration = await withSession(flags, (s) => s.describeTool(name));
      if (flags.json) return printJson({ name, declaration });
      writeLine(process.stdout, declaration);
    });
  });

  const call = tools
    .command("call")
    .description("Call a tool from the command line, as tools.<tool>.<callable>(args) would")
    .argument("<target>", "TOOL.CALLABLE (a recipe, MCP tool or endpoint), or TOOL alone for the tool's direct call");
  addStorageOptions(call);
  call.option("--args <json>", "arguments as a JSON object; @FILE reads them from a file, - from stdin", "{}");
  addJsonOption(call, 'print the result as JSON (a CLI tool\'s output becomes a JSON string); a failure prints { "error": { name, message, code, ... } }');
  call.addHelpText(
    "after",
    examples("tools call echo.say --args '{\"text\":[\"hi\"]}'", "tools call wc.lines --args '{\"files\":[\"README.md\"]}' --json", "tools call date --args '{\"utc\":true}'", "tools call wc.lines --args @args.json", "echo '{\"text\":[\"hi\"]}' | ts-code-mode tools call echo.say --args -"),
  );
  call.action(async (target: string, flags: CallFlags) => {
    await reportingJson(flags, async () => {
      const { tool, callable } = parseTarget(target);
      const args = parseArgsJson(await readArgsText(flags.args));
      const result = await withSession(flags, (s) => s.callTool(tool, callable, args));
      if (flags.json) return printJson(result);
      writeLine(process.stdout, typeof result === "string" ? result : JSON.stringify(result, null, 2) ?? String(result));
    });
  });
}

/**
 * With --json, a script reads stdout only: a failure is printed there as
 * `{ "error": { name, message, code?, tool?, callable?, exitCode?, status?, stderr?, suggestions? } }`
 * (exit 2 for a usage error, else 1). Without --json, errors go to stderr as for every command.
 */
async function reportingJson(flags: JsonFlags, action: () => Promise<void>): Promise<void> {
  if (!flags.json) return action();
  try {
    await action();
  } catch (err) {
    const wire = toWireError(err);
    const error: Record<string, unknown> = { name: wire.name, message: wire.message, ...wire.details };
    process.stdout.write(`${JSON.stringify({ error }, null, 2)}\n`);
    process.exitCode = err instanceof CliUsageError ? EXIT_USAGE : EXIT_FAILURE;
  }
}

function limitOption(flags: SearchFlags): { limit?: number } {
  return flags.limit !== undefined ? { limit: flags.limit } : {};
}

/** Width of a table when stdout is not a terminal (a pipe, a file, a test). */
const DEFAULT_COLUMNS = 100;
/** Narrowest a truncated column gets, however small the terminal. */
const MIN_CELL = 12;
const GAP = 2;

/**
 * The listing table, fitted to the terminal: a tool's callables (an MCP server may have dozens) and
 * its description are cut to the width left, with a count of what was left out. `--json` and
 * `tools describe` give everything.
 */
function toolTable<T extends ToolListing>(listings: T[], score?: (t: T) => string): string {
  const width = process.stdout.columns || DEFAULT_COLUMNS;
  const headers = [...(score ? ["SCORE"] : []), "TOOL", "CALLABLES", "DESCRIPTION"];
  const fixed = listings.map((t) => [...(score ? [score(t)] : []), t.name]);
  const fixedWidth = headers.slice(0, -2).reduce((sum, h, col) => sum + Math.max(h.length, ...fixed.map((r) => r[col]?.length ?? 0)) + GAP, 0);
  const room = Math.max(2 * MIN_CELL, width - fixedWidth - GAP);
  const callablesText = listings.map((t) => t.callables.map((c) => c.name));
  const widest = Math.max("CALLABLES".length, ...callablesText.map((names) => names.join(", ").length || 1));
  // Callables get what they need up to a bit less than half the room; the description the rest.
  const callablesWidth = Math.max(Math.min(widest, MIN_CELL), Math.min(widest, Math.floor(room * 0.45)));
  const descriptionWidth = Math.max(MIN_CELL, room - callablesWidth);
  const rows = listings.map((t, i) => [...(fixed[i] ?? []), fitNames(callablesText[i] ?? [], callablesWidth), oneLine(t.description, descriptionWidth)]);
  return table(headers, rows);
}

/** `a, b, c` cut to `max` characters as `a, b, … +5`; `-` for none. */
function fitNames(names: string[], max: number): string {
  const all = names.join(", ");
  if (all.length <= max) return all || "-";
  let shown = "";
  for (let n = names.length - 1; n >= 0; n--) {
    const head = names.slice(0, n).join(", ");
    const tail = `${n ? ", " : ""}… +${names.length - n}`;
    if (head.length + tail.length <= max) {
      shown = head + tail;
      break;
    }
  }
  return shown || `… ${names.length}`;
}

function noTools(flags: StorageFlags): string {
  const { toolsPath } = resolvePaths(flags);
  const base = flags.base === DEFAULT_BASE ? "" : ` --base ${flags.base}`;
  return `No tools in ${toolsPath}. Add tool YAML files there, or add the examples with: ts-code-mode init${base}`;
}

/** `echo.say` → tool echo, callable say; `echo` → the tool's direct call. */
function parseTarget(target: string): { tool: string; callable: string | null } {
  const dot = target.indexOf(".");
  const tool = dot === -1 ? target : target.slice(0, dot);
  const callable = dot === -1 ? null : target.slice(dot + 1);
  if (tool === "" || callable === "") throw new CliUsageError(`expected TOOL or TOOL.CALLABLE, e.g. echo.say; got ${JSON.stringify(target)}`);
  return { tool, callable };
}

/** Arguments bigger than this (from a file or stdin) are a usage error, not an unbounded read. */
const ARGS_MAX_BYTES = 10 * 1_048_576;

/** `--args JSON`, `--args @FILE` or `--args -` (stdin), as curl's `--data` reads them. */
async function readArgsText(flag: string): Promise<string> {
  if (flag === "-") {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      const buf = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
      size += buf.length;
      if (size > ARGS_MAX_BYTES) throw new CliUsageError(`--args -: stdin has more than ${ARGS_MAX_BYTES} bytes`);
      chunks.push(buf);
    }
    return Buffer.concat(chunks).toString("utf8");
  }
  if (!flag.startsWith("@")) return flag;
  const file = flag.slice(1);
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) throw new CliUsageError(`--args ${flag}: no such file: ${file}`);
  if (info.size > ARGS_MAX_BYTES) throw new CliUsageError(`--args ${flag}: the file has ${info.size} bytes; at most ${ARGS_MAX_BYTES}`);
  return readFile(file, "utf8");
}

function parseArgsJson(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CliUsageError(`--args is not valid JSON (${err instanceof Error ? err.message : String(err)}); expected an object, e.g. '{"text":["hi"]}'`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new CliUsageError(`--args must be a JSON object, e.g. '{"text":["hi"]}'; got ${oneLine(text)}`);
  }
  return parsed as Record<string, unknown>;
}
