/**
 * The main entry's exports, split into what `import "ts-code-mode"` loads and what it loads on first
 * use (issue 42, cold start). scripts/bundle.mjs uses this after tsc: a `run("1+1")` needs the
 * session, the executors it starts and file storage, ~400 KB of the ~900 KB the main entry used to
 * read and compile at import; the rest (LAZY_AREAS) is exported by stand-ins (src/stand-in.ts) that
 * load the area's chunk when first used.
 *
 * How a name is placed: tsc's dist/index.js is followed through its `export … from` statements to
 * the module that defines each name (its leaf). A name whose leaf is in a lazy area and not loaded by
 * the eager part anyway is lazy: a class or function becomes a stand-in; a string, finite number or
 * boolean is written into the entry as it is. Anything else (an object: an array of names, say)
 * cannot be stood in for without a copy that is not the same object, so its leaf is loaded eagerly
 * with every name it defines: keep such constants in small modules (src/agents/names.ts).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Parts of the package that `run("1+1")` does not load (paths in dist/). Each is one chunk entry,
 * loaded the first time one of its exports is used. A module of an area that the eager part imports
 * (a shared helper, say) stays eager: nothing is gained by deferring what is loaded anyway. Today
 * that holds for all of search, Redis storage, runs and telemetry (a Session builds its search and
 * durable runs, and `storageFromDescriptor` its storage, with static imports); they are listed so
 * their names go lazy by themselves once those imports are dynamic.
 */
export const LAZY_AREAS = [
  { name: "tools", test: /^tools\/adapters\// },
  { name: "agents", test: /^agents\// },
  { name: "search", test: /^search\// },
  { name: "sandbox", test: /^execution\/sandbox\// },
  { name: "redis", test: /^storage\/redis\// },
  { name: "container", test: /^execution\/container\// },
  { name: "remote", test: /^execution\/remote\// },
  { name: "runs", test: /^runs\// },
  { name: "telemetry", test: /^telemetry\// },
];

/** Where the area entries and the eager part's entry are written for the build (removed after). */
const ENTRY_DIR = "_main-entry";
export const LAZY_CHUNK_DIR = "_chunks/lazy";
const STAND_IN = "stand-in.js";

const REEXPORT = /export\s*\{([^}]*)\}\s*from\s*"([^"]+)";?|export\s*\*\s*from\s*"([^"]+)";?/g;

/** tsc's output without its comments (a comment may quote an export statement). */
const withoutComments = (text) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/[^\n]*/gm, "");

/** True for a module made of `export … from` statements only (an index): its names are defined elsewhere. */
const isReexportModule = (code) => code.replace(REEXPORT, "").replace(/export\s*\{\s*\};?/g, "").trim() === "";

/**
 * name → { file, name, value } (the module defining it, its name there, its value), followed from
 * `file` through `export … from` statements; the names a module defines itself are listed by
 * importing it (tsc's output: what `import "ts-code-mode"` evaluated anyway).
 */
async function origins(file, cache = new Map()) {
  if (cache.has(file)) return cache.get(file);
  const code = withoutComments(readFileSync(file, "utf8"));
  const found = new Map();
  cache.set(file, found);
  for (const m of code.matchAll(REEXPORT)) {
    const target = path.resolve(path.dirname(file), m[2] ?? m[3]);
    const theirs = await origins(target, cache);
    if (m[3] !== undefined) {
      for (const [name, origin] of theirs) if (name !== "default" && !found.has(name)) found.set(name, origin);
      continue;
    }
    for (const spec of m[1].split(",").map((s) => s.trim()).filter(Boolean)) {
      const [local, exported = local] = spec.split(/\s+as\s+/);
      const origin = theirs.get(local);
      if (!origin) throw new Error(`${file}: ${local} is not exported by ${m[2]}`);
      found.set(exported, origin);
    }
  }
  if (!isReexportModule(code)) {
    const module = await import(pathToFileURL(file).href);
    for (const name of Object.keys(module)) if (!found.has(name)) found.set(name, { file, name, value: module[name] });
  }
  return found;
}

/** A value written into the entry as JSON comes back the same (NaN and the infinities would not). */
const isLiteral = (v) => typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));

const areaOf = (dist, file) => LAZY_AREAS.find((a) => a.test.test(path.relative(dist, file).split(path.sep).join("/")));

/**
 * Reads tsc's main entry (`dist/index.js`) and writes the build's entries: the eager part (every
 * name whose leaf is outside LAZY_AREAS, and the stand-in maker) and one module per lazy area.
 * `eagerModules` (a set of files) moves a lazy area's name to the eager part when its leaf is
 * loaded there anyway. Returns the plan: the entry files, and each name's place.
 */
export async function planMainEntry(dist, eagerModules = new Set()) {
  const names = await origins(path.join(dist, "index.js"));
  const eager = [];
  const lazy = new Map(); // area name → [{ exported, origin }]
  const literal = [];
  // An object (an array of names, say) cannot be stood in for without a copy that is not the same
  // object: its module is loaded eagerly, with the names it defines. Keep such constants in small modules.
  const eagerFiles = new Set(eagerModules);
  for (const [, origin] of names) if (areaOf(dist, origin.file) && typeof origin.value !== "function" && !isLiteral(origin.value)) eagerFiles.add(origin.file);
  for (const [exported, origin] of [...names].sort(([a], [b]) => a.localeCompare(b))) {
    const area = areaOf(dist, origin.file);
    if (!area || eagerFiles.has(origin.file)) eager.push({ exported, origin });
    else if (typeof origin.value === "function") lazy.set(area.name, [...(lazy.get(area.name) ?? []), { exported, origin }]);
    else literal.push({ exported, value: origin.value });
  }
  const dir = path.join(dist, ENTRY_DIR);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const exportsOf = (list) =>
    list.map(({ exported, origin }) => `export { ${origin.name === exported ? exported : `${origin.name} as ${exported}`} } from ${JSON.stringify(relativeImport(dir, origin.file))};`).join("\n");
  const coreFile = path.join(dir, "core.js");
  writeFileSync(coreFile, `${exportsOf(eager)}\nexport { standIn as __standIn } from ${JSON.stringify(relativeImport(dir, path.join(dist, STAND_IN)))};\n`);
  const areaFiles = {};
  for (const [area, list] of lazy) {
    areaFiles[area] = path.join(dir, `${area}.js`);
    writeFileSync(areaFiles[area], `${exportsOf(list)}\n`);
  }
  return { coreFile, areaFiles, eager: eager.map((e) => e.exported), lazy, literal, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

function relativeImport(fromDir, file) {
  const rel = path.relative(fromDir, file).split(path.sep).join("/");
  return rel.startsWith(".") ? rel : `./${rel}`;
}

/**
 * dist/index.js: the early child's start, the eager part by a dynamic import (its names exported as
 * they are), then a stand-in for each lazy name and the lazy literals. Where this Node cannot
 * `require` an ES module (before 20.19), the areas are imported at once instead: slower, the same.
 */
export function mainEntrySource(plan, { earlyStart, coreChunk }) {
  const areas = Object.fromEntries([...plan.lazy.keys()].map((area) => [area, `./${LAZY_CHUNK_DIR}/${area}.js`]));
  const lines = [
    `// ts-code-mode's main entry, written by scripts/bundle.mjs (scripts/main-entry.mjs): the subprocess executor's first`,
    `// child starts before the rest of the library is loaded, so its start overlaps the import; the areas a run does`,
    `// not use load on first use of one of their exports (issue 42, cold start).`,
    `import ${JSON.stringify(earlyStart)};`,
    `import { createRequire } from "node:module";`,
    `const library = await import(${JSON.stringify(coreChunk)});`,
    `export const { ${plan.eager.join(", ")} } = library;`,
    `const areas = ${JSON.stringify(areas)};`,
    `const loaded = process.features.require_module ? {} : Object.fromEntries(await Promise.all(Object.entries(areas).map(async ([a, f]) => [a, await import(f)])));`,
    `const require = createRequire(import.meta.url);`,
    `const area = (a) => (loaded[a] ??= require(areas[a]));`,
    `const standIn = library.__standIn;`,
    ...[...plan.lazy].flatMap(([a, list]) => list.map(({ exported }) => `export const ${exported} = standIn(${JSON.stringify(exported)}, () => area(${JSON.stringify(a)}).${exported});`)),
    ...plan.literal.map(({ exported, value }) => `export const ${exported} = ${JSON.stringify(value)};`),
  ];
  return `${lines.join("\n")}\n`;
}
