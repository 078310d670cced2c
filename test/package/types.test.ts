/**
 * The published declarations and module format as a consumer meets them (issue 41):
 * - every .d.ts reachable from the package's entry points imports only the package's dependencies:
 *   no optional peer (dockerode, whose types are the dev dependency @types/dockerode; the AI SDK;
 *   agent frameworks; Pyodide; the embedding model; TypeScript; ioredis) and no package it bundles
 *   instead of installing (the MCP SDK), so they compile without those installed;
 * - a consumer project with `skipLibCheck: false` and no extra @types compiles against them
 *   (`tsc --noEmit` on a copy of package.json + dist/ in its node_modules, the production
 *   dependencies linked beside it: no @types/dockerode anywhere on its resolution path);
 * - `require("ts-code-mode")` fails with one message saying the package is ESM only.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, REPO } from "../cli/harness.js";

const PKG = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  exports: Record<string, { types?: string; import?: string; require?: string }>;
};
/** What a core install has for certain: the package's dependencies (and Node's modules). */
const inACoreInstall = (spec: string): boolean =>
  spec.startsWith("node:") || Object.hasOwn(PKG.dependencies, spec.split("/").slice(0, spec.startsWith("@") ? 2 : 1).join("/"));
/** Entry points whose types a consumer that does not use agents' adapters meets. */
const ENTRIES = [".", "./mcp", "./toolable"];

/** The .d.ts files reachable from `roots` by relative imports, and the bare specifiers each imports. */
function reachable(roots: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const stack = [...roots];
  while (stack.length) {
    const file = stack.pop()!;
    if (out.has(file)) continue;
    const bare: string[] = [];
    out.set(file, bare);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"|\bimport\("([^"]+)"\)/gm)) {
      const spec = (m[1] ?? m[2])!;
      if (!spec.startsWith(".")) bare.push(spec);
      else {
        const target = path.resolve(path.dirname(file), spec.replace(/\.js$/, ".d.ts"));
        if (existsSync(target)) stack.push(target);
      }
    }
  }
  return out;
}

let consumer: string;

beforeAll(async () => {
  await ensureBuilt();
  consumer = await mkdtemp(path.join(os.tmpdir(), "tcm-types-consumer-"));
  const installed = path.join(consumer, "node_modules", "ts-code-mode");
  await mkdir(installed, { recursive: true });
  await cp(path.join(REPO, "package.json"), path.join(installed, "package.json"));
  await cp(path.join(REPO, "dist"), path.join(installed, "dist"), { recursive: true });
  // The production dependencies and @types/node (a consumer's own), linked from the repo's node_modules.
  for (const name of [...Object.keys(PKG.dependencies), "@types/node"]) {
    const link = path.join(consumer, "node_modules", name);
    await mkdir(path.dirname(link), { recursive: true });
    await symlink(path.join(REPO, "node_modules", name), link);
  }
  await writeFile(path.join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  await writeFile(
    path.join(consumer, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, module: "nodenext", moduleResolution: "nodenext", target: "es2022", types: ["node"] },
      files: ["index.ts"],
    }),
  );
  await writeFile(
    path.join(consumer, "index.ts"),
    [
      'import { Session, FileStorage, ContainerExecutor, pruneContainers, type AgentRuntimeOptions, type DockerodeClient } from "ts-code-mode";',
      'import * as mcp from "ts-code-mode/mcp";',
      'import * as toolable from "ts-code-mode/toolable";',
      "export const used = [Session, FileStorage, ContainerExecutor, pruneContainers, mcp, toolable];",
      "export type Used = [AgentRuntimeOptions, DockerodeClient];",
      "",
    ].join("\n"),
  );
}, 120_000);

afterAll(async () => {
  if (consumer) await rm(consumer, { recursive: true, force: true, maxRetries: 5 });
});

describe("published types and module format", () => {
  it("no declaration reachable from the entry points imports a package other than the dependencies (no optional peer, no bundled MCP SDK)", () => {
    const roots = ENTRIES.map((e) => path.join(REPO, PKG.exports[e]!.types!.replace(/^\.\//, "")));
    const offending: string[] = [];
    for (const [file, bare] of reachable(roots)) {
      for (const spec of bare) if (!inACoreInstall(spec)) offending.push(`${path.relative(REPO, file)} imports ${spec}`);
    }
    expect(offending).toEqual([]);
  });

  it("a consumer with skipLibCheck: false and no extra @types compiles against them", () => {
    expect(existsSync(path.join(consumer, "node_modules", "@types", "dockerode"))).toBe(false);
    const tsc = path.join(REPO, "node_modules", "typescript", "bin", "tsc");
    const r = spawnSync(process.execPath, [tsc, "-p", consumer], { cwd: consumer, encoding: "utf8", timeout: 600_000 });
    expect(`${r.stdout}${r.stderr}`).toBe("");
    expect(r.status).toBe(0);
  }, 620_000);

  it('require("ts-code-mode") (and its subpaths) says the package is ESM only, in one message', () => {
    for (const spec of ["ts-code-mode", "ts-code-mode/mcp"]) {
      const r = spawnSync(process.execPath, ["-e", `try { require(${JSON.stringify(spec)}) } catch (e) { console.log(e.code + " " + e.message) }`], { cwd: consumer, encoding: "utf8" });
      expect(r.stdout.trim()).toMatch(/^ERR_REQUIRE_ESM ts-code-mode is an ES module package \(ESM only\): use `import \{ Session \} from "ts-code-mode"`, or from CommonJS `const \{ Session \} = await import\("ts-code-mode"\)`/);
    }
    // import still works from CommonJS, as the message says.
    const imported = execFileSync(process.execPath, ["-e", 'import("ts-code-mode").then((m) => console.log(typeof m.Session))'], { cwd: consumer, encoding: "utf8" });
    expect(imported.trim()).toBe("function");
  });
});
