/**
 * Per-toolset options in an agent's frontmatter (issue 38 item 3) and the shell_file_ops toolset:
 * options narrow a toolset (allowed_commands, base_path, read_only, max_file_bytes) and a bad one
 * is an error naming the file and line; ls runs without approval, mv only with it and never out
 * of the project.
 */
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AgentFileError, loadAgentProject, runAgent } from "../../src/index.js";
import { projectsRemovedAfterEach } from "./project.js";
import { scripted, toolResults } from "./scripted.js";

const project = projectsRemovedAfterEach(afterEach);

describe("per-toolset options", () => {
  it("shell_readonly: { allowed_commands } narrows the commands", async () => {
    const dir = await project([{ name: "main", frontmatter: ["tools:", "  - shell_readonly: { allowed_commands: [ls, cat] }"] }], {}, { "a.txt": "alpha\n" });
    const model = scripted([{ tools: [{ tool: "shell_readonly", args: { command: "cat a.txt" } }, { tool: "shell_readonly", args: { command: "grep alpha a.txt" } }] }, { text: "ok" }]);
    await runAgent(dir, "go", { model });
    const [cat, grep] = toolResults(model.prompts[1]);
    expect(cat).toBe("alpha\n");
    expect(grep).toMatch(/refused: grep is not an allowed read-only command \(allowed: ls, cat\)/);
    expect(JSON.stringify(model.prompts[0]!.tools)).toContain("Run one read-only command in the project folder: ls, cat.");
  });

  it("filesystem_project: { base_path, read_only, max_file_bytes } narrows the root, drops write_file and caps reads", async () => {
    const dir = await project(
      [{ name: "main", frontmatter: ["tools:", "  - filesystem_project: { base_path: docs, read_only: true, max_file_bytes: 10 }"] }],
      {},
      { "docs/small.md": "tiny", "docs/big.md": "x".repeat(11), "secret.txt": "outside docs" },
    );
    const model = scripted([
      { tools: [{ tool: "read_file", args: { path: "small.md" } }, { tool: "read_file", args: { path: "big.md" } }, { tool: "read_file", args: { path: "../secret.txt" } }] },
      { text: "ok" },
    ]);
    await runAgent(dir, "go", { model });
    expect(model.prompts[0]!.tools?.map((t) => t.name).sort()).toEqual(["list_files", "read_file"]);
    const [small, big, secret] = toolResults(model.prompts[1]);
    expect(small).toBe("tiny");
    expect(big).toMatch(/big\.md is 11 bytes, more than this agent may read \(max_file_bytes 10\)/);
    expect(secret).toMatch(/outside the allowed folder/);
  });

  it("a bad option is an error naming the file and line", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["tools:", "  - shell_readonly: { allowed_commands: [rm] }"], /main\.agent\.md:5: tools: shell_readonly\.allowed_commands\.0: Invalid option/],
      [["tools:", "  - code: { fast: true }"], /main\.agent\.md:5: tools: "code" takes no options/],
      [["tools:", "  - filesystem_project: { read_only: false }"], /main\.agent\.md:5: tools: filesystem_project\.read_only: read_only can only be true/],
      [["tools:", "  - filesystem_project: { colour: red }"], /main\.agent\.md:5: tools: filesystem_project: Unrecognized key/],
    ];
    for (const [frontmatter, message] of cases) {
      const dir = await project([{ name: "main", frontmatter }]);
      const err = await loadAgentProject(dir).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AgentFileError);
      expect((err as Error).message.replace(`${dir}${path.sep}`, "")).toMatch(message);
    }
  });
});

describe("shell_file_ops", () => {
  it("ls runs without approval; mv needs it, never replaces a file and never leaves the project", async () => {
    const dir = await project([{ name: "main", tools: ["shell_file_ops"] }], { approval_mode: "reject_all" }, { "notes/a.md": "A", "b.md": "B" });
    const rejected = scripted([{ tools: [{ tool: "ls", args: { path: "notes" } }, { tool: "mv", args: { source: "b.md", destination: "notes/b.md" } }] }, { text: "ok" }]);
    await runAgent(dir, "go", { model: rejected });
    const [listing, refused] = toolResults(rejected.prompts[1]);
    expect(listing).toMatch(/a\.md/);
    expect(refused).toMatch(/Tool call mv was not run/);
    expect(await readFile(path.join(dir, "b.md"), "utf8")).toBe("B");

    await mkdir(path.join(dir, "away"));
    await symlink("/tmp", path.join(dir, "away", "tmp-link"));
    await writeFile(path.join(dir, "c.md"), "C");
    const approved = scripted([
      {
        tools: [
          { tool: "mv", args: { source: "b.md", destination: "notes/b.md" } },
          { tool: "mv", args: { source: "c.md", destination: "notes/a.md" } },
          { tool: "mv", args: { source: "c.md", destination: "../c.md" } },
          { tool: "mv", args: { source: "c.md", destination: "away/tmp-link/c.md" } },
        ],
      },
      { text: "ok" },
    ]);
    await runAgent(dir, "go", { model: approved, approvalMode: "approve_all" });
    const [moved, exists, outside, throughLink] = toolResults(approved.prompts[1]);
    expect(moved).toBe("moved b.md to notes/b.md");
    expect(await readFile(path.join(dir, "notes/b.md"), "utf8")).toBe("B");
    expect(exists).toMatch(/notes\/a\.md exists; mv does not replace files/);
    expect(outside).toMatch(/outside the allowed folder/);
    expect(throughLink).toMatch(/symbolic link/);
    expect(await readFile(path.join(dir, "c.md"), "utf8")).toBe("C");
  });
});
