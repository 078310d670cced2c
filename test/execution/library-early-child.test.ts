/**
 * `import "ts-code-mode"` starts the default executor's first child before the rest of the library
 * loads (dist/index.js, written by scripts/bundle.mjs; src/execution/subprocess/early-start.ts), so
 * a fresh process's first result does not wait for a second node start after the import (issue 42
 * item 1). Observed in fresh processes importing the built package: the child a session takes is
 * the one the import started, and it imports packages from the session's folders (sent when it is
 * taken, since they are not known at import); a process that imports and does nothing exits on its
 * own, the child with it; TS_CODE_MODE_EARLY_CHILD=0 starts none.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, isAlive, REPO } from "../mcp/harness.js";
import { waitFor } from "../helpers/processes.js";

const DIST = pathToFileURL(path.join(REPO, "dist", "index.js")).href;
/** This process's children, from /proc (the early child is not reachable through the public API). */
const CHILDREN = `const { readdirSync, readFileSync } = await import("node:fs");
const children = () => readdirSync("/proc").filter((n) => /^\\d+$/.test(n)).filter((pid) => {
  try { const st = readFileSync("/proc/" + pid + "/stat", "utf8"); return Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]) === process.pid; } catch { return false; }
}).map(Number);`;

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-library-early-"));
}, 600_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** Runs `body` as an ES module in a fresh node (cwd: the temp folder), resolving with its last stdout line as JSON. */
async function fresh(name: string, body: string, env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const file = path.join(dir, `${name}.mjs`);
  await writeFile(file, `${CHILDREN}\n${body}`);
  const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: dir, env: { ...process.env, ...env }, timeout: 120_000 });
  return JSON.parse(stdout.trim().split("\n").pop() ?? "null") as Record<string, unknown>;
}

describe.skipIf(process.platform !== "linux")("import \"ts-code-mode\"", () => {
  it("starts the child the first subprocess session takes, which imports from that session's folders", async () => {
    const base = path.join(dir, "base");
    // A package only the session's deps folder has: a child that kept the import's folders (cwd) would not find it.
    const pkg = path.join(base, "deps", "node_modules", "tcm-early-probe");
    await mkdir(pkg, { recursive: true });
    await writeFile(path.join(pkg, "package.json"), JSON.stringify({ name: "tcm-early-probe", version: "1.0.0", main: "index.js" }));
    await writeFile(path.join(pkg, "index.js"), 'module.exports = "from the deps folder";');
    const out = await fresh(
      "session",
      `const m = await import(${JSON.stringify(DIST)});
const atImport = children();
const s = new m.Session({ storage: new m.FileStorage({ basePath: ${JSON.stringify(base)} }), executor: new m.SubprocessExecutor() });
await s.start();
const r = await s.run('({ pid: process.pid, bases: JSON.parse(process.env.TS_CODE_MODE_IMPORT_BASES), probe: require("tcm-early-probe") })');
await s.close();
console.log(JSON.stringify({ atImport, result: r }));
process.exit(0);`,
    );
    const atImport = out.atImport as number[];
    expect(atImport).toHaveLength(1);
    expect(out.result).toMatchObject({ ok: true, value: { pid: atImport[0], bases: [path.join(base, "deps"), dir], probe: "from the deps folder" } });
  }, 180_000);

  it("leaves a process that runs no session free to exit, and its child ends with it", async () => {
    const file = path.join(dir, "idle.mjs");
    // No process.exit: the process ends when nothing keeps it alive; the child must not.
    // What keeps its event loop alive is read too: the child's idle limit would end a process it held, later.
    await writeFile(file, `${CHILDREN}\nawait import(${JSON.stringify(DIST)});\nconsole.log(JSON.stringify({ atImport: children(), holding: process.getActiveResourcesInfo() }));\n`);
    const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: dir, timeout: 60_000 });
    const { atImport, holding } = JSON.parse(stdout.trim()) as { atImport: number[]; holding: string[] };
    expect(atImport).toHaveLength(1);
    expect(holding.filter((r) => r === "ProcessWrap" || r === "PipeWrap")).toEqual([]);
    await waitFor(() => !isAlive(atImport[0]!), "the unused early child to end with its process", 30_000);
  }, 120_000);

  it("exports the names src/index.ts exports (dist/index.js re-exports the library's bundle after the child's start)", async () => {
    const names = Object.keys(await import("../../src/index.js")).sort();
    const out = await fresh("names", `const m = await import(${JSON.stringify(DIST)});\nconsole.log(JSON.stringify({ names: Object.keys(m).sort() }));\nprocess.exit(0);`, { TS_CODE_MODE_EARLY_CHILD: "0" });
    expect(out.names).toEqual(names);
  }, 120_000);

  it("starts no child with TS_CODE_MODE_EARLY_CHILD=0", async () => {
    const out = await fresh("off", `await import(${JSON.stringify(DIST)});\nconsole.log(JSON.stringify({ atImport: children() }));\nprocess.exit(0);`, { TS_CODE_MODE_EARLY_CHILD: "0" });
    expect(out.atImport).toEqual([]);
  }, 120_000);
});
