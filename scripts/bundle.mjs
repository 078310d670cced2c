/**
 * Bundle the built entries (issue 24, cold paths). `tsc` leaves ~250 small modules in dist/; a fresh
 * process importing the main entry spent most of its time resolving, reading and compiling them one
 * by one. This rewrites each entry the package exposes or spawns (the `exports` subpaths, the bin,
 * the subprocess child, the container entry) as one file plus chunks shared between them
 * (dist/_chunks/), all from ONE build so the entries share every module instance (an error class
 * thrown by one entry is `instanceof` in another). Packages in node_modules stay external.
 *
 * Everything else tsc wrote stays where it was: the .d.ts files, and the files found by path at run
 * time. Code that computes a path from `import.meta.url` keeps computing it from the module's
 * ORIGINAL place in dist/: each `import.meta.url` is rewritten to the URL of the module it was
 * written in, relative to the chunk that ends up holding it.
 *
 *   node scripts/bundle.mjs [--dist dist]   (run by `npm run build`, after tsc)
 */
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { rolldown } from "rolldown";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { dist: { type: "string", default: path.join(ROOT, "dist") } } });
const DIST = path.resolve(values.dist);

/** Entry names (paths in dist/ without .js): the package's exports and bin, and the process entries. */
function entries() {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
  const files = new Set();
  for (const target of Object.values(pkg.exports)) if (typeof target.import === "string") files.add(target.import);
  for (const bin of Object.values(pkg.bin)) files.add(bin);
  // Spawned by path: the subprocess executor's child and the container's guest runtime.
  files.add("./dist/execution/subprocess/child.js");
  files.add("./dist/execution/container/entry.js");
  // A loader-hook registration: tiny, and it names its hook file by path; nothing to gain.
  files.delete("./dist/toolable/register.js");
  return Object.fromEntries([...files].map((f) => [f.replace(/^\.\/dist\//, "").replace(/\.js$/, ""), path.join(DIST, f.replace(/^\.\/dist\//, ""))]));
}

/**
 * Our modules' `import { z } from "zod"` → src/zod-on-first-use.ts: the same `z`, loaded on first use.
 * Module-level schemas are `lazy()` (src/lazy.ts), so importing an entry evaluates no zod at all.
 */
const ZOD_ON_FIRST_USE = path.join(DIST, "zod-on-first-use.js");
const ourModuleImportingZod = (importer) => importer !== undefined && importer !== ZOD_ON_FIRST_USE && importer.startsWith(DIST + path.sep);
const zodOnFirstUse = {
  name: "zod-on-first-use",
  resolveId(source, importer) {
    if (source === "zod" && ourModuleImportingZod(importer)) return ZOD_ON_FIRST_USE;
    return null;
  },
};

const PLACEHOLDER = "__TCM_DIST_ROOT__/";

/** `import.meta.url` → the URL the module had in dist/, relative to whichever chunk holds it. */
const keepModuleUrls = {
  name: "keep-module-urls",
  transform(code, id) {
    if (!code.includes("import.meta.url")) return null;
    const rel = path.relative(DIST, id).split(path.sep).join("/");
    return { code: code.replaceAll("import.meta.url", `new URL(${JSON.stringify(PLACEHOLDER + rel)}, import.meta.url).href`), map: null };
  },
  renderChunk(code, chunk) {
    if (!code.includes(PLACEHOLDER)) return null;
    const up = path.posix.relative(path.posix.dirname(chunk.fileName), ".") || ".";
    return { code: code.replaceAll(PLACEHOLDER, `${up}/`), map: null };
  },
};

const input = entries();
for (const file of Object.values(input))
  if (readFileSync(file, "utf8").includes("/_chunks/")) throw new Error(`${file} is already bundled: run tsc first (npm run build does both)`);
rmSync(path.join(DIST, "_chunks"), { recursive: true, force: true });

const bundle = await rolldown({
  input,
  platform: "node",
  // node:*, and every package: loaded from node_modules as before (lazily where the code says so).
  external: (id, importer) => !id.startsWith(".") && !path.isAbsolute(id) && !(id === "zod" && ourModuleImportingZod(importer)),
  plugins: [zodOnFirstUse, keepModuleUrls],
  logLevel: "warn",
});
await bundle.write({ dir: DIST, format: "esm", entryFileNames: "[name].js", chunkFileNames: "_chunks/[name]-[hash].js", sourcemap: false });
await bundle.close();
