/**
 * Does importing a module load a package it must not? Runs a fresh `node` that imports
 * `specifier` with a resolve hook refusing every specifier matching `refuse` (ESM), then looks in
 * the CommonJS module cache for a path matching `refuseInCache` (a package loaded by `require`).
 * Resolves to "clean", or to the refusal ("refused: <specifier> (from <parent>)") / the cached path.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

const exec = promisify(execFile);

export interface ImportGuard {
  /** Specifiers that must not be resolved (matched against the specifier as written). */
  refuse: RegExp;
  /** Files that must not be in the CommonJS cache afterwards (matched against the absolute path). */
  refuseInCache: RegExp;
  /** globalThis properties that must still be unset afterwards (a package that marks its load there, e.g. zod's `__zod_globalRegistry`, however it was loaded). */
  refuseGlobals?: string[];
}

export async function importWithGuard(specifier: string, guard: ImportGuard, cwd: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-import-guard-"));
  try {
    const hooks = path.join(dir, "hooks.mjs");
    await writeFile(
      hooks,
      `const REFUSE = ${guard.refuse.toString()};\n` +
        "export async function resolve(specifier, context, next) {\n" +
        "  if (REFUSE.test(specifier)) throw new Error(`refused: ${specifier} (from ${context.parentURL})`);\n" +
        "  return next(specifier, context);\n" +
        "}\n",
    );
    const register = path.join(dir, "register.mjs");
    await writeFile(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    const script = [
      `try { await import(${JSON.stringify(specifier)}); } catch (e) { console.log(String(e.message)); process.exit(0); }`,
      'const { createRequire } = await import("node:module");',
      `const cached = Object.keys(createRequire(import.meta.url).cache).filter((f) => ${guard.refuseInCache.toString()}.test(f));`,
      `const globals = ${JSON.stringify(guard.refuseGlobals ?? [])}.filter((g) => globalThis[g] !== undefined);`,
      'console.log(cached.length ? `in require cache: ${cached[0]}` : globals.length ? `global set: ${globals[0]}` : "clean");',
    ].join("\n");
    const { stdout } = await exec(process.execPath, ["--import", register, "--input-type=module", "-e", script], { cwd, timeout: 60_000 });
    return stdout.trim();
  } finally {
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  }
}
