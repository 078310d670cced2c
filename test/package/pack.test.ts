/**
 * The package as users get it: `npm pack` from a clean copy of the project (tracked files only)
 * with the dist `npm run build` made, installed from the tarball into an empty folder with
 * `npm install`, then its bin run the way a user runs it: --version, init, run, and `mcp` answering
 * tools/list over stdio.
 *
 * The copy is packed with --ignore-scripts and the repository's dist rather than letting `prepack`
 * build a second dist from the same sources (a whole tsc + bundle run: most of this file's time on
 * a loaded CI machine). That dist is the one CI's `npm test` builds in its fresh clone first, so the
 * tarball is the same; what `prepack` adds (removing dist first, then `npm run build`) is checked
 * below from package.json.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DOC_FIGURES_RE, INSTALL_DOC, installTarball, measureInstall } from "../../scripts/install-size.mjs";
import { ensureBuilt, REPO } from "../cli/harness.js";
import { connectStdio } from "../mcp/harness.js";

const MINUTES = 60_000;
let tmp: string;
let app: string;
let bin: string;
let installed: string;
let packed: string[];
let tarball: string;

function sh(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_update_notifier: "false" } });
}

/** The project's files as a clone has them: tracked and new-but-not-ignored files, no dist/node_modules. */
async function cleanCopy(to: string): Promise<void> {
  const files = sh("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], REPO).split("\0").filter(Boolean);
  for (const file of files) {
    const from = path.join(REPO, file);
    await mkdir(path.dirname(path.join(to, file)), { recursive: true });
    // A tracked file deleted in the working tree is not part of the copy.
    await cp(from, path.join(to, file)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
    });
  }
  // The build tools only; `npm ci` would give the same.
  await symlink(path.join(REPO, "node_modules"), path.join(to, "node_modules"));
  // What `npm run build` made (ensureBuilt rebuilds it when a source file is newer).
  await cp(path.join(REPO, "dist"), path.join(to, "dist"), { recursive: true });
}

beforeAll(async () => {
  await ensureBuilt();
  tmp = await mkdtemp(path.join(os.tmpdir(), "tcm-pack-"));
  const clone = path.join(tmp, "clone");
  await cleanCopy(clone);
  const report = JSON.parse(sh("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", tmp], clone)) as { filename: string; files: { path: string }[] }[];
  tarball = path.join(tmp, report[0]!.filename);
  packed = report[0]!.files.map((f) => f.path);
  // Installed the way scripts/install-size.mjs installs what it measures (the figures docs/install.md quotes).
  app = installTarball(tarball, tmp);
  installed = path.join(app, "node_modules", "ts-code-mode");
  bin = path.join(app, "node_modules", ".bin", "ts-code-mode");
}, 10 * MINUTES);

afterAll(async () => {
  // Retries: a server a test started may still be writing under app/ as it exits (ENOTEMPTY under load).
  if (tmp) await rm(tmp, { recursive: true, force: true, maxRetries: 5 });
});

function runBin(args: string[]) {
  // The bin itself (shebang + executable bit), not `node dist/cli/main.js`.
  return spawnSync(bin, args, { cwd: app, encoding: "utf8", timeout: 60_000 });
}

describe("npm pack + install from the tarball", () => {
  it("packing builds dist from scratch: prepack removes dist, then runs `npm run build` (the build CI runs first)", async () => {
    const { scripts } = JSON.parse(await readFile(path.join(REPO, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(scripts["prepack"]).toBe(`node -e "require('node:fs').rmSync('dist',{recursive:true,force:true})" && npm run build`);
    expect(scripts["build"]).toMatch(/^tsc -p tsconfig\.build\.json && .* && node scripts\/bundle\.mjs && chmod \+x dist\/cli\/main\.js$/);
  });

  it("ships the built dist, the LICENSE and no test or source folders", async () => {
    expect(packed).toContain("dist/cli/main.js");
    expect(packed).toContain("dist/index.js");
    expect(packed).toContain("dist/index.d.ts");
    expect(packed).toContain("LICENSE");
    expect(packed.some((f) => f.startsWith("test/") || f.startsWith("src/"))).toBe(false);
    expect(await readFile(path.join(installed, "LICENSE"), "utf8")).toMatch(/^MIT License[\s\S]*ts-code-mode contributors/);
  });

  it("ships no source maps: the code that runs is the bundles (dist/_proc, dist/_chunks and the entries), which have none, and tsc's maps only describe modules that do not run", async () => {
    expect(packed.filter((f) => f.endsWith(".map"))).toEqual([]);
    // The bundles carry no sourceMappingURL that would point at a missing map.
    for (const entry of ["dist/index.js", "dist/cli/main.js"]) expect(await readFile(path.join(installed, entry), "utf8")).not.toMatch(/sourceMappingURL/);
  });

  it("runs the bin: --version, init, run", () => {
    const version = runBin(["--version"]);
    expect(version.stderr).toBe("");
    expect(version.stdout.trim()).toBe(JSON.parse(sh("node", ["-p", "JSON.stringify(require('./package.json').version)"], REPO)) as string);

    const init = runBin(["init", "--base", "./b"]);
    expect(init.status, init.stderr).toBe(0);

    const run = runBin(["run", "--base", "./b", "const n = 20; n + 22"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe("42");
  }, 5 * MINUTES);

  it("leaves out tsc's modules the bundles replaced, and what runs by path still runs: a TypeScript toolable tool through the loader hook, the sandbox, a Python guest", async () => {
    expect(packed).not.toContain("dist/tools/registry.js");
    expect(packed).toContain("dist/toolable/ts-hook.js");
    await cp(path.join(installed, "examples", "toolable"), path.join(app, "b", "tools"), { recursive: true });
    const notes = runBin(["run", "--base", "./b", "(await tools.notes.count({})).counted"]);
    expect(notes.status, notes.stderr).toBe(0);
    expect(notes.stdout.trim()).toBe("3");
    const sandbox = runBin(["run", "--base", "./b", "--executor", "sandbox", "await workflows.triple({ n: 2 })"]);
    expect(sandbox.status, sandbox.stderr).toBe(0);
    expect(sandbox.stdout.trim()).toBe("6");
    const python = runBin(["run", "--base", "./b", "--language", "python", "sum([1, 2, 3])"]);
    expect(python.status, python.stderr).toBe(0);
    expect(python.stdout.trim()).toBe("6");
  }, 5 * MINUTES);

  it("is a light core: at most 40 MiB and the figures docs/install.md quotes (node scripts/install-size.mjs --write-docs); no MCP SDK installed, its notice shipped", async () => {
    const m = measureInstall(app);
    expect(m.kib, `largest: ${JSON.stringify(m.largest.slice(0, 10))}`).toBeLessThanOrEqual(40 * 1024);
    const quoted = DOC_FIGURES_RE.exec(await readFile(INSTALL_DOC, "utf8"));
    expect(quoted, "docs/install.md quotes the install's figures").not.toBeNull();
    // The package count is exact; the size may drift by a dependency's patch release.
    expect(Number(quoted![1]), "run node scripts/install-size.mjs --write-docs").toBe(m.packages);
    expect(Math.abs(Number(quoted![2]) - m.kib / 1024), "run node scripts/install-size.mjs --write-docs").toBeLessThanOrEqual(1);
    // The MCP SDK is bundled (scripts/bundle.mjs), not installed; its licence travels with it.
    expect(m.largest.map((p) => p.name)).not.toContain("@modelcontextprotocol/sdk");
    expect(packed).toContain("dist/THIRD_PARTY_NOTICES.md");
    expect(await readFile(path.join(installed, "dist", "THIRD_PARTY_NOTICES.md"), "utf8")).toMatch(/## @modelcontextprotocol\/sdk [\d.]+ \(MIT\)\n\n {4}MIT License/);
    // The script docs/install.md names reports the same figures: it installs with installTarball, as
    // beforeAll did, so it measures that install (--installed) rather than a second npm install of
    // the same tarball (tens of seconds on a loaded machine).
    const script = sh(process.execPath, [path.join(REPO, "scripts", "install-size.mjs"), "--installed", app, "--top", "3"], tmp).split("\n");
    expect(script[0]).toMatch(new RegExp(`^${m.packages} packages, \\d+\\.\\d MiB \\(du -sk node_modules: \\d+ KiB\\)$`));
    expect(script[1]).toMatch(/^ +\d+ KiB {2}\S+$/);
  }, 5 * MINUTES);

  it("a `type: mcp` tool works from the installed package alone (the bundled MCP client and stdio transport), here its own `mcp` server", async () => {
    expect(runBin(["init", "--base", "./inner"]).status).toBe(0);
    await writeFile(
      path.join(app, "b", "tools", "inner.yaml"),
      [
        "name: inner",
        "type: mcp",
        "description: ts-code-mode's own MCP server",
        `command: ${JSON.stringify(process.execPath)}`,
        `args: [${JSON.stringify(path.join(installed, "dist", "cli", "main.js"))}, mcp, --base, ${JSON.stringify(path.join(app, "inner"))}]`,
        "",
      ].join("\n"),
    );
    const r = runBin(["run", "--base", "./b", 'JSON.stringify(await tools.inner.run_code({ code: "20 + 22" }))']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("42");
  }, 5 * MINUTES);

  it("serves MCP over stdio: tools/list answers with run_code", async () => {
    const conn = await connectStdio([], { cwd: app, command: bin, fullArgs: ["mcp", "--base", "./b"] });
    try {
      const { tools } = await conn.client.listTools();
      expect(tools.map((t) => t.name)).toContain("run_code");
    } finally {
      await conn.close();
    }
  }, 5 * MINUTES);
});
