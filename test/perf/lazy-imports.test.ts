/**
 * Importing `ts-code-mode` stays cheap: the compilers, parsers and engines that only some paths
 * need load on first use, not at import (issue 24: a CLI call, a serverless cold start and an MCP
 * handshake pay for every module the main entry loads). Checked in a fresh node importing the
 * BUILT package by its own name, with a resolve hook that refuses these packages.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ensureBuilt, MAIN, REPO } from "../cli/harness.js";
import { importWithGuard } from "../helpers/import-guard.js";
import { loadedModules } from "../helpers/loaded-modules.js";

const exec = promisify(execFile);

/** Loaded on first use only: zod, the snippet compilers, YAML, QuickJS, the MCP SDK, Redis, the TypeScript compiler, OpenTelemetry. */
const LAZY = /^(zod|yaml|sucrase|acorn|quickjs-emscripten(?:-core)?|@jitl\/[^/]+|typescript|ioredis|@modelcontextprotocol\/sdk|dockerode|hono|@hono\/[^/]+|pyodide|@energetic-ai\/[^/]+|@opentelemetry\/[^/]+)(\/|$)/;
const LAZY_FILES = /node_modules[\\/](zod|yaml|sucrase|acorn|quickjs-emscripten(?:-core)?|@jitl|typescript|ioredis|@modelcontextprotocol|dockerode|hono|@hono|pyodide|@energetic-ai|@opentelemetry)[\\/]/;

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);

describe("import cost", () => {
  it("importing the main entry loads none of the optional packages", async () => {
    expect(await importWithGuard("ts-code-mode", { refuse: LAZY, refuseInCache: LAZY_FILES, refuseGlobals: ["__zod_globalRegistry"] }, REPO)).toBe("clean");
  });

  it("the guard sees zod however it loads (control: options the hand-written checks do not know, here `search`, go to zod)", async () => {
    const loader = `data:text/javascript,${encodeURIComponent(`const m = await import(${JSON.stringify(new URL("../../dist/index.js", import.meta.url).href)}); new m.InProcessExecutor({ defaultTimeoutMs: 1000, search: { embedder: "lexical" } });`)}`;
    expect(await importWithGuard(loader, { refuse: /^$/, refuseInCache: /^$/, refuseGlobals: ["__zod_globalRegistry"] }, REPO)).toBe("global set: __zod_globalRegistry");
  });
});

describe("CLI start", () => {
  const commandsOf = (modules: Set<string>) => [...modules].flatMap((m) => /^dist\/cli\/commands\/([\w-]+)\.js$/.exec(m)?.[1] ?? []).sort();

  it("--version evaluates no command module and no zod", async () => {
    const r = await loadedModules([MAIN, "--version"], REPO);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(commandsOf(r.distModules)).toEqual([]);
    expect(r.zod).toBe(false);
  });

  it("run evaluates only the run command's module, and no MCP SDK, Redis, hono or dockerode", async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), "tcm-lazy-cli-"));
    try {
      const r = await loadedModules([MAIN, "run", "--executor", "in-process", "--base", base, "1+1"], REPO);
      expect(r.stdout.trim()).toBe("2");
      expect(commandsOf(r.distModules)).toEqual(["run"]);
      expect(r.urls.filter((u) => LAZY_FILES.test(u) && !/[\\/]zod[\\/]/.test(u))).toEqual([]);
      // The MCP SDK is bundled into dist (scripts/bundle.mjs): its modules show as regions, not files.
      expect([...r.bundled].filter((m) => m.startsWith("@modelcontextprotocol/"))).toEqual([]);
      // Control: the MCP entry does evaluate them, and the check sees it.
      const mcp = await loadedModules(["--input-type=module", "-e", 'await import("ts-code-mode/mcp")'], REPO);
      expect([...mcp.bundled].some((m) => m.startsWith("@modelcontextprotocol/sdk/"))).toBe(true);
    } finally {
      await rm(base, { recursive: true, force: true, maxRetries: 5 });
    }
  });

  it("run '1+1' with tool files evaluates only the executor it uses and no tool adapter (control: a run that calls a CLI tool loads its adapter)", async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), "tcm-lazy-exec-"));
    try {
      await cp(path.join(REPO, "examples", "tools"), path.join(base, "tools"), { recursive: true });
      const unused = /^dist\/(execution\/(in-process|sandbox|container|python)\/executor|tools\/adapters\/(cli|http|mcp|toolable)\/adapter)\.js$/;
      const plain = await loadedModules([MAIN, "run", "--base", base, "1+1"], REPO);
      expect(plain.stdout.trim()).toBe("2");
      expect(plain.distModules.has("dist/execution/subprocess/executor.js")).toBe(true);
      expect([...plain.distModules].filter((m) => unused.test(m))).toEqual([]);
      const calling = await loadedModules([MAIN, "run", "--base", base, 'await tools.echo.say({ text: ["hi"] })'], REPO);
      expect(calling.stdout).toContain("hi");
      // The four adapters share one chunk (scripts/bundle.mjs), so all of them load with the first.
      expect([...calling.distModules].filter((m) => unused.test(m))).toContain("dist/tools/adapters/cli/adapter.js");
    } finally {
      await rm(base, { recursive: true, force: true, maxRetries: 5 });
    }
  });

  it("run '1+1' evaluates no zod in the host, with either executor (options are checked by hand; zod only words errors)", async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), "tcm-lazy-cli-"));
    try {
      for (const executor of ["in-process", "subprocess"]) {
        const r = await loadedModules([MAIN, "run", "--executor", executor, "--base", base, "1+1"], REPO);
        expect(r.stdout.trim()).toBe("2");
        expect({ executor, zod: r.zod }).toEqual({ executor, zod: false });
      }
    } finally {
      await rm(base, { recursive: true, force: true, maxRetries: 5 });
    }
  });

  it("run '1+1' with tool files reads none of them: no YAML parser, no zod (control: a run that lists tools loads both)", async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), "tcm-lazy-tools-"));
    try {
      await cp(path.join(REPO, "examples", "tools"), path.join(base, "tools"), { recursive: true });
      const yamlLoaded = (urls: string[]) => urls.some((u) => /node_modules[\\/]yaml[\\/]/.test(u));
      for (const executor of ["in-process", "subprocess"]) {
        const r = await loadedModules([MAIN, "run", "--executor", executor, "--base", base, "1+1"], REPO);
        expect(r.stdout.trim()).toBe("2");
        expect({ executor, yaml: yamlLoaded(r.urls), zod: r.zod }).toEqual({ executor, yaml: false, zod: false });
      }
      const control = await loadedModules([MAIN, "run", "--executor", "in-process", "--base", base, "(await tools.list()).length"], REPO);
      expect(Number(control.stdout.trim())).toBeGreaterThan(0);
      expect({ yaml: yamlLoaded(control.urls), zod: control.zod }).toEqual({ yaml: true, zod: true });
    } finally {
      await rm(base, { recursive: true, force: true, maxRetries: 5 });
    }
  });

  it("an in-process run that never fetches loads no undici (Headers, Request, Response and crypto are read on the guest's first use)", async () => {
    const main = JSON.stringify(new URL("../../dist/index.js", import.meta.url).href);
    const script = (code: string) =>
      `const m = await import(${main}); const s = new m.Session({ storage: new m.FileStorage({ basePath: ${JSON.stringify(base)} }), executor: new m.InProcessExecutor() });` +
      ` const r = await s.run(${JSON.stringify(code)}); await s.close();` +
      ` console.log(JSON.stringify({ value: r.value, error: r.error?.message, undici: process.moduleLoadList.some((n) => n.includes("undici")) }));`;
    const run = async (code: string) => JSON.parse((await exec(process.execPath, ["--input-type=module", "-e", script(code)], { cwd: REPO, timeout: 60_000 })).stdout) as unknown;
    const base = await mkdtemp(path.join(os.tmpdir(), "tcm-lazy-undici-"));
    try {
      expect(await run("1+1")).toEqual({ value: 2, undici: false });
      // The globals are still there, the host's own, and writable like the others.
      expect(await run("[new Response('x') instanceof Response, typeof Headers, typeof Request, typeof crypto.randomUUID(), Object.keys(globalThis).includes('Headers')]")).toEqual({
        value: [true, "function", "function", "string", false],
        undici: true,
      });
      expect(await run("Headers = 1; Response = 2; crypto = 3; [Headers, Response, crypto]")).toEqual({ value: [1, 2, 3], undici: false });
    } finally {
      await rm(base, { recursive: true, force: true, maxRetries: 5 });
    }
  });

  it("--help still lists every command (they all load when none is named)", async () => {
    const r = await loadedModules([MAIN, "--help"], REPO);
    for (const name of ["run", "mcp", "serve", "agent", "skills", "containers"]) expect(r.stdout).toContain(`\n  ${name}`);
    expect(commandsOf(r.distModules)).toContain("serve");
  });

  it("the guard sees such a load (control: the sandbox's QuickJS module loads QuickJS when it starts one)", async () => {
    const script = new URL("../../dist/execution/sandbox/wasm.js", import.meta.url).href;
    const loader = `data:text/javascript,${encodeURIComponent(`const m = await import(${JSON.stringify(script)}); await m.newSandboxModule(64);`)}`;
    expect(await importWithGuard(loader, { refuse: LAZY, refuseInCache: LAZY_FILES }, REPO)).toMatch(/^refused: (quickjs-emscripten-core|@jitl\/quickjs-wasmfile-release-sync) /);
  });
});
