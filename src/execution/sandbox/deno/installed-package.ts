/**
 * The optional packages the deno engine runs from — `deno` (its binary) and `pyodide` — are found
 * next to ts-code-mode, never installed by it. One lookup for their folder and version.
 */
import { createRequire } from "node:module";
import path from "node:path";

/** The installed package's folder and version, or undefined when it cannot be resolved. */
export function installedPackage(name: string): { dir: string; version: string } | undefined {
  const require = createRequire(import.meta.url);
  try {
    const manifest = require.resolve(`${name}/package.json`);
    const { version } = require(manifest) as { version?: unknown };
    return { dir: path.dirname(manifest), version: typeof version === "string" ? version : "unknown" };
  } catch {
    return undefined;
  }
}
