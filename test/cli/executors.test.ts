/**
 * createExecutor: which executor each `--executor` / `--language` pair builds, and the usage errors
 * of the combinations it refuses. The classes are loaded on demand (loadExecutor), so a command
 * parses only the one it uses; building before loading is a programming error, said as such.
 * Nothing is started: constructing an executor spawns nothing.
 */
import { describe, expect, it, vi } from "vitest";
import { createExecutor, loadExecutor } from "../../src/execution/by-name.js";
import { ValidationError } from "../../src/errors.js";

const base = { toolsPath: "/nonexistent-tools" };

describe("createExecutor", () => {
  it("builds the class each name and language names, once its module is loaded", async () => {
    const cases: Array<[string, "typescript" | "python" | undefined, string, string]> = [
      ["subprocess", undefined, "SubprocessExecutor", "subprocess"],
      ["in-process", undefined, "InProcessExecutor", "in-process"],
      ["sandbox", undefined, "SandboxExecutor", "sandbox"],
      ["container", undefined, "ContainerExecutor", "container"],
      ["subprocess", "python", "PythonExecutor", "python"],
      ["sandbox", "python", "SandboxExecutor", "sandbox"],
    ];
    for (const [name, language, cls, kind] of cases) {
      await loadExecutor(name, language);
      const executor = createExecutor(name, { ...base, ...(language ? { language } : {}) });
      expect([name, language, executor.constructor.name, executor.kind]).toEqual([name, language, cls, kind]);
      await executor.close();
    }
  });

  it("refuses the combinations it cannot build, naming the flag", async () => {
    await loadExecutor("in-process");
    const refusal = (name: string, options: Parameters<typeof createExecutor>[1]) => {
      try {
        createExecutor(name, options);
      } catch (err) {
        return err instanceof ValidationError ? err.message : `not a ValidationError: ${String(err)}`;
      }
      return "built";
    };
    expect(refusal("in-process", { ...base, engine: "deno" })).toMatch(/--engine deno applies to --executor sandbox only; got --executor in-process/);
    expect(refusal("in-process", { ...base, language: "python" })).toMatch(/--language python runs with --executor subprocess \(python3\) or --executor sandbox \(Pyodide\); got --executor in-process/);
    expect(refusal("in-process", { ...base, container: { image: "x" } })).toMatch(/--image, --network, --workspace and --mount apply to --executor container only; got --executor in-process/);
    expect(refusal("nope", base)).toMatch(/--executor: unknown executor "nope" \(available: subprocess, in-process, sandbox, container\)/);
  });

  it("says loadExecutor was skipped instead of building nothing (a programming error, not a usage one)", async () => {
    vi.resetModules(); // a module instance no loadExecutor has run in
    const fresh = (await import("../../src/execution/by-name.js")) as typeof import("../../src/execution/by-name.js");
    expect(() => fresh.createExecutor("container", base)).toThrow(/ContainerExecutor was not loaded \(await loadExecutor\(\.\.\.\) first\)/);
  });
});
