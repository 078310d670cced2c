/**
 * The container image holds only the dist files its entry imports (runtimeFiles). Whatever way the
 * bundler writes an import — named, re-exported, a bare `import "./chunk.js"` run for its side
 * effects, or `import()` — the file must be in the image: a missing chunk is a container that exits
 * at start with ERR_MODULE_NOT_FOUND. Checked against the built dist, with a deliberately broad
 * reading of each file (any quoted relative .js path).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runtimeFiles } from "../../../src/execution/container/image.js";
import { REPO } from "../../cli/harness.js";

describe("container runtimeFiles", () => {
  it("holds every relative module that a file of the image names, bare side-effect imports included", () => {
    const dist = path.join(REPO, "dist");
    const files = new Set(runtimeFiles(dist));
    const missing: string[] = [];
    for (const rel of files) {
      const source = readFileSync(path.join(dist, rel), "utf8");
      for (const m of source.matchAll(/["'](\.{1,2}\/[^"'\n]+?\.js)["']/g)) {
        const target = path.relative(dist, path.resolve(path.dirname(path.join(dist, rel)), m[1]!));
        if (!files.has(target)) missing.push(`${rel} → ${target}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
