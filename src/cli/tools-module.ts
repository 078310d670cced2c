/**
 * `--tools-module FILE` (run, mcp, serve): a module of the user's that exports tools defined in
 * code, so a server (or a fleet of them) serves code-defined tools beside its YAML tools.
 *
 *   export default [weather, add]              // or a map: export default { weather, github: { createIssue } }
 *   export const weather = defineTool({...});  // without a default export: each named export is a tool
 *
 * A `.ts` / `.mts` file loads without a build step: the same type-stripping module hook as
 * `ts-code-mode/toolable/register` (sucrase, already a dependency) is registered first. The module
 * is loaded once per process; each session gets fresh adapters of its tools.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { importUserModule } from "../tools/code/load-module.js";
import type { CodeToolSet } from "../tools/code/tool-set.js";
import { CliUsageError, userPath } from "./shared.js";

/** Loads FILE and reads its exports as a `tools` option. Throws CliUsageError naming the file and the problem. */
export async function loadToolsModule(file: string): Promise<CodeToolSet> {
  const abs = userPath(file, "--tools-module");
  if (!existsSync(abs)) throw new CliUsageError(`--tools-module ${file}: no such file (${abs})`);
  let mod: Record<string, unknown>;
  try {
    mod = await importUserModule(abs);
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    throw new CliUsageError(`--tools-module ${file}: the module failed to load: ${e.name}: ${e.message}`);
  }
  const { CodeToolSet } = await import("../tools/code/tool-set.js");
  const where = `--tools-module ${path.basename(abs)}`;
  const exported = mod["default"] !== undefined ? mod["default"] : Object.fromEntries(Object.entries(mod).filter(([k]) => k !== "default"));
  try {
    const set = CodeToolSet.from(exported as never, where);
    if (set.names.length === 0) throw new TypeError(`${where}: the module exports no tools (export default [tool, ...], or export each tool by name)`);
    return set;
  } catch (err) {
    throw new CliUsageError(err instanceof Error ? err.message : String(err));
  }
}

/** The `tools` option for createExecutor from `--tools-module`, or nothing without the flag. */
export async function toolsModuleOption(flags: { toolsModule?: string | undefined }): Promise<{ tools?: CodeToolSet }> {
  return flags.toolsModule === undefined ? {} : { tools: await loadToolsModule(flags.toolsModule) };
}
