/**
 * `capabilities()` notes point readers at other classes ("use SandboxExecutor for that"): every
 * class a note names must be one the package exports, or the advice sends users nowhere.
 */
import { describe, expect, it } from "vitest";
import * as pkg from "../../src/index.js";

const executors = [
  ["InProcessExecutor", () => new pkg.InProcessExecutor()],
  ["SubprocessExecutor", () => new pkg.SubprocessExecutor({ permissions: { fsRead: ["/tmp"] } })],
  ["SandboxExecutor (quickjs)", () => new pkg.SandboxExecutor()],
  ["SandboxExecutor (deno)", () => new pkg.SandboxExecutor({ engine: "deno" })],
  ["PythonExecutor", () => new pkg.PythonExecutor({ maxMemoryMb: 256 })],
] as const;

describe("capabilities() notes", () => {
  for (const [label, make] of executors) {
    it(`${label}: every class named in a note is exported by the package`, async () => {
      const executor = make();
      try {
        const named = executor.capabilities().notes.join(" ").match(/\b[A-Z][A-Za-z]+(?:Executor|Storage|Store|Registry)\b/g) ?? [];
        const missing = named.filter((name) => !(name in pkg));
        expect(missing).toEqual([]);
      } finally {
        await executor.close();
      }
    });
  }
});
