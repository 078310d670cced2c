/** `ts-code-mode tools list|search|describe|call`: the host facade over the tool registry. */
import type { Command } from "commander";
import type { ToolListing } from "../../tools/registry.js";
import { formatScore, oneLine, table } from "../format.js";
import {
  addJsonOption,
  addStorageOptions,
  CliUsageError,
  DEFAULT_BASE,
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
  addJsonOption(search, "print the matches (with scores) as JSON");
  search.addHelpText("after", examples("tools search 'search text in files'", "tools search date --limit 3 --json"));
  search.action(async (query: string, flags: SearchFlags) => {
    const found = await withSession(flags, (s) => s.searchTools(query, limitOption(flags)));
    if (flags.json) return printJson(found);
    if (found.length === 0) return writeLine(process.stdout, `No tools match ${JSON.stringify(query)}.`);
    writeLine(process.stdout, toolTable(found, (t) => formatScore(t.score)));
  });

  const describe = tools.command("describe").description("Print a tool's TypeScript declaration (what the agent's code can call)").argument("<name>", "tool name");
  addStorageOptions(describe);
  describe.addHelpText("after", examples("tools describe echo", "tools describe grep --base ./demo"));
  describe.action(async (name: string, flags: StorageFlags) => {
    writeLine(process.stdout, await withSession(flags, (s) => s.describeTool(name)));
  });

  const call = tools
    .command("call")
    .description("Call a tool from the command line, as tools.<tool>.<callable>(args) would")
    .argument("<target>", "TOOL.CALLABLE (a recipe, MCP tool or endpoint), or TOOL alone for the tool's direct call");
  addStorageOptions(call);
  call.option("--args <json>", "arguments as a JSON object", "{}");
  addJsonOption(call, "print the result as JSON (a CLI tool's output becomes a JSON string)");
  call.addHelpText(
    "after",
    examples("tools call echo.say --args '{\"text\":[\"hi\"]}'", "tools call wc.lines --args '{\"files\":[\"README.md\"]}' --json", "tools call date --args '{\"utc\":true}'"),
  );
  call.action(async (target: string, flags: CallFlags) => {
    const { tool, callable } = parseTarget(target);
    const args = parseArgsJson(flags.args);
    const result = await withSession(flags, (s) => s.callTool(tool, callable, args));
    if (flags.json) return printJson(result);
    writeLine(process.stdout, typeof result === "string" ? result : JSON.stringify(result, null, 2) ?? String(result));
  });
}

function limitOption(flags: SearchFlags): { limit?: number } {
  return flags.limit !== undefined ? { limit: flags.limit } : {};
}

function toolTable<T extends ToolListing>(listings: T[], score?: (t: T) => string): string {
  const headers = [...(score ? ["SCORE"] : []), "TOOL", "CALLABLES", "DESCRIPTION"];
  const rows = listings.map((t) => [
    ...(score ? [score(t)] : []),
    t.name,
    t.callables.map((c) => c.name).join(", ") || "-",
    oneLine(t.description),
  ]);
  return table(headers, rows);
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

function parseArgsJson(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CliUsageError(`--args is not valid JSON (${err instanceof Error ? err.message : String(err)}); expected an object, e.g. '{"text":["hi"]}'`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new CliUsageError(`--args must be a JSON object, e.g. '{"text":["hi"]}'; got ${text}`);
  }
  return parsed as Record<string, unknown>;
}
