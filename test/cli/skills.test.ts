/** `ts-code-mode skills list|show|validate|catalog|add|remove` (the built command) on real folders. */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { validate as referenceValidate } from "skills-ref";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, REPO, tempDir } from "./harness.js";

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
