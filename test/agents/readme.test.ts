/**
 * docs/agents.md, as a user follows it: the commands it shows, and its frontmatter
 * example (every key it documents) as a real agent file that `agent check` accepts.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, tempDir } from "../cli/harness.js";
import { readDoc } from "../helpers/readme.js";

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
}, 180_000);
afterAll(async () => {
  await cleanup(dir);
});

describe("docs/agents.md", () => {
  it("agent new, then agent check, print what docs/agents.md shows", async () => {
    const section = await readDoc("docs/agents.md");
    expect(section).toContain("$ ts-code-mode agent new my-agent");
    expect((await cli(["agent", "new", "my-agent"], { cwd: dir })).code).toBe(0);
    const check = await cli(["agent", "check", "my-agent"], { cwd: dir });
    expect(check.code).toBe(0);
    const shown = /\$ ts-code-mode agent check my-agent +# (.+)/.exec(section)?.[1];
    expect(check.stdout.trim()).toBe(shown);
  });

  it("the frontmatter example, every documented key, is an agent file agent check accepts", async () => {
    const section = await readDoc("docs/agents.md");
    const example = /```markdown\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example).toBeDefined();
    const project = path.join(dir, "readme-example");
    await cli(["agent", "new", "readme-example"], { cwd: dir });
    await writeFile(path.join(project, "analyst.agent.md"), example!);
    await writeFile(path.join(project, "counter.agent.md"), "---\nname: counter\nmodel: openai:gpt-4o-mini\n---\nCount.\n");
    await writeFile(path.join(project, "project.json"), JSON.stringify({ version: 1, agents: ["analyst.agent.md", "counter.agent.md"], entry: "analyst" }));
    const check = await cli(["agent", "check", "."], { cwd: project });
    expect(check.stderr).toBe("");
    expect(check.code).toBe(0);
  });
});
