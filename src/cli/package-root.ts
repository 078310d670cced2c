/**
 * Where the installed package lives, found from this module's own URL so `init` finds the bundled
 * examples from any working directory (dist/cli/… when installed, src/cli/… under tests).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "ts-code-mode";

let cached: { root: string; version: string } | undefined;

function locate(): { root: string; version: string } {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = path.join(dir, "package.json");
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown; version?: unknown };
      if (parsed.name === PACKAGE_NAME) {
        cached = { root: dir, version: typeof parsed.version === "string" ? parsed.version : "0.0.0" };
        return cached;
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`Cannot find the ${PACKAGE_NAME} package folder above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/** Absolute folder holding the package's package.json. */
export function packageRoot(): string {
  return locate().root;
}

export function packageVersion(): string {
  return locate().version;
}

/** The bundled `examples/` folder (tools/*.yaml, workflows/*.ts). */
export function examplesDir(): string {
  return path.join(packageRoot(), "examples");
}
