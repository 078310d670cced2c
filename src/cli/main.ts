#!/usr/bin/env node
/**
 * The `ts-code-mode` command. Each command group is registered from ./commands; option handling,
 * sessions and exit codes live in ./shared.ts. Subcommands are added with `.command()` so they
 * inherit exitOverride: every failure comes back here and leaves with one exit code.
 */
import { Command } from "commander";
import { registerAgentCommands } from "./commands/agent.js";
import { registerDepsCommands } from "./commands/deps.js";
import { registerInitCommand } from "./commands/init.js";
import { registerMcpCommand } from "./commands/mcp.js";
import { registerRunCommand } from "./commands/run.js";
import { registerServeCommand } from "./commands/serve.js";
import { registerSkillsCommands } from "./commands/skills.js";
import { registerStoreCommands } from "./commands/store.js";
import { registerToolsCommands } from "./commands/tools.js";
import { registerToolableCommands } from "./commands/toolable.js";
import { registerWorkflowsCommands } from "./commands/workflows.js";
import { registerContainerCommands } from "./commands/container.js";
import { packageVersion } from "./package-root.js";
import { examples, EXIT_OK, exitAfterFlush, ignoreClosedStdout, reportError } from "./shared.js";

const program = new Command("ts-code-mode")
  .description("Let AI agents run TypeScript against tools, workflows, artifacts and deps")
  .version(packageVersion())
  .exitOverride()
  .showHelpAfterError("(add --help for usage)")
  .addHelpText(
    "after",
    examples("init --base ./demo", "run --base ./demo 'await tools.list()'", "tools list --base ./demo", "workflows show triple --base ./demo") +
      "\nrun, mcp, init, tools, workflows and deps take --base DIR (default ./.code-mode): storage in DIR, tool YAML in DIR/tools;\n" +
      "store works on Redis (--target, --prefix) and takes --source/--dest folders instead.\n" +
      "Exit codes: 0 success, 1 failure (the code threw, unknown name, tool error), 2 usage error.\n",
  );

registerRunCommand(program);
registerMcpCommand(program);
registerInitCommand(program);
registerToolsCommands(program);
registerWorkflowsCommands(program);
registerStoreCommands(program);
registerDepsCommands(program);
registerAgentCommands(program);
registerToolableCommands(program);
registerContainerCommands(program);
registerServeCommand(program);
registerSkillsCommands(program);

ignoreClosedStdout();
let code: number;
try {
  await program.parseAsync(process.argv);
  code = typeof process.exitCode === "number" ? process.exitCode : EXIT_OK;
} catch (err) {
  code = reportError(err);
}
await exitAfterFlush(code);
