/**
 * Bundle the built entries (issue 24, cold paths). `tsc` leaves ~250 small modules in dist/; a fresh
 * process importing the main entry spent most of its time resolving, reading and compiling them one
 * by one. This rewrites each entry the package exposes or spawns as one file plus shared chunks, in
 * three builds: the `exports` subpaths (chunks in dist/_chunks/, one build so they share every module
 * instance: an error class thrown by one entry is `instanceof` in another), the entries that are
 * processes of their own — the bin, the container entry — (dist/_proc/), whose chunks follow what a
 * command loads: a `run` loads no executor, tool adapter or MCP code it does not use; and the
 * subprocess child, one file with no chunks. Packages in node_modules stay external, except the few
 * in BUNDLED_PACKAGES (the MCP SDK), which are bundled in with what they import; their licences go
 * to dist/THIRD_PARTY_NOTICES.md.
 *
 * Everything else tsc wrote stays where it was: the .d.ts files, and the files found by path at run
 * time. Code that computes a path from `import.meta.url` keeps computing it from the module's
 * ORIGINAL place in dist/: each `import.meta.url` is rewritten to the URL of the module it was
 * written in, relative to the chunk that ends up holding it.
 *
 *   node scripts/bundle.mjs [--dist dist]   (run by `npm run build`, after tsc)
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { rolldown } from "rolldown";
import { LAZY_CHUNK_DIR, mainEntrySource, planMainEntry } from "./main-entry.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { dist: { type: "string", default: path.join(ROOT, "dist") } } });
const DIST = path.resolve(values.dist);

/**
 * The subprocess executor's child: one file with nothing of ours to import, its own build. Every
 * session's first result waits for its start (issue 42, cold start); resolving, reading and linking
 * a dozen chunks cost it ~13 ms of CPU of a ~40 ms start beyond `node` itself. It shares no module
 * instance with the host (another process), so duplicating what the host's chunks hold costs nothing.
 */
const CHILD = "./dist/execution/subprocess/child.js";

/**
 * The main entry's first step (issue 42, cold start): dist/index.js is written here as this module,
 * then the library (MAIN_LIBRARY), loaded by a dynamic import after it ran. A static import graph is
 * read and compiled whole before any of it runs, and that is most of what importing the library
 * costs; the subprocess executor's early child started after it would overlap nothing.
 */
const EARLY_START = "./dist/execution/subprocess/early-start.js";
/** Where the main entry's bundle goes (a library entry like the others, under another name). */
const MAIN_LIBRARY = "_chunks/index";

/**
 * Entry names (paths in dist/ without .js) → files, in three builds: the package's exports (one
 * build, so they share every module instance: an error class thrown by one entry is `instanceof`
 * in another), and the entries that run as processes of their own (the bin, the container entry),
 * whose chunks follow what a command loads, not what the library exports; and the child (CHILD).
 */
function entries() {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
  const library = new Set();
  for (const target of Object.values(pkg.exports)) if (typeof target.import === "string") library.add(target.import);
  // A loader-hook registration: tiny, and it names its hook file by path; nothing to gain.
  library.delete("./dist/toolable/register.js");
  // Spawned by path: the subprocess executor's child and the container's guest runtime.
  const processes = new Set([...Object.values(pkg.bin), "./dist/execution/container/entry.js"]);
  for (const f of [...processes, CHILD]) library.delete(f);
  library.add(EARLY_START);
  const named = (files) => Object.fromEntries([...files].map((f) => [f.replace(/^\.\/dist\//, "").replace(/\.js$/, ""), path.join(DIST, f.replace(/^\.\/dist\//, ""))]));
  const libraryEntries = named(library);
  // The main entry's bundle moves aside: dist/index.js becomes the small module writeMainEntry writes.
  // What it bundles is the main entry's eager part; each lazy area is an entry of its own (main-entry.mjs).
  delete libraryEntries.index;
  libraryEntries[MAIN_LIBRARY] = mainPlan.coreFile;
  for (const [area, file] of Object.entries(mainPlan.areaFiles)) libraryEntries[`${LAZY_CHUNK_DIR}/${area}`] = file;
  return { library: libraryEntries, processes: named(processes), child: named([CHILD]) };
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

/**
 * Packages bundled into the chunks instead of installed with ts-code-mode (issue 41, a light core).
 * The MCP SDK: `mcp`, `type: mcp` tools and MCP clients use its client, server and stdio/HTTP
 * transports, ~0.6 MB of code, where installing it brought 6 MB and ~95 packages more (express,
 * ajv, jose, ...) to every install. It is a devDependency, and the published .d.ts name none of its
 * types (test/package/types.test.ts). What a bundled package's modules import is bundled with it,
 * except the packages ts-code-mode installs anyway (dependencies and peers: zod, hono,
 * @hono/node-server), which stay one shared, installed copy.
 */
const BUNDLED_PACKAGES = new Set(["@modelcontextprotocol/sdk"]);
const PKG = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
const INSTALLED_PACKAGES = new Set([...Object.keys(PKG.dependencies ?? {}), ...Object.keys(PKG.peerDependencies ?? {})]);
for (const name of BUNDLED_PACKAGES) if (INSTALLED_PACKAGES.has(name)) throw new Error(`${name} is bundled: it must be a devDependency, not a dependency or peer`);
const NODE_MODULES = `${path.sep}node_modules${path.sep}`;
const packageOf = (id) => id.split("/").slice(0, id.startsWith("@") ? 2 : 1).join("/");

/** True when `id` (imported by `importer`) stays an import of the installed package. */
function isExternal(id, importer) {
  if (id.startsWith(".") || path.isAbsolute(id) || id.startsWith("\0")) return false;
  if (id === "zod" && ourModuleImportingZod(importer)) return false;
  if (id.startsWith("node:") || builtinModules.includes(id)) return true;
  const name = packageOf(id);
  if (BUNDLED_PACKAGES.has(name)) return false;
  // Imported by a bundled package's module: comes with it, unless ts-code-mode installs it anyway.
  if (importer?.includes(NODE_MODULES) && !INSTALLED_PACKAGES.has(name)) return false;
  return true;
}

const PLACEHOLDER = "__TCM_DIST_ROOT__/";

/** `import.meta.url` → the URL the module had in dist/, relative to whichever chunk holds it. */
const keepModuleUrls = {
  name: "keep-module-urls",
  transform(code, id) {
    // Our modules only: a bundled package's import.meta.url is left as it is.
    if (!id.startsWith(DIST + path.sep) || !code.includes("import.meta.url")) return null;
    const rel = path.relative(DIST, id).split(path.sep).join("/");
    return { code: code.replaceAll("import.meta.url", `new URL(${JSON.stringify(PLACEHOLDER + rel)}, import.meta.url).href`), map: null };
  },
  renderChunk(code, chunk) {
    if (!code.includes(PLACEHOLDER)) return null;
    const up = path.posix.relative(path.posix.dirname(chunk.fileName), ".") || ".";
    return { code: code.replaceAll(PLACEHOLDER, `${up}/`), map: null };
  },
};

/** Each entry must be tsc's module: bundling a bundle again would fail later and less clearly. */
function assertNotBundled(file) {
  if (/\/_(chunks|proc)\//.test(readFileSync(file, "utf8"))) throw new Error(`${file} is already bundled: run tsc first (npm run build does both)`);
}
// The main entry first: the plan reads tsc's dist/index.js, which the bundle replaces.
assertNotBundled(path.join(DIST, "index.js"));
const mainPlan = await planMainExports();
const { library, processes, child } = entries();
for (const file of [...Object.values(library), ...Object.values(processes), ...Object.values(child)]) assertNotBundled(file);

/**
 * The main entry's eager part and lazy areas (scripts/main-entry.mjs), in two steps: a first plan
 * puts every name of a lazy area in its area; a probe build of the eager part then tells which of
 * those modules it loads anyway, and those names go back to the eager part.
 */
async function planMainExports() {
  const first = await planMainEntry(DIST);
  const probe = await rolldown({ input: { core: first.coreFile }, platform: "node", external: isExternal, plugins: [zodOnFirstUse], logLevel: "silent" });
  const { output } = await probe.generate({ format: "esm" });
  await probe.close();
  const graph = chunkGraph(output);
  return planMainEntry(DIST, graph.staticModules(graph.entry("core")));
}

/**
 * The process entries' build: the CLI imports each executor and tool adapter when a command first
 * needs it. Its tool adapters form one chunk: without the group, each adapter and each helper they
 * share would be a chunk of its own. cli/run.js (the one command runner), toolable/host.js
 * (event lines) and mcp/json-schema.js (code tools' schemas) are used on the run path too, so they
 * stay out of the group.
 */
const TOOL_ADAPTERS_GROUP = {
  name: "tool-adapters",
  test: (id) => /[\\/]tools[\\/]adapters[\\/](cli|http|mcp|toolable)[\\/]/.test(id) && !/[\\/](cli[\\/]run|toolable[\\/]host|mcp[\\/]json-schema)\.js$/.test(id),
  priority: 1,
};

/**
 * The modules the bin loads by a dynamic import on its way to a `run` (issue 42, cold start), in two
 * steps: what every command loads (the version, the shared option handling: CLI_SHARED), then the
 * run command, its helpers and the default executor (RUN_PATH). With what they import statically
 * each step is one chunk (processGroups), where a `run` used to read ~60 chunks: the ESM loader
 * resolves, opens, reads and links each one on the way to the first result. `--version` and the
 * other commands load the first chunk only, and the second where they share modules with `run`.
 */
const CLI_SHARED = ["cli/package-root.js", "cli/shared.js"].map((f) => path.join(DIST, f));
const RUN_PATH = ["cli/commands/run.js", "cli/tools-module.js", "execution/subprocess/executor.js", "execution/subprocess/shared-children.js"].map((f) => path.join(DIST, f));

/**
 * The process build's groups, from a first build's chunk graph: what the bin loads before its first
 * dynamic import (cli/early-child.ts spawns a `run`'s child from there, so it must stay small), the
 * container entry's graph (the image holds it), the tool adapters, and the two steps of a run
 * (CLI_SHARED, RUN_PATH).
 */
function processGroups(output) {
  const graph = chunkGraph(output);
  const bin = graph.staticModules(graph.entry("cli/main"));
  const container = graph.staticModules(graph.entry("execution/container/entry"));
  const [shared, run] = [CLI_SHARED, RUN_PATH].map((files) => {
    const chunks = [...graph.chunks.values()].filter((c) => c.isDynamicEntry && files.includes(c.facadeModuleId));
    if (chunks.length !== files.length) throw new Error(`not imported dynamically: ${files.filter((f) => !chunks.some((c) => c.facadeModuleId === f)).join(", ")}`);
    return new Set(chunks.flatMap((c) => [...graph.staticModules(c)]));
  });
  for (const set of [bin, shared, run, container]) for (const id of graph.entryModules) set.delete(id);
  const elsewhere = (id) => bin.has(id) || container.has(id) || TOOL_ADAPTERS_GROUP.test(id);
  return {
    includeDependenciesRecursively: false,
    groups: [
      // What both load (a few leaves) apart: the image holds no bin code, the bin loads no container code before its spawn.
      { name: "bin-container-graph", test: (id) => bin.has(id) && container.has(id), priority: 4 },
      { name: "bin-graph", test: (id) => bin.has(id), priority: 3 },
      // The container entry's graph, one chunk too: the bin's run path shares a dozen small modules with it.
      { name: "container-graph", test: (id) => container.has(id), priority: 2 },
      TOOL_ADAPTERS_GROUP,
      { name: "cli-shared", test: (id) => shared.has(id) && !elsewhere(id), priority: 0 },
      { name: "run", test: (id) => run.has(id) && !shared.has(id) && !elsewhere(id), priority: 0 },
    ],
  };
}

/** A generated build's chunks by file name, its entry chunks by name, and the modules a chunk loads statically. */
function chunkGraph(output) {
  const chunks = new Map(output.filter((c) => c.type === "chunk").map((c) => [c.fileName, c]));
  const entry = (name) => {
    const chunk = [...chunks.values()].find((c) => c.isEntry && c.name === name);
    if (!chunk) throw new Error(`no entry chunk ${name}`);
    return chunk;
  };
  /** The modules of `chunk` and of every chunk it imports statically, transitively. */
  const staticModules = (chunk) => {
    const seen = new Set();
    const stack = [chunk.fileName];
    while (stack.length) {
      const file = stack.pop();
      if (seen.has(file)) continue;
      seen.add(file);
      stack.push(...chunks.get(file).imports.filter((f) => chunks.has(f)));
    }
    return new Set([...seen].flatMap((f) => chunks.get(f).moduleIds));
  };
  /**
   * Modules no group may take: the entries' own. An entry's top-level code runs when its chunk is
   * evaluated, so in a shared chunk it would run for whoever imports that chunk (the early child
   * would start at `import "ts-code-mode/mcp"`, the container entry would run inside the bin), and the
   * bin's top-level await of a module in its own chunk would wait for itself.
   */
  const entryModules = new Set([...chunks.values()].filter((c) => c.isEntry && c.facadeModuleId).map((c) => c.facadeModuleId));
  return { chunks, entry, staticModules, entryModules };
}

/**
 * Library entries that keep a chunk graph of their own (libraryGroups): the early child's start,
 * which must run before the rest of the library is read, and the toolable authoring API, imported
 * by every toolable tool process.
 */
const OWN_GRAPH_ENTRIES = [EARLY_START, "./dist/toolable/index.js"].map((f) => f.replace(/^\.\/dist\//, "").replace(/\.js$/, ""));

/**
 * The library build's chunk groups, from a first build's chunk graph (issue 42, cold start): what
 * the main entry loads statically goes into two chunks, the part the other entries load too
 * (library-core) and the rest (library), except the modules of OWN_GRAPH_ENTRIES, which keep a
 * chunk each. Split the way the entries share modules, the main entry's import read ~60 chunks, and
 * each costs the ESM loader a resolve, an open, a read and a link of its own: the groups took ~75 ms
 * of CPU off `import("ts-code-mode")` (161 → 85 ms over the process's own start, node 20, load ~7).
 * What the main entry imports dynamically (QuickJS, containers, tool adapters...) stays in chunks of
 * its own, loaded on use.
 */
function libraryGroups(output) {
  const graph = chunkGraph(output);
  const own = OWN_GRAPH_ENTRIES.map((name) => ({ name, ids: graph.staticModules(graph.entry(name)) }));
  const main = graph.staticModules(graph.entry(MAIN_LIBRARY));
  // What the other entries (mcp, ai, ...) load statically: the part of the main entry's graph they
  // share is a chunk of its own, so `import "ts-code-mode/mcp"` does not read the agents, the tool
  // adapters or Redis storage with it (+0.8 MB, ~40 ms of CPU when the library was one chunk).
  // (The main entry's lazy areas are not other entries: what they share with the eager part is its.)
  const others = new Set(
    [...graph.chunks.values()]
      .filter((c) => c.isEntry && c.name !== MAIN_LIBRARY && !OWN_GRAPH_ENTRIES.includes(c.name) && !c.name.startsWith(`${LAZY_CHUNK_DIR}/`))
      .flatMap((c) => [...graph.staticModules(c)]),
  );
  for (const set of [main, others, ...own.map(({ ids }) => ids)]) for (const id of graph.entryModules) set.delete(id);
  const inOwn = (id) => own.some(({ ids }) => ids.has(id));
  return {
    groups: [
      // A higher priority wins a module two groups match: a library module's dependency that is one
      // of these stays in its own group instead of being pulled into the library's.
      ...own.map(({ name, ids }, i) => ({ name: `${path.posix.basename(name)}-graph`, test: (id) => ids.has(id), priority: own.length + 2 - i })),
      { name: "library-core", test: (id) => main.has(id) && others.has(id) && !inOwn(id), priority: 1 },
      { name: "library", test: (id) => main.has(id) && !inOwn(id), priority: 0 },
    ],
  };
}

// Both builds are made before anything is written: a failure leaves dist/ as tsc wrote it.
const builds = [];
/** The names the main entry exports (its bundle's), which dist/index.js re-exports. */
let mainExports = null;
/** Files of packages in node_modules that ended up in a chunk (BUNDLED_PACKAGES and what they import). */
const bundledFiles = new Set();
for (const [input, chunkDir, codeSplitting] of [
  [library, "_chunks", libraryGroups],
  [processes, "_proc", processGroups],
  [child, "_proc", false],
]) {
  const bundle = await rolldown({
    input,
    platform: "node",
    // The process entries' exports are read by nobody; the chunk groups may add to them.
    ...(codeSplitting === processGroups ? { preserveEntrySignatures: "allow-extension" } : {}),
    // node:*, and every package: loaded from node_modules as before (lazily where the code says so).
    external: isExternal,
    plugins: [zodOnFirstUse, keepModuleUrls],
    logLevel: "warn",
  });
  // ASCII only, and no comments but licences and annotations: V8 keeps a source holding one non-ASCII
  // character as a two-byte string, and every comment is read, decoded and scanned at each import
  // (issue 42, cold start; the comments stay in src/ and the .d.ts files).
  const output = {
    dir: DIST,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: `${chunkDir}/[name]-[hash].js`,
    sourcemap: false,
    charset: "ascii",
    comments: { legal: true, annotation: true, jsdoc: false },
    ...(typeof codeSplitting === "boolean" ? { codeSplitting } : {}),
  };
  let generated = await bundle.generate(output); // fails here, before any write, if it is going to fail
  // Groups computed from the chunk graph: a second generate with them.
  if (typeof codeSplitting === "function") generated = await bundle.generate(Object.assign(output, { codeSplitting: codeSplitting(generated.output) }));
  for (const chunk of generated.output) if (chunk.type === "chunk") for (const id of chunk.moduleIds) if (id.includes(NODE_MODULES)) bundledFiles.add(id);
  for (const chunk of generated.output) if (chunk.type === "chunk" && chunk.isEntry && chunk.name === MAIN_LIBRARY) mainExports = chunk.exports;
  builds.push({ bundle, output });
}
for (const dir of ["_chunks", "_proc"]) rmSync(path.join(DIST, dir), { recursive: true, force: true });
for (const { bundle, output } of builds) {
  await bundle.write(output);
  await bundle.close();
}
writeMainEntry();
mainPlan.remove();
writeNpmignore();
writeThirdPartyNotices();

/**
 * dist/index.js: the early child's start (EARLY_START, its own small chunk graph), then the eager
 * part of the library by a dynamic import, its names exported as they are (the same classes and
 * functions), and stand-ins for the lazy areas' (scripts/main-entry.mjs). The types are index.d.ts's, from tsc.
 */
function writeMainEntry() {
  const missing = mainPlan.eager.filter((name) => !mainExports?.includes(name));
  if (missing.length) throw new Error(`the main entry's bundle (${MAIN_LIBRARY}.js) does not export ${missing.join(", ")}`);
  const source = mainEntrySource(mainPlan, { earlyStart: EARLY_START.replace(/^\.\/dist\//, "./"), coreChunk: `./${MAIN_LIBRARY}.js` });
  writeFileSync(path.join(DIST, "index.js"), source);
}

/**
 * dist/THIRD_PARTY_NOTICES.md: the name, version, licence and licence text of every package with
 * code in the chunks (their licences, MIT and the like, ask that the notice travel with the code).
 */
function writeThirdPartyNotices() {
  const packages = new Map();
  for (const file of bundledFiles) {
    // The package's own package.json: the nearest one with a name (dist/esm/package.json files only set "type").
    let dir = path.dirname(file);
    while (dir.includes(NODE_MODULES)) {
      const manifest = path.join(dir, "package.json");
      if (existsSync(manifest)) {
        const json = JSON.parse(readFileSync(manifest, "utf8"));
        if (json.name && json.version) {
          packages.set(dir, json);
          break;
        }
      }
      dir = path.dirname(dir);
    }
  }
  const sections = [...packages.entries()]
    .sort(([, a], [, b]) => a.name.localeCompare(b.name))
    .map(([dir, json]) => {
      const licenceFile = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
      const text = licenceFile ? readFileSync(path.join(dir, licenceFile), "utf8").trim() : `${json.license ?? "see the package"} (the package ships no licence file)`;
      return `## ${json.name} ${json.version} (${json.license ?? "unknown"})\n\n${text.replace(/^/gm, "    ")}\n`;
    });
  if (sections.length === 0) throw new Error("no bundled package found: BUNDLED_PACKAGES is not reached by any entry");
  writeFileSync(
    path.join(DIST, "THIRD_PARTY_NOTICES.md"),
    `# Third-party notices\n\nts-code-mode's bundles (dist/_chunks, dist/_proc and the entries) include code from these packages, under these licences (written by scripts/bundle.mjs).\n\n${sections.join("\n")}`,
  );
}

/**
 * tsc's modules that nothing runs once the bundles exist: the package leaves them out through
 * dist/.npmignore (npm honours a .npmignore below the root even with "files"). The repository's
 * dist/ keeps them: benches and some tests load modules one by one. What runs is found from the
 * bundles and the files spawned or loaded by path (the toolable loader hook): every `./` or `../`
 * path to a .js file written in one of them, transitively — a static or dynamic import, or a
 * `new URL(…, import.meta.url)` — so a file named by a path anywhere in running code is kept.
 */
function writeNpmignore() {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
  const roots = [...Object.values(pkg.exports).map((t) => t.import), ...Object.values(pkg.bin), "./dist/execution/subprocess/child.js", "./dist/execution/container/entry.js"]
    .filter((f) => typeof f === "string")
    .map((f) => path.join(ROOT, f));
  const keep = new Set();
  const stack = [...roots];
  while (stack.length) {
    const file = stack.pop();
    if (keep.has(file) || !existsSync(file)) continue;
    keep.add(file);
    for (const m of readFileSync(file, "utf8").matchAll(/["'`](\.{1,2}\/[^"'`\n]+?\.(?:js|cjs|mjs))["'`]/g)) stack.push(path.resolve(path.dirname(file), m[1]));
  }
  const unused = [];
  (function walk(dir) {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (/\.(js|cjs|mjs)$/.test(entry.name) && !keep.has(file)) unused.push(path.relative(DIST, file).split(path.sep).join("/"));
    }
  })(DIST);
  writeFileSync(path.join(DIST, ".npmignore"), `# Written by scripts/bundle.mjs: tsc's modules the bundles replaced (see writeNpmignore there).\n${unused.sort().map((f) => `/${f}`).join("\n")}\n`);
}
