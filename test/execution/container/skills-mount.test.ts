/**
 * Skills in a container session (issue 32.2): the skills the session has when it starts (the
 * storage's and the skill roots') are mounted read-only at /skills/<name>, and the catalog
 * (skills.list, skillsCatalog) shows those paths, the ones the code and the tools can open.
 */
import { spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContainerExecutor } from "../../../src/execution/container/executor.js";
import { Session } from "../../../src/session.js";
import { SkillLibrary } from "../../../src/skills/library.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import { EXAMPLE_TOOLS_PATH } from "../../conformance/executor.js";
import { ensureTestImage } from "../../helpers/container.js";

let tmp: string;
let s: Session;

async function value(code: string): Promise<unknown> {
  const r = await s.run(code);
  expect(r.error, code).toBeNull();
  return r.value;
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "tcm-skills-mount-"));
  const image = await ensureTestImage();
  const root = path.join(tmp, "skills");
  await mkdir(path.join(root, "csv-helper", "references"), { recursive: true });
  await writeFile(path.join(root, "csv-helper", "SKILL.md"), "---\nname: csv-helper\ndescription: Summarise CSV files. Use for CSV.\n---\nRead references/columns.md first.\n");
  await writeFile(path.join(root, "csv-helper", "references", "columns.md"), "a, b, c\n");
  const storage = new FileStorage({ basePath: path.join(tmp, "store") });
  // A skill of the storage, saved before the session starts.
  await new SkillLibrary(storage.skills).create({ name: "stored-one", description: "A stored skill. Use in tests.", body: "stored body" });
  // The container's user (nobody) must be able to read what is mounted.
  spawnSync("chmod", ["-R", "a+rX", tmp]);
  const tools = path.join(tmp, "tools");
  await cp(EXAMPLE_TOOLS_PATH, tools, { recursive: true });
  s = new Session({ storage, executor: new ContainerExecutor({ image, toolsPath: tools, skillRoots: [root] }) });
  await s.start();
}, 240_000);

afterAll(async () => {
  await s?.close();
  await rm(tmp, { recursive: true, force: true, maxRetries: 5 });
});

describe("skills at /skills in a container session", () => {
  it("the catalog shows the paths inside the container", async () => {
    const listed = (await value("await skills.list()")) as Array<{ name: string; location: string }>;
    expect(listed.map((l) => [l.name, l.location])).toEqual([
      ["csv-helper", "/skills/csv-helper/SKILL.md"],
      ["stored-one", "/skills/stored-one/SKILL.md"],
    ]);
    expect(await s.skillsCatalog()).toContain("<location>\n/skills/csv-helper/SKILL.md\n</location>");
  });

  it("the code and the tools open those paths; nobody can write them", async () => {
    const md = await readFile(path.join(tmp, "skills", "csv-helper", "SKILL.md"), "utf8");
    expect(await value('(await import("node:fs")).readFileSync("/skills/csv-helper/SKILL.md", "utf8")')).toBe(md);
    expect(await value('(await import("node:fs")).readFileSync("/skills/stored-one/SKILL.md", "utf8")')).toContain("stored body");
    expect(await value('await tools.grep({ pattern: "b", paths: ["/skills/csv-helper/references/columns.md"] })')).toBe("a, b, c\n");
    const w = await s.run('(await import("node:fs")).writeFileSync("/skills/csv-helper/SKILL.md", "x")');
    expect(w.error?.message).toMatch(/EROFS|read-only/);
  });

  it("a skill saved after the start is read through skills.*, and its location says so", async () => {
    await value('await skills.create({ name: "later-one", description: "Saved later. Use in tests.", body: "later" })');
    const listed = (await value("await skills.list()")) as Array<{ name: string; location: string }>;
    expect(listed.find((l) => l.name === "later-one")?.location).toBe("skill://later-one/SKILL.md");
    expect(await value('(await skills.load("later-one")).body')).toContain("later");
  });
});
