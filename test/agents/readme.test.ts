/**
 * docs/agents.md, as a user follows it: the commands it shows, and its frontmatter
 * example (every key it documents) as a real agent file that `agent check` accepts.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, tempDir } from "../cli/harness.js";
import { markedShellBlock, readDoc, runDocShell } from "../helpers/docs.js";

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
}, 180_000);
afterAll(async () => {
  await cleanup(dir);
});

describe("docs/agents.md", () => {
  it("agent new, then agent check, as docs/agents.md shows them: the files, and check's line", async () => {
    const block = await markedShellBlock("docs/agents.md", "test/agents/readme.test.ts");
    const shown = /^ts-code-mode agent check my-agent +# (.+)$/m.exec(block)?.[1];
    expect(shown, "the block shows what agent check prints").toBeDefined();
    const cwd = path.join(dir, "walk-through");
    await mkdir(cwd);
    const r = await runDocShell(block, { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n").at(-1)).toBe(shown);
    for (const file of ["my-agent/project.json", "my-agent/my-agent.agent.md"]) expect(existsSync(path.join(cwd, file)), file).toBe(true);
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
