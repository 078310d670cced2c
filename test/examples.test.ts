/**
 * The shipped examples really work on this machine: every tool YAML in examples/tools loads, every
 * recipe of every tool runs the real command with a checked result, and every workflow in
 * examples/workflows is created through a session, invoked with sensible arguments, and the
 * artifact it saves can be loaded back.
 *
 * A guard test fails when an example is added without a case here.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, utimes, writeFile, mkdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../src/execution/in-process/executor.js";
import type { ExecutionError } from "../src/execution/protocol.js";
import { Session } from "../src/session.js";
import { FileStorage } from "../src/storage/file/storage.js";
import { ToolRegistry } from "../src/tools/registry.js";

const TOOLS_DIR = fileURLToPath(new URL("../examples/tools/", import.meta.url));
const WORKFLOWS_DIR = fileURLToPath(new URL("../examples/workflows/", import.meta.url));

const toolFiles = (await readdir(TOOLS_DIR)).filter((f) => /\.ya?ml$/.test(f)).sort();
const workflowFiles = (await readdir(WORKFLOWS_DIR)).filter((f) => f.endsWith(".ts")).sort();

let tmp: string;
let session: Session;

/** Files the recipes work on, created in beforeAll. */
const files = {
  dir: "",
  poem: "", // 3 lines, 9 words
  notes: "", // 2 lines
  code: "", // a .ts file in a subfolder
  older: "",
  newer: "",
};

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "tcm-examples-"));
  files.dir = path.join(tmp, "data");
  await mkdir(path.join(files.dir, "src"), { recursive: true });
  files.poem = path.join(files.dir, "poem.txt");
  files.notes = path.join(files.dir, "notes.md");
  files.code = path.join(files.dir, "src", "main.ts");
  await writeFile(files.poem, "roses are red\nViolets are blue\nfoo.bar is a regex trap\n");
  await writeFile(files.notes, "# Notes\nremember the red pen\n");
  await writeFile(files.code, "export const red = 1;\n// Red alert\n");
  files.older = path.join(tmp, "order", "older.txt");
  files.newer = path.join(tmp, "order", "newer.txt");
  await mkdir(path.dirname(files.older));
  await writeFile(files.older, "old\n");
  await writeFile(files.newer, "new\n");
  // Explicit modification times, so "newest first" has one right answer.
  await utimes(files.older, new Date("2020-01-01T00:00:00Z"), new Date("2020-01-01T00:00:00Z"));
  await utimes(files.newer, new Date("2024-01-01T00:00:00Z"), new Date("2024-01-01T00:00:00Z"));

  session = new Session({
    storage: new FileStorage({ basePath: path.join(tmp, "store") }),
    executor: new InProcessExecutor({ toolsPath: TOOLS_DIR, defaultTimeoutMs: 30_000 }),
  });
  await session.start();
});

afterAll(async () => {
  await session?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true, maxRetries: 5 });
});

/** Runs agent code that must succeed; returns its value. */
async function run(code: string): Promise<unknown> {
  const r = await session.run(code);
  expect(r.error, code).toBeNull();
  return r.value;
}

/** Runs agent code that must fail; returns the error. */
async function runFails(code: string): Promise<ExecutionError> {
  const r = await session.run(code);
  expect(r.ok, code).toBe(false);
  return r.error as ExecutionError;
}

const call = (tool: string, recipe: string, args: Record<string, unknown> = {}) =>
  run(`await tools.${tool}.${recipe}(${JSON.stringify(args)})`) as Promise<string>;

const lines = (text: string) => text.split("\n").filter((l) => l.length > 0);
const sha256 = async (file: string) => createHash("sha256").update(await readFile(file)).digest("hex");

describe("examples/tools", () => {
  it("every YAML file loads, one tool per file, named like the file", async () => {
    expect(toolFiles.length).toBeGreaterThanOrEqual(5);
    const registry = await ToolRegistry.load(TOOLS_DIR);
    try {
      expect(registry.names()).toEqual(toolFiles.map((f) => f.replace(/\.ya?ml$/, "")).sort());
      for (const tool of await registry.list()) {
        expect(tool.description, tool.name).not.toBe("");
        expect(tool.callables.length, tool.name).toBeGreaterThan(0);
        for (const c of tool.callables) expect(c.description, `${tool.name}.${c.name}`).not.toBe("");
      }
    } finally {
      await registry.close();
    }
  });

  it.each(toolFiles)("%s loads on its own", async (file) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-one-tool-"));
    try {
      await writeFile(path.join(dir, file), await readFile(path.join(TOOLS_DIR, file)));
      const registry = await ToolRegistry.load(dir);
      expect(registry.names()).toEqual([file.replace(/\.ya?ml$/, "")]);
      expect(await registry.describe(file.replace(/\.ya?ml$/, ""))).toContain("declare");
      await registry.close();
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  });

  /** One entry per recipe of every example tool: `tool.recipe` → a real call with a checked result. */
  const recipes: Record<string, () => Promise<void>> = {
    "date.iso": async () => {
      expect(await call("date", "iso", { date: "@0", utc: true })).toBe("1970-01-01T00:00:00+00:00\n");
      expect(await call("date", "iso")).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}\n$/);
    },
    "date.epoch": async () => {
      expect(await call("date", "epoch", { date: "@1700000000" })).toBe("1700000000\n");
      expect(await call("date", "epoch", { date: "2024-01-31 12:00 UTC" })).toBe("1706702400\n");
    },
    "date.format": async () => {
      expect(await call("date", "format", { format: "+%Y/%m/%d %H:%M", date: "@1706702400", utc: true })).toBe("2024/01/31 12:00\n");
    },
    "echo.say": async () => {
      expect(await call("echo", "say", { text: ["hello", "world"] })).toBe("hello world\n");
      // No shell: metacharacters are plain text.
      expect(await call("echo", "say", { text: ["$HOME", "; rm -rf /", "`id`"] })).toBe("$HOME ; rm -rf / `id`\n");
    },
    "echo.raw": async () => {
      expect(await call("echo", "raw", { text: ["a\\tb\\nc"] })).toBe("a\tb\nc");
    },
    "grep.search": async () => {
      expect(await call("grep", "search", { pattern: "red", paths: [files.poem] })).toBe("1:roses are red\n");
      expect(await call("grep", "search", { pattern: "violets", paths: [files.poem], ignore_case: true })).toBe("2:Violets are blue\n");
      expect(await call("grep", "search", { pattern: "foo.bar", paths: [files.poem], fixed_strings: true })).toBe("3:foo.bar is a regex trap\n");
      // grep exits 1 when nothing matches: an empty result, not an error.
      expect(await call("grep", "search", { pattern: "absent-word", paths: [files.poem] })).toBe("");
      // A pattern starting with '-' is a pattern, not an option.
      expect(await call("grep", "search", { pattern: "-v", paths: [files.poem] })).toBe("");
      const twoFiles = lines(await call("grep", "search", { pattern: "red", paths: [files.poem, files.notes] }));
      expect(twoFiles).toEqual([`${files.poem}:1:roses are red`, `${files.notes}:2:remember the red pen`]);
    },
    "grep.search_tree": async () => {
      const all = lines(await call("grep", "search_tree", { pattern: "red", paths: [files.dir], ignore_case: true })).sort();
      expect(all).toEqual(
        [`${files.code}:1:export const red = 1;`, `${files.code}:2:// Red alert`, `${files.notes}:2:remember the red pen`, `${files.poem}:1:roses are red`].sort(),
      );
      const onlyTs = lines(await call("grep", "search_tree", { pattern: "red", paths: [files.dir], include: ["*.ts"] }));
      expect(onlyTs).toEqual([`${files.code}:1:export const red = 1;`]);
    },
    "grep.files_containing": async () => {
      const found = lines(await call("grep", "files_containing", { pattern: "red", paths: [files.dir] })).sort();
      expect(found).toEqual([files.code, files.notes, files.poem].sort());
      expect(lines(await call("grep", "files_containing", { pattern: "red", paths: [files.dir], include: ["*.md"] }))).toEqual([files.notes]);
    },
    "ls.names": async () => {
      const names = lines(await call("ls", "names", { paths: [files.dir] }));
      expect(names.sort()).toEqual([".", "..", "notes.md", "poem.txt", "src"]);
    },
    "ls.details": async () => {
      const out = await call("ls", "details", { paths: [files.dir] });
      expect(out).toMatch(/^total /);
      expect(out).toMatch(/^-.*poem\.txt$/m);
      expect(out).toMatch(/^d.*src$/m);
    },
    "ls.newest": async () => {
      const dir = path.dirname(files.older);
      expect(lines(await call("ls", "newest", { paths: [dir] }))).toEqual(["newer.txt", "older.txt"]);
      expect(lines(await call("ls", "newest", { paths: [dir], reverse: true }))).toEqual(["older.txt", "newer.txt"]);
    },
    "sha256sum.hash": async () => {
      const out = await call("sha256sum", "hash", { files: [files.poem, files.notes] });
      expect(lines(out)).toEqual([`${await sha256(files.poem)}  ${files.poem}`, `${await sha256(files.notes)}  ${files.notes}`]);
    },
    "sha256sum.verify": async () => {
      const good = path.join(tmp, "good.sha256");
      await writeFile(good, `${await sha256(files.poem)}  ${files.poem}\n`);
      expect(await call("sha256sum", "verify", { files: [good] })).toBe(`${files.poem}: OK\n`);
      const bad = path.join(tmp, "bad.sha256");
      await writeFile(bad, `${"0".repeat(64)}  ${files.poem}\n`);
      const e = await runFails(`await tools.sha256sum.verify(${JSON.stringify({ files: [bad] })})`);
      expect(e.name).toBe("ToolError");
      expect(e.message).toMatch(/exited with code 1/);
    },
    "uname.all": async () => {
      const out = await call("uname", "all");
      expect(out.startsWith(`${os.type()} `)).toBe(true);
      expect(out).toContain(os.release());
      expect(out).toContain(os.machine());
    },
    "uname.kernel": async () => {
      expect(await call("uname", "kernel")).toBe(`${os.type()} ${os.release()}\n`);
    },
    "uname.machine": async () => {
      expect(await call("uname", "machine")).toBe(`${os.machine()}\n`);
    },
    "wc.lines": async () => {
      expect(await call("wc", "lines", { files: [files.poem] })).toBe(`3 ${files.poem}\n`);
      const both = lines(await call("wc", "lines", { files: [files.poem, files.notes] })).map((l) => l.trim().split(/\s+/));
      expect(both).toEqual([
        ["3", files.poem],
        ["2", files.notes],
        ["5", "total"],
      ]);
    },
    "wc.words": async () => {
      expect(await call("wc", "words", { files: [files.poem] })).toBe(`11 ${files.poem}\n`);
    },
  };

  it("every recipe of every example tool has a case here", async () => {
    const listed = (await session.listTools()).flatMap((t) => t.callables.map((c) => `${t.name}.${c.name}`));
    expect(Object.keys(recipes).sort()).toEqual(listed.sort());
  });

  it.each(Object.keys(recipes))("%s runs the real command", async (key) => {
    await recipes[key]?.();
  });

  it("each tool's escape hatch runs the command with any schema option", async () => {
    expect(await run('await tools.echo({ text: ["hatch"], no_newline: true })')).toBe("hatch");
    expect(await run(`await tools.wc({ files: [${JSON.stringify(files.poem)}], bytes: true })`)).toBe(
      `${(await readFile(files.poem)).length} ${files.poem}\n`,
    );
    expect(await run(`await tools.grep({ pattern: "blue", paths: [${JSON.stringify(files.poem)}], count: true })`)).toBe("1\n");
    expect(await run(`await tools.ls({ paths: [${JSON.stringify(files.poem)}] })`)).toBe(`${files.poem}\n`);
  });
});

describe("examples/workflows", () => {
  beforeAll(async () => {
    for (const file of workflowFiles) {
      const source = await readFile(path.join(WORKFLOWS_DIR, file), "utf8");
      await session.addWorkflow({ name: file.replace(/\.ts$/, ""), source });
    }
  });

  /** One entry per example workflow: invoke it through the session and check what it returned and saved. */
  const workflows: Record<string, () => Promise<void>> = {
    count_lines: async () => {
      const result = await run(`await workflows.count_lines({ files: ${JSON.stringify([files.poem, files.notes])} })`);
      const expected = { total: 5, counts: { [files.poem]: 3, [files.notes]: 2 } };
      expect(result).toEqual(expected);
      expect(await session.loadArtifact("reports/line-counts.json")).toEqual(expected);
      expect((await run("(await artifacts.get('reports/line-counts.json')).description")) as string).toMatch(/2 file/);

      // One file (wc prints no total line), saved under a custom name.
      const one = await run(`await workflows.count_lines({ files: [${JSON.stringify(files.poem)}], save_as: "reports/poem.json" })`);
      expect(one).toEqual({ total: 3, counts: { [files.poem]: 3 } });
      expect(await run("await artifacts.load('reports/poem.json')")).toEqual(one);

      // An empty save_as saves nothing.
      const before = (await session.listArtifacts()).map((a) => `${a.name} ${a.updatedAt}`);
      expect(await run(`await workflows.count_lines({ files: [${JSON.stringify(files.notes)}], save_as: "" })`)).toEqual({ total: 2, counts: { [files.notes]: 2 } });
      expect((await session.listArtifacts()).map((a) => `${a.name} ${a.updatedAt}`)).toEqual(before);
    },
    system_report: async () => {
      const report = (await run("await workflows.system_report({})")) as { kernel: string; machine: string; checkedAt: string };
      expect(report.kernel).toBe(`${os.type()} ${os.release()}`);
      expect(report.machine).toBe(os.machine());
      expect(report.checkedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
      expect(Number.isNaN(Date.parse(report.checkedAt))).toBe(false);
      expect(await session.loadArtifact("reports/system.json")).toEqual(report);
      const custom = await run("await workflows.invoke('system_report', { save_as: 'reports/custom-system.json' })");
      expect(await session.loadArtifact("reports/custom-system.json")).toEqual(custom);
    },
    triple: async () => {
      expect(await run("await workflows.triple({ n: 14 })")).toBe(42);
      expect(await run("await workflows.invoke('triple', { n: -2.5 })")).toBe(-7.5);
      const missing = await runFails("await workflows.triple({})");
      expect(missing.message).toMatch(/n: number/);
    },
  };

  it("every example workflow has a case here", () => {
    expect(Object.keys(workflows).sort()).toEqual(workflowFiles.map((f) => f.replace(/\.ts$/, "")));
  });

  it("each example is listed with its description and parameters", async () => {
    const listed = await session.listWorkflows();
    expect(listed.map((w) => w.name)).toEqual(workflowFiles.map((f) => f.replace(/\.ts$/, "")));
    for (const w of listed) expect(w.description, w.name).not.toBe("");
    expect(listed.find((w) => w.name === "count_lines")?.params.map((p) => [p.name, p.required])).toEqual([
      ["files", true],
      ["save_as", false],
    ]);
  });

  it.each(Object.keys(workflows))("%s runs and its result (and saved artifact) is right", async (name) => {
    await workflows[name]?.();
  });

  it("search finds the examples by meaning", async () => {
    expect((await session.searchWorkflows("count lines in files"))[0]?.name).toBe("count_lines");
    expect((await session.searchWorkflows("kernel architecture report"))[0]?.name).toBe("system_report");
  });
});
