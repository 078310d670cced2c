/**
 * The example workflows are shipped to users and read by agents; nobody type-checks them (they use
 * the ambient namespaces), so at least check that each parses, exports run, and documents itself.
 */
import { readFile, readdir } from "node:fs/promises";
import { describe, expect, test } from "vitest";
import { WorkflowLibrary } from "../../src/workflows/library.js";
import { validateWorkflowName } from "../../src/workflows/names.js";
import { extractSignature } from "../../src/workflows/signature.js";
import { MemoryWorkflowStore } from "./memory-store.js";

const dir = new URL("../../examples/workflows/", import.meta.url);
const files = (await readdir(dir)).filter((f) => f.endsWith(".ts")).sort();

describe("examples/workflows", () => {
  test("there are at least three examples", () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
  });

  test.each(files)("%s parses, exports run and has a description", async (file) => {
    const source = await readFile(new URL(file, dir), "utf8");
    const sig = await extractSignature(source, file);
    expect(sig.syntaxError).toBeNull();
    expect(sig.hasRun).toBe(true);
    expect(sig.description).toBeTruthy();
    expect(() => validateWorkflowName(file.replace(/\.ts$/, ""))).not.toThrow();
  });

  test("the library accepts every example and extracts the documented params", async () => {
    const lib = new WorkflowLibrary(new MemoryWorkflowStore());
    for (const file of files) {
      await lib.create({ name: file.replace(/\.ts$/, ""), source: await readFile(new URL(file, dir), "utf8") });
    }
    const byName = new Map((await lib.list()).map((w) => [w.name, w]));
    expect(byName.get("triple")?.params).toEqual([{ name: "n", type: "number", required: true }]);
    expect(byName.get("count_lines")?.params).toEqual([
      { name: "files", type: "string[]", required: true, description: 'Files to count, e.g. ["README.md", "package.json"].' },
      {
        name: "save_as",
        type: "string",
        required: false,
        default: "reports/line-counts.json",
        description: "Artifact name for the per-file counts; nothing is saved when it is empty.",
      },
    ]);
    expect(byName.get("count_lines")?.description).toMatch(/^Count the lines/);
    expect(byName.get("system_report")?.params[0]).toMatchObject({ name: "save_as", required: false, description: "Artifact name to save the report under." });
  });
});
