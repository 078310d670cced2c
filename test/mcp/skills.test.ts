/** Skills over MCP: the catalog prompt, skill:// resources (confined reads), and the footprint staying constant. */
import { cp, mkdir } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanup, connectStdio, ensureBuilt, REPO, tempDir } from "./harness.js";

let dir: string;
const toClose: Array<() => Promise<unknown>> = [];
beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  for (const close of toClose.splice(0).reverse()) await close().catch(() => undefined);
  await cleanup(dir);
});

async function connect(withSkills: boolean) {
  await mkdir(path.join(dir, "base"), { recursive: true });
  if (withSkills) await cp(path.join(REPO, "examples/skills"), path.join(dir, "base/skills"), { recursive: true });
  const conn = await connectStdio(["--base", "base"], { cwd: dir });
  toClose.push(() => conn.close());
  return conn.client;
}

describe("skills over MCP", () => {
  it("the `skills` prompt is the catalog block; empty with no skills", async () => {
    const client = await connect(true);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain("skills");
    const xml = await client.getPrompt({ name: "skills" });
    const text = (xml.messages[0]?.content as { text: string }).text;
    expect(text).toMatch(/^<available_skills>\n<skill>\n<name>\ncommit-message\n<\/name>/);
    expect(text).toContain(path.join(dir, "base/skills/csv-summary/SKILL.md"));
    const md = await client.getPrompt({ name: "skills", arguments: { format: "markdown" } });
    expect((md.messages[0]?.content as { text: string }).text).toMatch(/^## Available skills/);
  });

  it("an empty store gives an empty prompt", async () => {
    const client = await connect(false);
    expect((await client.getPrompt({ name: "skills" })).messages).toEqual([]);
  });

  it("lists skill://{name}/SKILL.md and the files under it; reads text and bytes, confined to the skill", async () => {
    const client = await connect(true);
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    expect(uris).toEqual(expect.arrayContaining(["skill://csv-summary/SKILL.md", "skill://csv-summary/scripts/summary.py", "skill://csv-summary/references/columns.md", "skill://commit-message/SKILL.md"]));
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    expect(templates).toEqual(expect.arrayContaining(["skill://{name}/SKILL.md"]));
    const skillMd = await client.readResource({ uri: "skill://csv-summary/SKILL.md" });
    expect(skillMd.contents[0]).toMatchObject({ mimeType: "text/markdown" });
    expect((skillMd.contents[0] as { text: string }).text).toMatch(/^---\nname: csv-summary\n/);
    for (const bad of ["skill://csv-summary/../../../etc/passwd", "skill://csv-summary/%2e%2e/x", "skill://csv-summary/nope.md", "skill://nope/SKILL.md", "skill://csv-summary"]) {
      await expect(client.readResource({ uri: bad })).rejects.toThrow(/Invalid path|has no file|No skill named|skill:\/\/\{name\}\/\{path\}/);
    }
  });
});
