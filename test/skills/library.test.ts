/**
 * The skill library: lenient loading (a broken skill is skipped with a warning and never hides the
 * others), read-only roots where a later root wins and the clash is reported, confinement of reads,
 * the catalog (equal to the reference `toPrompt` for the same folders), and the trust rules.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { toPrompt } from "skills-ref";
import { createRequire } from "node:module";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SkillLibrary } from "../../src/skills/library.js";
import { FileStorage } from "../../src/storage/file/storage.js";

const EXAMPLES = path.resolve("examples/skills");
let dir: string;
let storage: FileStorage;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "skills-lib-"));
  storage = new FileStorage({ basePath: path.join(dir, "base") });
});
afterEach(async () => {
  await storage.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
});

function write(root: string, name: string, content: string, files: Record<string, string | Buffer> = {}): string {
  const d = path.join(root, name);
  mkdirSync(d, { recursive: true });
  writeFileSync(path.join(d, "SKILL.md"), content);
  for (const [p, data] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(d, p)), { recursive: true });
    writeFileSync(path.join(d, p), data);
  }
  return d;
}
const skill = (name: string, description = `Skill ${name}. Use when testing.`) => `---\nname: ${name}\ndescription: ${description}\n---\nBody of ${name}.\n`;

describe("lenient loading", () => {
  it("skips a broken skill with a warning and keeps the others", async () => {
    const skills = path.join(storage.root, "skills");
    write(skills, "good", skill("good"));
    write(skills, "broken-yaml", "---\nname: broken-yaml\ndescription: [oops\n---\n");
    write(skills, "no-frontmatter", "# nothing\n");
    write(skills, "no-description", "---\nname: no-description\n---\nbody\n");
    const lib = new SkillLibrary(storage.skills);
    const { skills: found, warnings } = await lib.scan();
    expect([...found.keys()]).toEqual(["good"]);
    expect(warnings.join("\n")).toMatch(/skipped skill "broken-yaml": Invalid YAML/);
    expect(warnings.join("\n")).toMatch(/skipped skill "no-frontmatter": SKILL.md must start with YAML frontmatter/);
    expect(warnings.join("\n")).toMatch(/skipped skill "no-description"/);
  });

  it("keeps a skill whose meaning is clear, with warnings: long description cut to 1,024, unknown keys, name ≠ folder", async () => {
    const skills = path.join(storage.root, "skills");
    write(skills, "long", `---\nname: other-name\ndescription: ${"d".repeat(2000)}\nversion: 3\n---\nbody\n`);
    const lib = new SkillLibrary(storage.skills);
    const { skills: found, warnings } = await lib.scan();
    expect(found.get("long")?.description).toHaveLength(1024);
    expect(warnings.join("\n")).toContain("Unexpected fields in frontmatter: version");
    expect(warnings.join("\n")).toContain("Directory name 'long' must match skill name 'other-name'");
    expect(warnings.join("\n")).toContain("cut to 1024");
  });

  it("skips a SKILL.md over 10 MB (and a resource over 10 MB is not read)", async () => {
    const skills = path.join(storage.root, "skills");
    write(skills, "huge", skill("huge") + "x".repeat(10 * 1024 * 1024));
    write(skills, "fine", skill("fine"), { "assets/big.bin": Buffer.alloc(10 * 1024 * 1024 + 1) });
    const lib = new SkillLibrary(storage.skills);
    const { skills: found, warnings } = await lib.scan();
    expect([...found.keys()]).toEqual(["fine"]);
    expect(warnings.join("\n")).toMatch(/skipped skill "huge": .*over 10 MB|10 MB/);
    await expect(lib.read("fine", "assets/big.bin")).rejects.toThrow(/10 MB/);
  });
});

describe("metadata parsing is bounded (issue 32: 100,000 keys took 65 s per `skills list`)", () => {
  it("a frontmatter of 100,000 keys, 5,000 short keys, a 1,000-entry flow mapping, 70 KB of text or 12 levels is refused with why; the others are listed", async () => {
    const skills = path.join(storage.root, "skills");
    write(skills, "good", skill("good"));
    write(skills, "many-keys", `---\nname: many-keys\ndescription: d\n${Array.from({ length: 100_000 }, (_, i) => `k${i}: v\n`).join("")}---\nbody\n`);
    write(skills, "block-keys", `---\nname: block-keys\ndescription: d\n${Array.from({ length: 5_000 }, (_, i) => `k${i}: 1\n`).join("")}---\nbody\n`);
    write(skills, "flow-keys", `---\nname: flow-keys\ndescription: d\nmetadata: {${Array.from({ length: 1_000 }, (_, i) => `k${i}: v`).join(", ")}}\n---\nbody\n`);
    write(skills, "long-text", `---\nname: long-text\ndescription: ${"x".repeat(70_000)}\n---\nbody\n`);
    write(skills, "deep", `---\nname: deep\ndescription: d\nmetadata: ${"{a: ".repeat(12)}b${"}".repeat(12)}\n---\nbody\n`);
    const lib = new SkillLibrary(storage.skills);
    const { skills: found, warnings } = await lib.scan();
    expect([...found.keys()]).toEqual(["good"]);
    const text = warnings.join("\n");
    expect(text).toMatch(/skipped skill "many-keys": SKILL\.md frontmatter is 988,921 characters; at most 65,536 are read/);
    expect(text).toMatch(/skipped skill "block-keys": SKILL\.md frontmatter has 5,003 lines and commas; at most 1,000 entries are read/);
    expect(text).toMatch(/skipped skill "flow-keys": SKILL\.md frontmatter has 1,00\d lines and commas; at most 1,000 entries are read/);
    expect(text).toMatch(/skipped skill "long-text": SKILL\.md frontmatter is 70,0\d\d characters; at most 65,536 are read/);
    expect(text).toMatch(/skipped skill "deep": SKILL\.md frontmatter is nested more than 10 levels deep/);
    expect(await lib.list()).toEqual([expect.objectContaining({ name: "good" })]);
  }, 60_000);

  it("an unchanged SKILL.md is parsed once; a changed one again; callers cannot edit what is remembered", async () => {
    const skills = path.join(storage.root, "skills");
    write(skills, "cached-once", `---\nname: cached-once\ndescription: Parsed once.\nmetadata: { owner: a }\n---\nbody\n`);
    const yaml = createRequire(import.meta.url)("yaml") as { parse: (...args: unknown[]) => unknown };
    const parse = vi.spyOn(yaml, "parse");
    try {
      const ours = () => parse.mock.calls.filter(([text]) => String(text).includes("cached-once")).length;
      const lib = new SkillLibrary(storage.skills);
      await lib.list();
      const first = await lib.load("cached-once");
      first.frontmatter.metadata!["owner"] = "edited";
      await lib.list();
      expect((await lib.load("cached-once")).frontmatter.metadata).toEqual({ owner: "a" });
      expect(ours()).toBe(1);
      write(skills, "cached-once", `---\nname: cached-once\ndescription: Parsed twice.\n---\nbody\n`);
      expect((await lib.list())[0]!.description).toBe("Parsed twice.");
      expect(ours()).toBe(2);
    } finally {
      parse.mockRestore();
    }
  });
});

describe("read-only roots", () => {
  it("merges roots after the storage; a later root wins and the clash is reported", async () => {
    await new SkillLibrary(storage.skills).create({ name: "shared", description: "From storage.", body: "storage body" });
    const a = path.join(dir, "project/.agents/skills");
    const b = path.join(dir, "project/.claude/skills");
    write(a, "shared", skill("shared", "From agents."));
    write(a, "only-a", skill("only-a"));
    write(b, "shared", skill("shared", "From claude."));
    const lib = new SkillLibrary(storage.skills, { roots: [a, b] });
    const { skills, warnings } = await lib.scan();
    expect(skills.get("shared")?.description).toBe("From claude.");
    expect([...skills.keys()].sort()).toEqual(["only-a", "shared"]);
    expect(warnings.filter((w) => w.includes("hides"))).toHaveLength(2);
    expect(warnings.join("\n")).toContain(`skill "shared" of ${b} hides the one of ${a}`);
    // Read-only: neither replaced nor deleted through the library.
    await expect(lib.create({ name: "only-a", description: "x", body: "y" })).rejects.toThrow(/read-only folder/);
    await expect(lib.delete("only-a")).rejects.toThrow(/read-only folder/);
  });
});

describe("reading is confined to the skill folder", () => {
  it("refuses .., absolute paths and symlinks that lead out; reads text or bytes", async () => {
    const skills = path.join(storage.root, "skills");
    const d = write(skills, "conf", skill("conf"), { "assets/logo.bin": Buffer.from([0, 255, 1, 2]), "references/a.md": "# A\n" });
    writeFileSync(path.join(dir, "secret.txt"), "secret");
    symlinkSync(path.join(dir, "secret.txt"), path.join(d, "references/link.md"));
    symlinkSync(dir, path.join(d, "escape"));
    const lib = new SkillLibrary(storage.skills);
    expect(await lib.read("conf", "references/a.md")).toBe("# A\n");
    expect(await lib.read("conf", "assets/logo.bin")).toEqual(new Uint8Array([0, 255, 1, 2]));
    expect(await lib.read("conf", "references/a.md", { as: "bytes" })).toEqual(new TextEncoder().encode("# A\n"));
    for (const p of ["../../secret.txt", "/etc/passwd", "references/../../x", ".provenance.json"]) {
      await expect(lib.read("conf", p)).rejects.toThrow(/Invalid path|reserved/);
    }
    await expect(lib.read("conf", "references/link.md")).rejects.toThrow(/has no file/);
    await expect(lib.read("conf", "escape/secret.txt")).rejects.toThrow(/has no file/);
    expect((await lib.load("conf")).resources).toEqual(["assets/logo.bin", "references/a.md"]);
  });
});

describe("catalog", () => {
  it("is the reference toPrompt block for the same folders, and empty with no skills", async () => {
    const lib = new SkillLibrary(storage.skills);
    expect(await lib.catalog()).toBe("");
    cpSync(EXAMPLES, path.join(storage.root, "skills"), { recursive: true });
    write(path.join(storage.root, "skills"), "escape-me", skill("escape-me", `Uses <tags> & "quotes" 'too'.`));
    const folders = (await storage.skills.names()).map((n) => storage.skills.folder(n));
    expect(await lib.catalog("xml")).toBe(await toPrompt(folders));
    expect(await lib.catalog("xml")).toContain("Uses &lt;tags&gt; &amp; &quot;quotes&quot; &#39;too&#39;.");
    const markdown = await lib.catalog("markdown");
    expect(markdown).toMatch(/^## Available skills\n\n- \*\*commit-message\*\*: /);
  });
});

describe("trust", () => {
  it("an untrusted session cannot replace or delete a trusted skill; a trusted one will not run an untrusted skill's scripts", async () => {
    const host = new SkillLibrary(storage.skills);
    await host.create({ name: "by-person", description: "Written by a person.", body: "b" });
    const sandbox = new SkillLibrary(storage.skills, { principal: { trust: "untrusted", executor: "sandbox" } });
    await expect(sandbox.create({ name: "by-person", description: "Mine now.", body: "b" })).rejects.toMatchObject({ name: "SkillProtectedError" });
    await expect(sandbox.delete("by-person")).rejects.toMatchObject({ name: "SkillProtectedError" });
    await sandbox.create({ name: "by-sandbox", description: "Saved by the sandbox.", body: "b", files: { "scripts/x.sh": "echo hi" } });
    expect((await host.load("by-sandbox")).trust).toBe("untrusted");
    const trusted = new SkillLibrary(storage.skills, { principal: { trust: "trusted", executor: "subprocess" } });
    await expect(trusted.forRun("by-sandbox")).rejects.toMatchObject({ name: "UntrustedSkillError" });
    // A provenance file that cannot be parsed counts as untrusted (fail closed).
    writeFileSync(path.join(storage.skills.folder("by-person"), ".provenance.json"), "{not json");
    expect((await host.load("by-person")).trust).toBe("untrusted");
  });

  it("create validates strictly and writes a SKILL.md that the reference accepts", async () => {
    const lib = new SkillLibrary(storage.skills);
    await expect(lib.create({ name: "Bad_Name", description: "x", body: "y" })).rejects.toThrow(/must be lowercase.*invalid characters/);
    await expect(lib.create({ name: "ok", description: "", body: "y" })).rejects.toThrow(/description/);
    await lib.create({ name: "quoted", description: "Colons: and # hashes\n---\nname: injected", body: "Body", metadata: { k: "v" } });
    const { validate } = await import("skills-ref");
    expect(await validate(storage.skills.folder("quoted"))).toEqual([]);
    expect((await lib.load("quoted")).description).toBe("Colons: and # hashes\n---\nname: injected");
  });
});

describe("FileStorage skills: leftovers of killed writers", () => {
  it("a staged folder of a dead writer is swept on open once old; a live writer's is kept", async () => {
    const { spawnSync } = await import("node:child_process");
    const { utimesSync, existsSync } = await import("node:fs");
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    const tmp = path.join(storage.root, "skills", ".tmp");
    const stale = path.join(tmp, `half.${dead}.0123456789ab`);
    const live = path.join(tmp, `busy.${process.pid}.0123456789ab`);
    for (const d of [stale, live]) {
      mkdirSync(path.join(d, "scripts"), { recursive: true });
      writeFileSync(path.join(d, "SKILL.md"), "half-written");
      utimesSync(d, new Date(0), new Date(0));
    }
    const again = new FileStorage({ basePath: path.join(dir, "base") });
    expect(await again.sweepDone()).toBe(1);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live)).toBe(true);
    await again.close();
  });
});
