/**
 * `import "ts-code-mode"` loads what a `run("1+1")` needs and nothing else (issue 42 item 1, cold
 * start): the container machinery, the sandbox engines (QuickJS, deno), the agents, the tool
 * adapters and the Node built-ins only some paths use (http, zlib, worker_threads, v8) load when
 * first used, behind the same exported names (stand-ins for the main entry's lazy areas:
 * scripts/main-entry.mjs). Observed in a fresh node importing the built package with a loader hook that logs every
 * file it loads (a module's code is identified by a class or function only it defines, since chunk
 * names are hashed) and `process.moduleLoadList` (the built-ins initialised so far). Then the same
 * process uses each lazy part through its exported name: it loads and works.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, REPO } from "../cli/harness.js";

const DIST = pathToFileURL(path.join(REPO, "dist", "index.js")).href;

/**
 * Built-ins an import does not load (node:net, node:stream, child_process... the subprocess executor
 * needs). A run loads none but v8: the subprocess executor's IPC channel serializes with it.
 */
const LAZY_BUILTINS = ["http", "zlib", "worker_threads", "v8"];
const NOT_RUN_BUILTINS = ["http", "zlib", "worker_threads"];

/** Code only the lazily loaded parts define, as the bundle writes it (`var X = class` or `class X`, `function f`). */
const LAZY_CODE: Record<string, RegExp> = {
  "the container guest (ContainerExecutor's runtime)": /\b(?:var|let|const) ContainerGuest = class\b|\bclass ContainerGuest\b/,
  "the container image builder": /\bfunction buildOffline\b/,
  "QuickJS (SandboxExecutor's default engine)": /\b(?:var|let|const) SandboxInstance = class\b|\bclass SandboxInstance\b/,
  "the deno engine": /\b(?:var|let|const) DenoEngine = class\b|\bclass DenoEngine\b/,
};

/**
 * The main entry's lazy areas (scripts/main-entry.mjs): their stand-ins `require` the area's chunk on
 * first use. A require goes round the loader hooks, so the probe logs what CommonJS's loader reads.
 */
const LAZY_AREA_CHUNKS = ["_chunks/lazy/agents.js", "_chunks/lazy/tools.js"];

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-lazy-import-"));
  // Loader hooks run on their own thread: each loaded file's URL is appended to the log file.
  await writeFile(
    path.join(dir, "hooks.mjs"),
    `import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  if (url.startsWith("file:")) appendFileSync(process.env.TCM_LOAD_LOG, url + "\\n");
  return next(url, context);
}
`,
  );
  await writeFile(path.join(dir, "register.mjs"), `import { register } from "node:module";\nregister("./hooks.mjs", import.meta.url);\n`);
}, 600_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** The lazy parts whose code is in the first `count` files `log` lists (all of them without `count`). */
async function lazyPartsLoaded(log: string, count?: number): Promise<string[]> {
  const files = [...new Set((await readFile(log, "utf8")).split("\n").slice(0, count).filter(Boolean))];
  const sources = await Promise.all(files.map((url) => readFile(fileURLToPath(url), "utf8")));
  return Object.entries(LAZY_CODE)
    .filter(([, re]) => sources.some((s) => re.test(s)))
    .map(([name]) => name);
}

/** The package's files among the first `count` files `log` lists: paths in dist/, a chunk's hash left out, sorted. */
async function packageFilesLoaded(log: string, count: number): Promise<string[]> {
  const dist = pathToFileURL(path.join(REPO, "dist")).href + "/";
  const files = (await readFile(log, "utf8")).split("\n").slice(0, count).filter((url) => url.startsWith(dist));
  return [...new Set(files.map((url) => url.slice(dist.length).replace(/-[\w-]{8}\.js$/, ".js")))].sort();
}

describe("import \"ts-code-mode\"", () => {
  it("loads no container, sandbox engine or unused built-in for a run of 1+1, and each loads when first used", async () => {
    const log = path.join(dir, "loads.log");
    const base = path.join(dir, "base");
    const script = path.join(dir, "probe.mjs");
    // [step, how many files the log lists by then, the built-ins loaded by then]
    const lines = (name: string) =>
      `JSON.stringify([${JSON.stringify(name)}, process.env.TCM_LOAD_LOG ? (await import("node:fs")).readFileSync(process.env.TCM_LOAD_LOG, "utf8").split("\\n").length - 1 : 0, builtins()])`;
    await writeFile(
      script,
      `if (process.env.TCM_LOAD_LOG) {
  const { default: Module } = await import("node:module");
  const { appendFileSync } = await import("node:fs");
  const { pathToFileURL } = await import("node:url");
  const read = Module._extensions[".js"];
  Module._extensions[".js"] = function (module, file) {
    appendFileSync(process.env.TCM_LOAD_LOG, pathToFileURL(file).href + "\\n");
    return read.call(this, module, file);
  };
}
const builtins = () => process.moduleLoadList.filter((m) => m.startsWith("NativeModule ")).map((m) => m.slice("NativeModule ".length));
const m = await import(${JSON.stringify(DIST)});
console.log(${lines("import")});
for (const executor of [new m.SubprocessExecutor(), new m.InProcessExecutor()]) {
  const s = new m.Session({ storage: new m.FileStorage({ basePath: ${JSON.stringify(base)} }), executor });
  await s.start();
  const r = await s.run("1+1");
  if (!r.ok || r.value !== 2) throw new Error("run failed: " + JSON.stringify(r));
  await s.close();
}
console.log(${lines("runs")});
// Each lazy part, used through its exported name, loads and works.
const sandbox = new m.SandboxExecutor();
if (!(sandbox instanceof m.SandboxExecutor) || sandbox.engine !== "quickjs") throw new Error("SandboxExecutor is not itself");
const s = new m.Session({ storage: new m.FileStorage({ basePath: ${JSON.stringify(base)} }), executor: sandbox });
await s.start();
const r = await s.run("1+1");
if (!r.ok || r.value !== 2) throw new Error("sandbox run failed: " + JSON.stringify(r));
await s.close();
if (!/^localhost\\/ts-code-mode-runtime:[0-9a-f]{16}$/.test(m.defaultImageTag())) throw new Error("defaultImageTag: " + m.defaultImageTag());
const container = new m.ContainerExecutor({ image: "localhost/none:1" });
const refused = await container.exec("true").then(() => null, (e) => e);
if (!(refused instanceof m.ValidationError) || !/not started/.test(refused.message)) throw new Error("ContainerExecutor.exec: " + refused);
const deno = new m.SandboxExecutor({ engine: "deno" });
if (deno.engine !== "deno" || deno.warm !== false || deno.processId !== null) throw new Error("deno SandboxExecutor before start");
await deno.close();
const built = await m.buildImage({ with: ["not a name"] }).then(() => null, (e) => e);
if (!(built instanceof m.ValidationError)) throw new Error("buildImage: " + built);
// A lazy area's class through its stand-in: a static method, instanceof, and the real class's errors.
const cli = m.CliToolAdapter.fromDocument({ name: "echo", type: "cli", command: "echo", description: "d" }, "echo.yaml");
if (!(cli instanceof m.CliToolAdapter) || cli.name !== "echo") throw new Error("CliToolAdapter.fromDocument: " + cli);
const bad = await m.loadAgentProject(${JSON.stringify(path.join(os.tmpdir(), "tcm-no-such-agents"))}).then(() => null, (e) => e);
if (!(bad instanceof Error) || !m.AgentRuntime.name) throw new Error("loadAgentProject: " + bad);
class Runtime extends m.AgentRuntime {}
if (Object.getPrototypeOf(Runtime.prototype) !== m.AgentRuntime.prototype) throw new Error("extends AgentRuntime");
console.log(${lines("used")});
`,
    );
    const probe = async (args: string[], env: Record<string, string>) => {
      const { stdout } = await promisify(execFile)(process.execPath, [...args, script], { cwd: dir, env: { ...process.env, TS_CODE_MODE_EARLY_CHILD: "0", ...env }, timeout: 120_000 });
      const steps = stdout
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("["))
        .map((l) => JSON.parse(l) as [string, number, string[]]);
      expect(steps.map(([step]) => step)).toEqual(["import", "runs", "used"]);
      return steps as [[string, number, string[]], [string, number, string[]], [string, number, string[]]];
    };
    // The built-ins, without the loader hook (its thread loads node:worker_threads): none of the lazy
    // ones at import, nor after a run in each of the default executors.
    const [atImport, afterRuns] = await probe([], {});
    expect(atImport[2].filter((b) => LAZY_BUILTINS.includes(b))).toEqual([]);
    expect(afterRuns[2].filter((b) => NOT_RUN_BUILTINS.includes(b))).toEqual([]);
    // The files, with it: no lazy part's code by the end of the runs.
    const [imported, logged] = await probe(["--import", pathToFileURL(path.join(dir, "register.mjs")).href], { TCM_LOAD_LOG: log });
    expect(logged[1]).toBeGreaterThan(0);
    // Few files at import: the bundle puts what the main entry loads statically in two chunks (what
    // the other entries share, the rest; the early child's start and the toolable API keep their
    // own); each file is a resolve, open, read and link of the ESM loader, ~1 ms of CPU apiece
    // where it used to read ~60 chunks.
    expect(await packageFilesLoaded(log, imported[1])).toEqual([
      "_chunks/early-start-graph.js",
      "_chunks/index-graph.js",
      "_chunks/index.js",
      "_chunks/library-core.js",
      "_chunks/library.js",
      "execution/subprocess/early-start.js",
      "index.js",
    ]);
    expect(await lazyPartsLoaded(log, logged[1])).toEqual([]);
    expect((await packageFilesLoaded(log, logged[1])).filter((f) => LAZY_AREA_CHUNKS.includes(f))).toEqual([]);
    // Used, they loaded: QuickJS, the deno engine, the container runtime and the image builder, the
    // agents and the tool adapters.
    expect((await lazyPartsLoaded(log)).sort()).toEqual(Object.keys(LAZY_CODE).sort());
    expect((await packageFilesLoaded(log, Infinity)).filter((f) => LAZY_AREA_CHUNKS.includes(f))).toEqual(LAZY_AREA_CHUNKS);
  }, 180_000);
});

