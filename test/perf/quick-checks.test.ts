/**
 * The hand-written option checks of the cold path (src/values/quick-checks.ts) only ever accept
 * what zod accepts, and return what zod returns: each input below is parsed with and without them
 * and must give the same value or the same error message.
 */
import { describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { baseOptionsShape, depsOptionsShape, FAST_BASE_CHECKS, FAST_DEPS_CHECKS, FAST_EXECUTOR_CHECKS, parseOptions } from "../../src/execution/options.js";
import { FileStorage } from "../../src/storage/file/storage.js";

const fn = () => undefined;
const shape = { ...baseOptionsShape, ...depsOptionsShape };

/** The outcome of a parse: its value, or the error's name and message. */
function outcome(parse: () => unknown): unknown {
  try {
    return { value: parse() };
  } catch (err) {
    return { error: `${(err as Error).name}: ${(err as Error).message}` };
  }
}

const INPUTS: unknown[] = [
  undefined,
  {},
  { toolsPath: "/tmp/t", defaultTimeoutMs: 1000, middleware: [fn], toolable: { onEvent: fn, sampleVia: "http" }, allowRuntimeDeps: true },
  { toolsPath: "/tmp/t", defaultTimeoutMs: undefined, deps: ["dayjs"], depsDir: "/tmp/d", onDepsOutput: fn, skillRoots: ["/s"], maxInFlightBytes: 4096 },
  { toolsPath: "" },
  { defaultTimeoutMs: 0 },
  { defaultTimeoutMs: 1.5 },
  { defaultTimeoutMs: 86_400_001 },
  { middleware: [fn, 1] },
  // eslint-disable-next-line no-sparse-arrays
  { middleware: [fn, , fn] },
  { middleware: "f" },
  { toolable: { onEvent: fn, extra: 1 } },
  { toolable: { sampleVia: "ws" } },
  { skillRoots: [""] },
  { maxInFlightBytes: 1023 },
  { deps: [1] },
  { allowRuntimeDeps: "yes" },
  { toolsPath: "/tmp/t", typo: 1 },
  { search: { embedder: "lexical" } },
  { search: { embedder: "nope" } },
  [],
  "options",
  Object.create({ toolsPath: "/tmp/inherited" }) as unknown,
  Object.defineProperty({}, "toolsPath", { get: () => "/tmp/getter", enumerable: true }),
  { [Symbol("s")]: 1, toolsPath: "/tmp/t" },
];

describe("hand-written option checks", () => {
  it("know only options of the shapes they stand in for", () => {
    expect(Object.keys(FAST_BASE_CHECKS).every((k) => Object.hasOwn(baseOptionsShape, k))).toBe(true);
    expect(Object.keys(FAST_DEPS_CHECKS).sort()).toEqual(Object.keys(depsOptionsShape).sort());
    expect(Object.keys(FAST_EXECUTOR_CHECKS).sort()).toEqual(Object.keys(shape).filter((k) => k !== "search").sort());
  });

  it("give zod's value or zod's error for every input", () => {
    for (const input of INPUTS) {
      expect(outcome(() => parseOptions(shape, input, "X", FAST_EXECUTOR_CHECKS))).toEqual(outcome(() => parseOptions(shape, input, "X")));
    }
  });

  it("copy arrays and objects, as zod does", () => {
    const middleware = [fn];
    const toolable = { onEvent: fn };
    const parsed = parseOptions(shape, { middleware, toolable }, "X", FAST_EXECUTOR_CHECKS);
    expect(parsed.middleware).not.toBe(middleware);
    expect(parsed.toolable).not.toBe(toolable);
    expect(parsed).toEqual({ middleware, toolable });
  });

  it("FileStorage accepts and refuses the same options", async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), "tcm-quick-"));
    try {
      const ok = new FileStorage({ basePath: base, maxArtifactBytes: 10, tempMaxAgeMs: 0 });
      expect(ok.basePath).toBe(base);
      await ok.close();
      for (const bad of [{ basePath: "" }, { basePath: base, maxStoreBytes: -1 }, { basePath: base, tempMaxAgeMs: 0.5 }, { basePath: base, typo: 1 }, { basePath: 1 }]) {
        expect(() => new FileStorage(bad as never)).toThrow(/Invalid FileStorage options/);
      }
    } finally {
      await rm(base, { recursive: true, force: true, maxRetries: 5 });
    }
  });
});
