/**
 * Commands do what they say (issue 14): read-only commands leave a missing --base alone and warn,
 * `~` in a path flag means the home folder, empty code and unusable bases are one-line errors,
 * and `deps` refuses URLs before announcing an install and shows npm's error once.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, symlink, writeFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { connectStdio, runCli } from "../mcp/harness.js";
import { cleanup, cli, ensureBuilt, tempDir } from "./harness.js";

let dir: string;

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await cleanup(dir);
});

const STACK_LINE = /^\s+at /m;
const lines = (text: string) => text.trimEnd().split("\n");

describe("read-only commands and a missing --base", () => {
  for (const args of [["tools", "list"], ["workflows", "list"], ["workflows", "search", "count"], ["tools", "list", "--json"]]) {
    it(`${args.join(" ")} warns and creates nothing`, async () => {
      const r = await cli([...args, "--base", "missing/base"], { cwd: dir });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/^warning: .*missing\/base does not exist/);
      expect(await readdir(dir)).toEqual([]);
    });
  }

  it("tools list with --tools only does not create the default ./.code-mode", async () => {
    await mkdir(path.join(dir, "tools"));
    const r = await cli(["tools", "list", "--tools", "tools"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(existsSync(path.join(dir, ".code-mode"))).toBe(false);
  });

  it("mcp on a missing base says so and that it serves no tools, and leaves no folder behind", async () => {
    const conn = await connectStdio(["--base", "missing"], { cwd: dir });
    try {
      const { tools } = await conn.client.listTools();
      expect(tools.map((t) => t.name)).toContain("run_code");
    } finally {
      await conn.close();
    }
    expect(conn.stderr()).toMatch(/warning: .*missing does not exist/);
    expect(conn.stderr()).toMatch(/warning: no tools loaded/);
    expect(existsSync(path.join(dir, "missing"))).toBe(false);
  });

  it("run creates its base only when the code saved something there (issue 41)", async () => {
    expect((await cli(["run", "--base", "made", "1"], { cwd: dir })).code).toBe(0);
    expect(existsSync(path.join(dir, "made"))).toBe(false);
    const saved = await cli(["run", "--base", "made", 'await artifacts.save("a.txt", "x")'], { cwd: dir });
    expect(saved.code).toBe(0);
    expect(existsSync(path.join(dir, "made", "artifacts"))).toBe(true);
  });
});

describe("one bad entry never fails a listing (issue 41)", () => {
  it("workflows list and artifacts list show the others and name the unreadable one with the reason", async () => {
    const base = path.join(dir, "b");
    const saved = await cli(["run", "--base", base, 'await artifacts.save("ok.txt", "fine"); await workflows.create({ name: "good", source: "export async function run() { return 1; }" })'], { cwd: dir });
    expect(saved.code).toBe(0);
    // As root EACCES cannot be produced; a symlink loop is the same path (an fs error on one file).
    await symlink("bad.ts", path.join(base, "workflows", "bad.ts"));
    await symlink("bad.txt", path.join(base, "artifacts", "bad.txt"));

    const wf = await cli(["workflows", "list", "--base", base], { cwd: dir });
    expect(wf.code).toBe(0);
    expect(wf.stdout).toMatch(/^good\b/m);
    expect(wf.stderr).toMatch(/^warning: workflow file bad\.ts is not offered: cannot be read \(ELOOP\)/m);
    expect(wf.stderr).not.toMatch(STACK_LINE);

    const art = await cli(["artifacts", "list", "--base", base, "--json"], { cwd: dir });
    expect(art.code).toBe(0);
    expect((JSON.parse(art.stdout) as Array<{ name: string }>).map((a) => a.name)).toEqual(["ok.txt"]);
    expect(art.stderr).toMatch(/^warning: artifact bad\.txt is not listed: cannot be read \(ELOOP\)/m);
    expect(art.stderr).not.toMatch(STACK_LINE);
    const text = await cli(["artifacts", "list", "--base", base], { cwd: dir });
    expect(lines(text.stdout)).toEqual([expect.stringMatching(/^ARTIFACT\s+KIND\s+BYTES\s+DESCRIPTION/), expect.stringMatching(/^ok\.txt\s+text\s+4\b/)]);
  });
});

describe("container commands with no engine (issue 41)", () => {
  for (const args of [["containers", "prune"], ["containers", "prune", "--all", "--json"], ["image", "build"]]) {
    it(`${args.join(" ")} prints one line with the fix and exits 1, no stack`, async () => {
      const socket = path.join(dir, "no-engine.sock");
      const r = await runCli(args, { cwd: dir, env: { ...process.env, DOCKER_HOST: `unix://${socket}` }, timeoutMs: 60_000 });
      expect(r.code).toBe(1);
      const errors = lines(r.stderr).filter((l) => l.startsWith("error: "));
      expect(errors).toEqual([expect.stringMatching(/^error: the container engine at unix:\/\/.*no-engine\.sock is not reachable \(ENOENT: no socket there\); start it \(podman: .*\) or point DOCKER_HOST/)]);
      expect(r.stderr).not.toMatch(STACK_LINE);
    });
  }
});

describe("an integration package that is not installed (issue 41)", () => {
  it("containers prune without dockerode says which package to install, in one line", async () => {
    // Node's own resolve hook makes "dockerode" missing, exactly as in a core install without it.
    const hook = path.join(dir, "hide-dockerode.mjs");
    const resolver = `export async function resolve(s, c, next) { if (s === "dockerode") { const e = new Error("Cannot find package 'dockerode' imported from " + c.parentURL); e.code = "ERR_MODULE_NOT_FOUND"; throw e; } return next(s, c); }`;
    await writeFile(hook, `import { register } from "node:module";\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(resolver)}`)});\n`);
    const r = await runCli(["containers", "prune"], { cwd: dir, env: { ...process.env, NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` }, timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    expect(lines(r.stderr).filter((l) => l.startsWith("error: "))).toEqual([
      'error: the container executor (--executor container, containers prune, image build) needs the package "dockerode", which is not installed. Install it next to ts-code-mode: npm install dockerode@^5.0.1',
    ]);
    expect(r.stderr).not.toMatch(STACK_LINE);
  });
});

describe("~ in path flags", () => {
  it("--base '~/x' means the home folder, never a folder named ~", async () => {
    const home = path.join(dir, "home");
    await mkdir(home);
    const cwd = path.join(dir, "work");
    await mkdir(cwd);
    const r = await runCli(["init", "--base", "~/x"], { cwd, env: { ...process.env, HOME: home } });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(home, "x", "tools"))).toBe(true);
    expect(await readdir(cwd)).toEqual([]);
  });

  it("~user/… is refused as a usage error", async () => {
    const r = await cli(["workflows", "list", "--base", "~bob/x"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(["error: --base ~bob/x: only ~ and ~/… (your home folder) are expanded; give the full path"]);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("one-line errors", () => {
  it("run '' is a usage error", async () => {
    const r = await cli(["run", ""], { cwd: dir });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(["error: no code given: the code argument is empty"]);
  });

  it("init --base on a file says so in one line", async () => {
    for (const base of ["/etc/passwd", "/etc/passwd/x"]) {
      const r = await cli(["init", "--base", base], { cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stderr).not.toMatch(STACK_LINE);
      expect(lines(r.stderr)).toEqual([`error: cannot set up ${base}: /etc/passwd is a file, not a folder`]);
    }
  });
});

describe("deps", () => {
  it("refuses a URL as a URL, without an 'installing' line", async () => {
    const r = await cli(["deps", "add", "https://example.com/pkg.tgz", "--base", "b"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/^error: URLs and git specs are not allowed/);
    expect(r.stderr).not.toContain("installing");
    expect(r.stderr).not.toContain("Local paths");
  });

  it("shows npm's 404 once", async () => {
    const r = await cli(["deps", "add", "ts-code-mode-no-such-package-4ab9c1", "--base", "b"], { cwd: dir, timeoutMs: 120_000 });
    expect(r.code).toBe(1);
    const all = r.stdout + r.stderr;
    expect(all.match(/404 Not Found/g)).toHaveLength(1);
    expect(r.stdout).toContain("FAILED ts-code-mode-no-such-package-4ab9c1");
  }, 150_000);

  it("help: remove offers no --allow-scripts; list --json explains configured", async () => {
    const remove = await cli(["deps", "remove", "--help"], { cwd: dir });
    expect(remove.stdout).not.toContain("--allow-scripts");
    const list = await cli(["deps", "list", "--help"], { cwd: dir });
    expect(list.stdout.replace(/\s+/g, " ")).toContain("configured: set by the operator's configuration");
  });
});

describe("help texts say what is true", () => {
  it("mcp --help names TS_CODE_MODE_TOKEN once, and its Claude Code line works from a clone", async () => {
    const r = await cli(["mcp", "--help"], { cwd: dir });
    expect(r.stdout.match(/TS_CODE_MODE_TOKEN/g)).toHaveLength(1);
    expect(r.stdout).not.toContain("npx ts-code-mode");
    expect(r.stdout).toContain("node /abs/path/to/ts-code-mode/dist/cli/main.js mcp");
  });

  it("store list/diff describe --type as the kind of entries, not 'what to copy'", async () => {
    for (const sub of ["list", "diff", "pull"]) {
      const r = await cli(["store", sub, "--help"], { cwd: dir });
      expect(r.stdout).not.toContain("what to copy");
      expect(r.stdout).toContain("which kind of entries");
    }
  });

  it("the top-level help does not claim every command takes --base", async () => {
    const r = await cli(["--help"], { cwd: dir });
    expect(r.stdout).not.toMatch(/every command takes --base/i);
    const store = await cli(["store", "list", "--help"], { cwd: dir });
    expect(store.stdout).not.toContain("--base");
  });
});
