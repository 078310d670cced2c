/**
 * Importing `ts-code-mode` stays cheap: the compilers, parsers and engines that only some paths
 * need load on first use, not at import (issue 24: a CLI call, a serverless cold start and an MCP
 * handshake pay for every module the main entry loads). Checked in a fresh node importing the
 * BUILT package by its own name, with a resolve hook that refuses these packages.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, REPO } from "../cli/harness.js";
import { importWithGuard } from "../helpers/import-guard.js";

/** Loaded on first use only: the snippet compilers, YAML, QuickJS, the MCP SDK, Redis, the TypeScript compiler. */
const LAZY = /^(yaml|sucrase|acorn|quickjs-emscripten|@jitl\/[^/]+|typescript|ioredis|@modelcontextprotocol\/sdk|dockerode|hono|@hono\/[^/]+|pyodide|@energetic-ai\/[^/]+)(\/|$)/;
const LAZY_FILES = /node_modules[\\/](yaml|sucrase|acorn|quickjs-emscripten|@jitl|typescript|ioredis|@modelcontextprotocol|dockerode|hono|@hono|pyodide|@energetic-ai)[\\/]/;

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);

describe("import cost", () => {
  it("importing the main entry loads none of the optional packages", async () => {
    expect(await importWithGuard("ts-code-mode", { refuse: LAZY, refuseInCache: LAZY_FILES }, REPO)).toBe("clean");
  });

  it("the guard sees such a load (control: the sandbox's QuickJS module loads QuickJS when it starts one)", async () => {
    const script = new URL("../../dist/execution/sandbox/wasm.js", import.meta.url).href;
    const loader = `data:text/javascript,${encodeURIComponent(`const m = await import(${JSON.stringify(script)}); await m.newSandboxModule(64);`)}`;
    expect(await importWithGuard(loader, { refuse: LAZY, refuseInCache: LAZY_FILES }, REPO)).toMatch(/^refused: quickjs-emscripten /);
  });
});
