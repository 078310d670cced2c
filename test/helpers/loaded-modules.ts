/**
 * Which modules does a node process evaluate? Runs `node <args>` with a load hook that appends every
 * loaded URL to a file, and a marker for zod (it sets `globalThis.__zod_globalRegistry` when it
 * loads, however it was loaded: `import`, `require`, or `require` of its ES module). For a bundled
 * build the source modules are read from the region comments the bundler leaves in each file.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";

const exec = promisify(execFile);

export interface LoadedModules {
  /** Every URL the ES module loader loaded (node: builtins left out). */
  urls: string[];
  /** dist/… module paths evaluated, from file paths and from the bundler's `// dist/…` region comments. */
  distModules: Set<string>;
  /**
   * Modules of packages bundled into dist (scripts/bundle.mjs: the MCP SDK and what it imports) that
   * were evaluated, as `<package>/<path>` from the region comments: the loader never sees them.
   */
  bundled: Set<string>;
  /** zod was evaluated. */
  zod: boolean;
  stdout: string;
}

export async function loadedModules(args: string[], cwd: string): Promise<LoadedModules> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-loaded-"));
  try {
    const log = path.join(dir, "loaded.txt");
    const hooks = path.join(dir, "hooks.mjs");
    await writeFile(
      hooks,
      `import { appendFileSync } from "node:fs";\n` +
        "export async function load(url, context, next) {\n" +
        `  if (!url.startsWith("node:")) appendFileSync(${JSON.stringify(log)}, url + "\\n");\n` +
        "  return next(url, context);\n" +
        "}\n",
    );
    const register = path.join(dir, "register.mjs");
    await writeFile(
      register,
      `import { register } from "node:module";\nimport { appendFileSync } from "node:fs";\n` +
        `register(${JSON.stringify(pathToFileURL(hooks).href)});\n` +
        `process.on("exit", () => { if (globalThis.__zod_globalRegistry !== undefined) appendFileSync(${JSON.stringify(log)}, "zod-evaluated\\n"); });\n`,
    );
    await writeFile(log, "");
    const { stdout } = await exec(process.execPath, ["--import", register, ...args], { cwd, timeout: 60_000 });
    const lines = (await readFile(log, "utf8")).split("\n").filter(Boolean);
    const urls = lines.filter((l) => l !== "zod-evaluated");
    const distModules = new Set<string>();
    const bundled = new Set<string>();
    for (const url of urls) {
      const m = /\/(dist\/.+\.js)$/.exec(url);
      if (!m?.[1] || url.includes("/node_modules/")) continue;
      distModules.add(m[1]);
      const text = await readFile(fileURLToPath(url), "utf8");
      for (const region of text.matchAll(/^\/\/ (dist\/\S+\.js)$/gm)) if (region[1]) distModules.add(region[1]);
      for (const region of text.matchAll(/^\/\/ \S*?node_modules\/(\S+\.[cm]?js)$/gm)) if (region[1]) bundled.add(region[1]);
    }
    return { urls, distModules, bundled, zod: lines.includes("zod-evaluated"), stdout };
  } finally {
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  }
}
