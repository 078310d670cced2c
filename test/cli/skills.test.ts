/** `ts-code-mode skills list|show|validate|catalog|add|remove` (the built command) on real folders. */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { validate as referenceValidate } from "skills-ref";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, REPO, tempDir } from "./harness.js";
import { markedShellBlock, runDocShell } from "../helpers/docs.js";

const EXAMPLES = path.join(REPO, "examples/skills");
let dir: string;
beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => cleanup(dir));
const run = (...args: string[]) => cli(["skills", ...args, "--base", path.join(dir, "base")], { cwd: dir });

describe("ts-code-mode skills", () => {
  it("add validates and copies a skill; list, show and catalog read it; remove deletes it", async () => {
    expect((await run("list")).stdout).toMatch(/^No skills\./);
    const added = await run("add", path.join(EXAMPLES, "csv-summary"), "--json");
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ name: "csv-summary", location: path.join(dir, "base/skills/csv-summary/SKILL.md") });
    expect((await run("add", path.join(EXAMPLES, "commit-message"))).code).toBe(0);

    const list = await run("list", "--json");
    expect((JSON.parse(list.stdout) as Array<{ name: string }>).map((s) => s.name)).toEqual(["commit-message", "csv-summary"]);
    const show = await run("show", "csv-summary", "--json");
    expect(JSON.parse(show.stdout)).toMatchObject({ name: "csv-summary", resources: ["references/columns.md", "scripts/summary.py"], trust: "trusted" });
    const catalog = await run("catalog");
    expect(catalog.stdout).toMatch(/^<available_skills>\n<skill>\n<name>\ncommit-message\n<\/name>/);
    expect((await run("catalog", "--format", "markdown")).stdout).toMatch(/^## Available skills/);

    expect((await run("remove", "commit-message", "--json")).stdout).toContain('"removed": true');
    const again = await run("remove", "commit-message");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('No skill named "commit-message"');
  });

  it("validate lists every problem of every folder (as skills-ref does) and exits 1", async () => {
    const bad = path.join(dir, "skills", "Bad_Skill");
    await mkdir(bad, { recursive: true });
    await writeFile(path.join(bad, "SKILL.md"), "---\nname: x\nfoo: 1\n---\nbody\n");
    const r = await cli(["skills", "validate", path.join(dir, "skills"), "--json"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual([{ folder: bad, problems: await referenceValidate(bad) }]);
    expect((JSON.parse(r.stdout) as Array<{ problems: string[] }>)[0]?.problems).toHaveLength(3);
    const text = await cli(["skills", "validate", bad], { cwd: dir });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("  - Missing required field in frontmatter: description");
    const good = await cli(["skills", "validate", EXAMPLES], { cwd: dir });
    expect(good.code).toBe(0);
    expect(good.stdout).toBe(`ok: ${path.join(EXAMPLES, "commit-message")}\nok: ${path.join(EXAMPLES, "csv-summary")}\n`);
  });

  it("add refuses an invalid skill, listing the problems, and writes nothing", async () => {
    const bad = path.join(dir, "bad-skill");
    await mkdir(bad, { recursive: true });
    await writeFile(path.join(bad, "SKILL.md"), "---\nname: other\n---\n");
    const r = await run("add", bad);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Directory name 'bad-skill' must match skill name 'other'");
    expect((await run("list", "--json")).stdout.trim()).toBe("[]");
  });

  it("--root and --discover add read-only folders; a later one wins and the clash is a warning", async () => {
    const md = (d: string) => `---\nname: shared\ndescription: ${d}\n---\nbody\n`;
    await mkdir(path.join(dir, ".agents/skills/shared"), { recursive: true });
    await writeFile(path.join(dir, ".agents/skills/shared/SKILL.md"), md("From agents."));
    await mkdir(path.join(dir, ".claude/skills/shared"), { recursive: true });
    await writeFile(path.join(dir, ".claude/skills/shared/SKILL.md"), md("From claude."));
    const r = await run("list", "--discover", "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject([{ name: "shared", description: "From claude.", source: path.join(dir, ".claude/skills") }]);
    expect(r.stderr).toContain(`skill "shared" of ${path.join(dir, ".claude/skills")} hides the one of ${path.join(dir, ".agents/skills")}`);
    expect((await run("list", "--json")).stdout.trim()).toBe("[]");
  });
});

describe("init installs the example skills (the walk-through of docs/skills.md)", () => {
  it("the walk-through of docs/skills.md, as written: init, list, validate, then the script counts the CSV's rows", async () => {
    const walk = await markedShellBlock("docs/skills.md", "test/cli/skills.test.ts");
    const cwd = path.join(dir, "walk-through");
    await mkdir(cwd);
    const r = await runDocShell(walk, { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^SKILL +DESCRIPTION +SOURCE$/m);
    expect(r.stdout).toMatch(/^csv-summary +Summarise a CSV/m);
    expect(r.stdout).toContain(`ok: ${path.join(cwd, "demo/skills/csv-summary")}`);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("2");
  });


  it("init, skills list, then an agent's run: load the instructions and run the script on a CSV", async () => {
    const base = path.join(dir, "demo");
    const init = await cli(["init", "--base", base, "--json"], { cwd: dir });
    expect(init.code).toBe(0);
    expect(JSON.parse(init.stdout)).toMatchObject({ skills: [{ name: "commit-message", outcome: "created" }, { name: "csv-summary", outcome: "created" }] });
    expect((await cli(["init", "--base", base, "--json"], { cwd: dir })).stdout).toContain('"outcome": "kept"');
    await writeFile(path.join(dir, "sales.csv"), "region,units\nnorth,10\nsouth,30\n");
    const code = [
      "const skill = await skills.load('csv-summary');",
      "const out = JSON.parse(await skills.run('csv-summary', 'scripts/summary.py', ['sales.csv']));",
      "({ steps: skill.body.split('\\n').filter((l) => /^\\d\\./.test(l)).length, rows: out.rows, units: out.numeric.units })",
    ].join("\n");
    const r = await cli(["run", "--base", base, "--executor", "subprocess", "--json", code], { cwd: dir });
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, value: { steps: 4, rows: 2, units: { min: 10, max: 30, mean: 20 } } });
    const sandbox = await cli(["run", "--base", base, "--executor", "sandbox", "--json", "await skills.run('csv-summary', 'scripts/summary.py', ['sales.csv'])"], { cwd: dir });
    expect(JSON.parse(sandbox.stdout)).toMatchObject({ ok: false, error: { name: "ValidationError", message: expect.stringMatching(/^skills\.run: this sandbox executor cannot run commands/) } });
  });
});

describe("ts-code-mode store --type skills (real redis-server)", () => {
  it("bootstrap copies valid skill folders (bytes intact), list/diff see them, pull writes them back", async () => {
    const { startRedis, uniquePrefix, deleteKeys } = await import("../helpers/redis.js");
    const { RedisStorage } = await import("../../src/storage/redis/storage.js");
    const server = await startRedis();
    const prefix = uniquePrefix("skills");
    try {
      const source = path.join(dir, "src");
      const { cp } = await import("node:fs/promises");
      await cp(EXAMPLES, path.join(source, "skills"), { recursive: true });
      await mkdir(path.join(source, "skills/csv-summary/assets"), { recursive: true });
      await writeFile(path.join(source, "skills/csv-summary/assets/all.bin"), Uint8Array.from({ length: 256 }, (_, i) => i));
      await mkdir(path.join(source, "skills/broken"), { recursive: true });
      await writeFile(path.join(source, "skills/broken/SKILL.md"), "no frontmatter\n");
      const store = (...args: string[]) => cli(["store", ...args, "--target", server.url, "--prefix", prefix, "--type", "skills"], { cwd: dir });

      const boot = await store("bootstrap", "--source", source, "--json");
      expect(boot.code).toBe(0);
      expect(JSON.parse(boot.stdout)).toMatchObject({ written: ["commit-message", "csv-summary"], warnings: [expect.stringMatching(/^broken: skipped: SKILL.md must start/)] });
      const listed = JSON.parse((await store("list", "--json")).stdout) as Array<{ name: string; files: number }>;
      expect(listed.map((s) => [s.name, s.files])).toEqual([["commit-message", 1], ["csv-summary", 4]]);
      const redis = new RedisStorage({ url: server.url, prefix });
      expect(Array.from((await redis.skills.read("csv-summary", "assets/all.bin")) ?? [])).toEqual(Array.from({ length: 256 }, (_, i) => i));
      await redis.close();

      await writeFile(path.join(source, "skills/commit-message/SKILL.md"), "---\nname: commit-message\ndescription: Changed.\n---\nx\n");
      const d = JSON.parse((await store("diff", "--source", source, "--json")).stdout) as Array<{ name: string; status: string }>;
      expect(d).toEqual(expect.arrayContaining([{ name: "commit-message", status: "~" }, { name: "csv-summary", status: "=" }]));

      const pulled = await store("pull", "--dest", path.join(dir, "out"), "--json");
      expect(pulled.code).toBe(0);
      expect(await referenceValidate(path.join(dir, "out/skills/csv-summary"))).toEqual([]);
      const again = JSON.parse((await store("pull", "--dest", path.join(dir, "out"), "--json")).stdout) as { written: Array<{ outcome: string }> };
      expect(again.written.map((w) => w.outcome)).toEqual(["unchanged", "unchanged"]);
    } finally {
      await deleteKeys(server.url, `${prefix}:`);
      await server.close();
    }
  });
});
