/** Executors take `skillRoots`; `discoverSkillRoots` finds the spec's project folders. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { SandboxExecutor } from "../../src/execution/sandbox/executor.js";
import { Session } from "../../src/session.js";
import { discoverSkillRoots } from "../../src/skills/roots.js";
import { FileStorage } from "../../src/storage/file/storage.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "skills-roots-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }));

function skill(root: string, name: string, description: string): void {
  mkdirSync(path.join(root, name), { recursive: true });
  writeFileSync(path.join(root, name, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\n---\nbody\n`);
}

describe("skill roots", () => {
  it("discoverSkillRoots returns .agents/skills then .claude/skills, only those that exist", async () => {
    expect(await discoverSkillRoots(dir)).toEqual([]);
    mkdirSync(path.join(dir, ".claude/skills"), { recursive: true });
    expect(await discoverSkillRoots(dir)).toEqual([path.join(dir, ".claude/skills")]);
    mkdirSync(path.join(dir, ".agents/skills"), { recursive: true });
    expect(await discoverSkillRoots(dir)).toEqual([path.join(dir, ".agents/skills"), path.join(dir, ".claude/skills")]);
  });

  for (const [kind, make] of [
    ["in-process", (roots: string[]) => new InProcessExecutor({ skillRoots: roots })],
    ["sandbox", (roots: string[]) => new SandboxExecutor({ skillRoots: roots })],
  ] as const) {
    it(`${kind}: the guest sees the roots' skills after the storage's, later root winning; roots are read-only`, async () => {
      const a = path.join(dir, "a");
      const b = path.join(dir, "b");
      skill(a, "team-skill", "From root a.");
      skill(b, "team-skill", "From root b.");
      skill(a, "only-a", "Only in a.");
      const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "base") }), executor: make([a, b]) });
      try {
        const r = await session.run("(await skills.list()).map((s) => `${s.name}: ${s.description}`)");
        expect(r.value).toEqual(["only-a: Only in a.", "team-skill: From root b."]);
        const del = await session.run("await skills.delete('only-a')");
        expect(del.error?.message).toMatch(/read-only folder/);
      } finally {
        await session.close();
      }
    });
  }

  it("rejects a skillRoots option that is not a list of folders", () => {
    expect(() => new InProcessExecutor({ skillRoots: "x" as unknown as string[] })).toThrow(/skillRoots: must be an array of folder paths/);
  });
});
