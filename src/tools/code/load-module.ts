/**
 * Importing a user's module of code-defined tools: `--tools-module` (run, mcp, serve) and agents'
 * toolset modules (project.json `toolsets`). A `.ts` / `.mts` / `.cts` file loads without a build
 * step: the type-stripping module hook of `ts-code-mode/toolable/register` (sucrase) is registered
 * first, once per process.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { register } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

let hookRegistered = false;

export async function importUserModule(abs: string): Promise<Record<string, unknown>> {
  if (/\.[mc]?ts$/.test(abs)) {
    const hook = new URL("../../toolable/ts-hook.js", import.meta.url);
    if (!existsSync(fileURLToPath(hook))) {
      // Running from the TypeScript sources (tests), where the hook is not compiled: strip the
      // types here and import the module as a data URL (its relative imports do not resolve then).
      const { transform } = await import("sucrase");
      const js = transform(await readFile(abs, "utf8"), { transforms: ["typescript"], filePath: abs }).code;
      return (await import(`data:text/javascript;base64,${Buffer.from(js).toString("base64")}`)) as Record<string, unknown>;
    }
    if (!hookRegistered) {
      register(hook);
      hookRegistered = true;
    }
  }
  return (await import(pathToFileURL(abs).href)) as Record<string, unknown>;
}
