/**
 * What a cold `run` loads before its child starts, and what the child loads (issue 42 item 1, cold
 * start), read from the built files: the bin's static imports are all loaded before its first line
 * runs, so the spawn waits for every one of them; the child's start waits for each module it links.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, REPO } from "../cli/harness.js";

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);

const DIST = path.join(REPO, "dist");
const RELATIVE_IMPORT = /^import\s+(?:[^;]*?\sfrom\s+)?["'](\.{1,2}\/[^"']+)["']/gm;

/** `file` and every file it imports statically (transitively): their text, each the module sources the bundler names in `// dist/…` comments. */
function staticGraph(file: string, seen = new Map<string, string>()): Map<string, string> {
  if (seen.has(file)) return seen;
  const text = readFileSync(file, "utf8");
  seen.set(file, text);
  for (const m of text.matchAll(RELATIVE_IMPORT)) staticGraph(path.resolve(path.dirname(file), m[1] as string), seen);
  return seen;
}
const modulesIn = (graph: Map<string, string>): string[] => [...graph.values()].flatMap((text) => [...text.matchAll(/^\/\/ (dist\/\S+\.js)$/gm)].map((m) => m[1] as string));

describe("cold start: what loads before the child starts", () => {
  it("the bin starts a run's child from a light module: not the ChildHandle, commander or the command's modules", () => {
    const modules = modulesIn(staticGraph(path.join(DIST, "cli", "main.js")));
    expect(modules).toContain("dist/execution/subprocess/node-child.js");
    expect(modules).not.toContain("dist/execution/subprocess/child-process.js");
    expect(modules.filter((m) => /\/(result|display|explain|session|shared)\.js$/.test(m))).toEqual([]);
  });

  it("the child is one file: it imports none of our modules", () => {
    const child = readFileSync(path.join(DIST, "execution", "subprocess", "child.js"), "utf8");
    expect([...child.matchAll(RELATIVE_IMPORT)].map((m) => m[1])).toEqual([]);
    expect(child).not.toMatch(/import\(\s*["']\.{1,2}\//);
    // Still the guest runtime it always ran.
    expect(child).toContain("// dist/execution/subprocess/guest-runtime.js");
  });
});
