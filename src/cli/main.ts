#!/usr/bin/env node
/**
 * The `ts-code-mode` command. Each command group is registered from ./commands; option handling,
 * sessions and exit codes live in ./shared.ts. Subcommands are added with `.command()` so they
 * inherit exitOverride: every failure comes back here and leaves with one exit code.
 */
import type { Command as CommandType } from "commander";
import { prepareProcess } from "./early-child.js";

// Before anything else is loaded: a `run`'s child starts now, overlapping the imports below.
prepareProcess(process.argv.slice(2));
const { Command } = await import("commander");
const { packageVersion } = await import("./package-root.js");
const { examples, EXIT_OK, exitAfterFlush, ignoreClosedStdout, reportError } = await import("./shared.js");

const program = new Command("ts-code-mode")
  .description("Let AI agents run TypeScript against tools, workflows, artifacts and deps")
  .version(packageVersion())
  .exitOverride()
  .showHelpAfterError("(add --help for usage)")
  .addHelpText(
    "after",
    examples("init --base ./demo", "run --base ./demo 'await tools.list()'", "tools list --base ./demo", "workflows show triple --base ./demo") +
      "\nrun, mcp, init, tools, workflows, artifacts and deps take --base DIR (default ./.code-mode): storage in DIR, tool YAML in DIR/tools;\n" +
      "store works on Redis (--target, --prefix) and takes --source/--dest folders instead.\n" +
      "Exit codes: 0 success, 1 failure (the code threw, unknown name, tool error), 2 usage error.\n",
  );

/**
 * Each top-level command and the module that registers it, in help order. Only the command being
 * run is loaded (issue 24: `run` must not pay for `serve`, `agent` or `mcp`); help, an unknown
 * command or none at all load every one so commander can list them and suggest names.
 */
type Register = (program: CommandType) => void;
const COMMANDS: [string[], () => Promise<Register>][] = [
  [["run"], async () => (await import("./commands/run.js")).registerRunCommand],
  [["mcp"], async () => (await import("./commands/mcp.js")).registerMcpCommand],
  [["init"], async () => (await import("./commands/init.js")).registerInitCommand],
  [["tools"], async () => (await import("./commands/tools.js")).registerToolsCommands],
  [["workflows"], async () => (await import("./commands/workflows.js")).registerWorkflowsCommands],
  [["artifacts"], async () => (await import("./commands/artifacts.js")).registerArtifactsCommands],
  [["store"], async () => (await import("./commands/store.js")).registerStoreCommands],
  [["deps"], async () => (await import("./commands/deps.js")).registerDepsCommands],
  [["agent"], async () => (await import("./commands/agent.js")).registerAgentCommands],
  [["toolable"], async () => (await import("./commands/toolable.js")).registerToolableCommands],
  [["image", "containers"], async () => (await import("./commands/container.js")).registerContainerCommands],
  [["serve"], async () => (await import("./commands/serve.js")).registerServeCommand],
  [["skills"], async () => (await import("./commands/skills.js")).registerSkillsCommands],
  [["runs"], async () => (await import("./commands/runs.js")).registerRunsCommands],
  [["console"], async () => (await import("./commands/console.js")).registerConsoleCommand],
];
const args = process.argv.slice(2);
const named = args.find((a) => !a.startsWith("-"));
const only = COMMANDS.filter(([names]) => named !== undefined && names.includes(named));
const versionOnly = named === undefined && (args.includes("-V") || args.includes("--version"));
for (const [, load] of only.length || versionOnly ? only : COMMANDS) (await load())(program);

ignoreClosedStdout();
let code: number;
try {
  await program.parseAsync(process.argv);
  code = typeof process.exitCode === "number" ? process.exitCode : EXIT_OK;
} catch (err) {
  code = reportError(err);
}
await exitAfterFlush(code);
