/**
 * Each rule of the Agent Skills spec, an accept and a reject case, checked against the reference
 * validator: `validateSkillDir` must list exactly what `skills-ref`'s `validate` lists for the same
 * folder (YAML parse errors: both refuse; the wording of the YAML libraries differs). The two checks
 * that go beyond the reference (metadata a mapping, allowed-tools a string) are asserted separately.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { validate as referenceValidate } from "skills-ref";
import { afterAll, describe, expect, it } from "vitest";
import { validateSkillDir } from "../../src/skills/validate.js";

const root = mkdtempSync(path.join(tmpdir(), "skills-spec-"));
afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 5 }));
let n = 0;

/** A skill folder named `folder` (inside its own parent) with this SKILL.md; null: no SKILL.md. */
function skillDir(folder: string, content: string | null): string {
  const dir = path.join(root, String(n++), folder);
  mkdirSync(dir, { recursive: true });
  if (content !== null) writeFileSync(path.join(dir, "SKILL.md"), content);
  return dir;
}
const md = (frontmatter: string, body = "Do the thing.") => `---\n${frontmatter}\n---\n${body}\n`;
const ok = "description: Does one thing. Use when asked to.";

type Case = [title: string, folder: string, content: string | null, valid: boolean];
const CASES: Case[] = [
  ["minimal valid skill", "my-skill", md(`name: my-skill\n${ok}`), true],
  ["all optional fields", "full", md(`name: full\n${ok}\nlicense: MIT\ncompatibility: needs python3\nmetadata:\n  author: me\n  version: "1"\nallowed-tools: Bash Read`), true],
  ["name missing", "x", md(ok), false],
  ["name empty", "x", md(`name: ""\n${ok}`), false],
  ["name digits and hyphens", "a1-b2", md(`name: a1-b2\n${ok}`), true],
  ["name upper-case", "My-Skill", md(`name: My-Skill\n${ok}`), false],
  ["name leading hyphen", "-abc", md(`name: -abc\n${ok}`), false],
  ["name trailing hyphen", "abc-", md(`name: abc-\n${ok}`), false],
  ["name doubled hyphen", "a--b", md(`name: a--b\n${ok}`), false],
  ["name with underscore", "a_b", md(`name: a_b\n${ok}`), false],
  ["name with a space", "a b", md(`name: a b\n${ok}`), false],
  ["name of 64 characters", "a".repeat(64), md(`name: ${"a".repeat(64)}\n${ok}`), true],
  ["name of 65 characters", "a".repeat(65), md(`name: ${"a".repeat(65)}\n${ok}`), false],
  ["name differs from the folder", "other", md(`name: my-skill\n${ok}`), false],
  ["name of Unicode letters (the reference accepts them)", "данные", md(`name: данные\n${ok}`), true],
  ["description missing", "x", md("name: x"), false],
  ["description empty", "x", md('name: x\ndescription: ""'), false],
  ["description of 1024 characters", "x", md(`name: x\ndescription: ${"d".repeat(1024)}`), true],
  ["description of 1025 characters", "x", md(`name: x\ndescription: ${"d".repeat(1025)}`), false],
  ["compatibility of 500 characters", "x", md(`name: x\n${ok}\ncompatibility: ${"c".repeat(500)}`), true],
  ["compatibility of 501 characters", "x", md(`name: x\n${ok}\ncompatibility: ${"c".repeat(501)}`), false],
  ["compatibility not a string", "x", md(`name: x\n${ok}\ncompatibility: 3`), false],
  ["metadata a string map", "x", md(`name: x\n${ok}\nmetadata:\n  a: b`), true],
  ["unknown top-level key", "x", md(`name: x\n${ok}\nversion: 2`), false],
  ["several unknown keys (sorted in one message)", "x", md(`name: x\n${ok}\nzeta: 1\nalpha: 2`), false],
  ["every problem at once", "Folder", md("name: Bad--Name-\nextra: 1"), false],
  ["no frontmatter", "x", "# Just Markdown\n", false],
  ["frontmatter not closed", "x", "---\nname: x\ndescription: y\n", false],
  ["no SKILL.md", "x", null, false],
];

describe("skills validate: each spec rule as skills-ref reports it", () => {
  for (const [title, folder, content, valid] of CASES) {
    it(`${valid ? "accepts" : "rejects"}: ${title}`, async () => {
      const dir = skillDir(folder, content);
      const ours = await validateSkillDir(dir);
      const reference = await referenceValidate(dir);
      expect(ours).toEqual(reference);
      expect(ours.length === 0).toBe(valid);
    });
  }

  it("rejects a path that does not exist or is not a folder, as the reference does", async () => {
    const missing = path.join(root, "missing");
    expect(await validateSkillDir(missing)).toEqual(await referenceValidate(missing));
    const file = path.join(root, "a-file");
    writeFileSync(file, "x");
    expect(await validateSkillDir(file)).toEqual(await referenceValidate(file));
  });

  it("rejects invalid YAML (both validators; the YAML libraries word it differently)", async () => {
    const dir = skillDir("x", "---\nname: x\ndescription: [unclosed\n---\nbody\n");
    const ours = await validateSkillDir(dir);
    expect(ours).toHaveLength(1);
    expect(ours[0]).toMatch(/^Invalid YAML in frontmatter: /);
    expect(await referenceValidate(dir)).toHaveLength(1);
    // A list is not a mapping; the reference wraps its own message as a YAML error.
    const list = skillDir("x", "---\n- a\n- b\n---\nbody\n");
    expect(await validateSkillDir(list)).toEqual(["SKILL.md frontmatter must be a YAML mapping"]);
    expect(await referenceValidate(list)).toEqual(["Invalid YAML in frontmatter: ParseError: SKILL.md frontmatter must be a YAML mapping"]);
  });

  it("goes beyond the reference where the spec's table does: metadata must be a mapping, allowed-tools a string", async () => {
    const metaList = skillDir("x", md(`name: x\n${ok}\nmetadata: [a, b]`));
    expect(await referenceValidate(metaList)).toEqual([]);
    expect(await validateSkillDir(metaList)).toEqual(["Field 'metadata' must be a mapping of string keys to string values"]);
    const toolsList = skillDir("x", md(`name: x\n${ok}\nallowed-tools: [Bash, Read]`));
    expect(await referenceValidate(toolsList)).toEqual([]);
    expect(await validateSkillDir(toolsList)).toEqual(["Field 'allowed-tools' must be a string of space-separated tool names"]);
  });

  it("refuses a SKILL.md over 10 MB without reading it", async () => {
    const dir = skillDir("big", md(`name: big\n${ok}`, "x".repeat(10 * 1024 * 1024 + 1)));
    expect(await validateSkillDir(dir)).toEqual(["SKILL.md is larger than 10 MB"]);
  });
});
