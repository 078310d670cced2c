/**
 * The framework packages are optional peers: importing `ts-code-mode` never loads them, and an
 * adapter whose framework is missing says what to install. Both checked in fresh node processes
 * importing the BUILT package by its own name, as a user's code does.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPeer, MissingPeerError } from "../../src/adapters/peer.js";
import { ensureBuilt, REPO } from "../cli/harness.js";
import { importWithGuard as importWithFrameworkGuard } from "../helpers/import-guard.js";

const exec = promisify(execFile);
/** The framework packages (and their own scopes): none may load with the main entry. */
const FRAMEWORKS = /^(ai|@ai-sdk\/[^/]+|@openai\/agents(-[a-z]+)?|@langchain\/[^/]+|langchain)(\/|$)/;

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-adapters-loading-"));
}, 180_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** Imports `specifier` in a fresh node that refuses every framework package. */
async function importWithGuard(specifier: string): Promise<string> {
  const r = await importWithFrameworkGuard(specifier, { refuse: FRAMEWORKS, refuseInCache: /node_modules[\\/](ai|@ai-sdk|@openai[\\/]agents|@langchain|langchain)[\\/]/ }, REPO);
  return r.replace(/^refused: /, "framework loaded: ").replace(/^in require cache: /, "framework in require cache: ");
}

describe("optional peers", () => {
  it("importing the main entry loads no framework package", async () => {
    expect(await importWithGuard("ts-code-mode")).toBe("clean");
  });

  it("the guard itself sees a framework load (an adapter subpath loads its framework)", async () => {
    expect(await importWithGuard("ts-code-mode/openai-agents")).toMatch(/^framework loaded: @openai\/agents/);
    expect(await importWithGuard("ts-code-mode/langchain")).toMatch(/^framework loaded: (@langchain\/core\/tools|langchain)/);
    expect(await importWithGuard("ts-code-mode/ai")).toMatch(/^framework loaded: ai /);
  });

  it("an adapter whose framework is not installed names the package and the npm install line", async () => {
    // A project with ts-code-mode (a copy, so its imports resolve from here) and every other package, but no frameworks.
    const project = path.join(dir, "project");
    const modules = path.join(project, "node_modules");
    await mkdir(path.join(modules, "ts-code-mode"), { recursive: true });
    await cp(path.join(REPO, "dist"), path.join(modules, "ts-code-mode", "dist"), { recursive: true });
    await cp(path.join(REPO, "package.json"), path.join(modules, "ts-code-mode", "package.json"));
    for (const entry of await readdir(path.join(REPO, "node_modules"))) {
      if (entry.startsWith(".") || ["ai", "langchain", "@openai", "@langchain"].includes(entry)) continue;
      await symlink(path.join(REPO, "node_modules", entry), path.join(modules, entry));
    }
    const attempt = async (specifier: string) => {
      const script = `import(${JSON.stringify(specifier)}).then(() => console.log("loaded"), (e) => console.log(e.name + ": " + e.message));`;
      return (await exec(process.execPath, ["--input-type=module", "-e", script], { cwd: project, timeout: 60_000 })).stdout.trim();
    };
    expect(await attempt("ts-code-mode/openai-agents")).toBe(
      'MissingPeerError: ts-code-mode/openai-agents needs the package "@openai/agents", which is not installed. Install it next to ts-code-mode: npm install @openai/agents@^0.14.3',
    );
    expect(await attempt("ts-code-mode/langchain")).toMatch(/^MissingPeerError: ts-code-mode\/langchain needs the package "(@langchain\/core\/tools|langchain)".*npm install @langchain\/core@\^1\.4 langchain@\^1\.5$/);
    expect(await attempt("ts-code-mode/ai")).toBe('MissingPeerError: ts-code-mode/ai needs the package "ai", which is not installed. Install it next to ts-code-mode: npm install ai@^6');
    // The main entry still works there.
    expect(await attempt("ts-code-mode")).toBe("loaded");
  });
});

describe("loadPeer", () => {
  const peer = { name: "@langchain/core/tools", adapter: "ts-code-mode/langchain", install: "@langchain/core@^1.4" };
  const notFound = (what: string) => Object.assign(new Error(`Cannot find package '${what}' imported from /x/y.js`), { code: "ERR_MODULE_NOT_FOUND" });

  it("a missing package (by its package name) becomes a MissingPeerError with the install hint", async () => {
    const err = await loadPeer(peer, () => Promise.reject(notFound("@langchain/core"))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingPeerError);
    expect((err as Error).message).toContain("npm install @langchain/core@^1.4");
  });

  it("a package that is there but broken (one of ITS imports missing) is reported as it is, not as 'not installed'", async () => {
    const err = await loadPeer(peer, () => Promise.reject(notFound("zod-to-json-schema"))).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(MissingPeerError);
    expect((err as Error).message).toContain("zod-to-json-schema");
  });
});
