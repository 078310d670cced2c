/**
 * Built-in toolsets on the real filesystem and real commands: filesystem tools stay inside their
 * root (.., absolute paths, symlinks out), reads are bounded, and shell_readonly refuses shell
 * syntax, commands off the allow-list, writing options and paths out of the folder.
 */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filesystemToolset } from "../../src/agents/toolsets/filesystem.js";
import { readonlyArgv, READONLY_MAX_OUTPUT_BYTES, shellReadonlyToolset } from "../../src/agents/toolsets/shell.js";
import type { AgentTool } from "../../src/agents/toolsets/types.js";

let top: string;
let root: string;
const signal = new AbortController().signal;

beforeAll(async () => {
  top = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-fs-"));
  root = path.join(top, "root");
  await mkdir(path.join(root, "sub"), { recursive: true });
  await writeFile(path.join(top, "secret.txt"), "SECRET");
  await writeFile(path.join(root, "a.txt"), "hello world\nsecond line\n");
  await writeFile(path.join(root, "sub", "b.md"), "# b\n");
  await symlink(path.join(top, "secret.txt"), path.join(root, "link.txt"));
  await symlink(top, path.join(root, "out"));
});
afterAll(async () => {
  await rm(top, { recursive: true, force: true, maxRetries: 5 });
});

function tool(tools: AgentTool[], name: string): AgentTool {
  return tools.find((t) => t.name === name)!;
}

describe("filesystem toolsets", () => {
  it("read_file, list_files and write_file work inside the root", async () => {
    const fs = filesystemToolset(root, false, 24_000);
    expect(await tool(fs, "read_file").execute({ path: "a.txt" }, signal)).toBe("hello world\nsecond line\n");
    expect(await tool(fs, "read_file").execute({ path: "a.txt", offset: 6, max_chars: 5 }, signal)).toBe("world\n[more: read on with offset 11]");
    expect(await tool(fs, "list_files").execute({ pattern: "**/*.md" }, signal)).toBe("sub/b.md");
    await tool(fs, "write_file").execute({ path: "new/c.txt", content: "C" }, signal);
    expect(await readFile(path.join(root, "new/c.txt"), "utf8")).toBe("C");
    expect(tool(fs, "write_file").needsApproval).toBe(true);
  });

  it("refuses paths that leave the root: .., absolute, and symlinks pointing out", async () => {
    const fs = filesystemToolset(root, false, 24_000);
    const read = (p: string) => tool(fs, "read_file").execute({ path: p }, signal);
    await expect(read("../secret.txt")).rejects.toThrow(/outside the allowed folder/);
    await expect(read(path.join(top, "secret.txt"))).rejects.toThrow(/outside the allowed folder/);
    await expect(read("link.txt")).rejects.toThrow(/is a symbolic link/);
    await expect(read("out/secret.txt")).rejects.toThrow(/through a symbolic link/);
    await expect(tool(fs, "write_file").execute({ path: "out/planted.txt", content: "x" }, signal)).rejects.toThrow(/through a symbolic link/);
    await expect(tool(fs, "list_files").execute({ path: "out" }, signal)).rejects.toThrow(/through a symbolic link/);
    // Listing the root does not follow the symlinked folder.
    expect(await tool(fs, "list_files").execute({}, signal)).not.toMatch(/secret/);
    await expect(readFile(path.join(top, "planted.txt"))).rejects.toThrow();
  });

  it("reads only regular files, and only the first 16 MiB of one", async () => {
    const fifo = path.join(root, "pipe");
    spawnSync("mkfifo", [fifo]);
    const fs = filesystemToolset(root, true, 24_000);
    await expect(tool(fs, "read_file").execute({ path: "pipe" }, signal)).rejects.toThrow(/pipe is not a regular file/);
    await expect(tool(fs, "read_file").execute({ path: "a.txt", offset: 10_000_000 }, signal)).rejects.toThrow(/offset 10000000 is past/);
  });

  it("the _ro variants have no write_file", () => {
    expect(filesystemToolset(root, true, 24_000).map((t) => t.name)).toEqual(["read_file", "list_files"]);
  });
});

describe("shell_readonly", () => {
  it("runs allow-listed commands as argv in the project folder; grep's no-match is an answer", async () => {
    const [sh] = shellReadonlyToolset(root);
    expect(await sh!.execute({ command: "grep -n second a.txt" }, signal)).toBe("2:second line\n");
    expect(await sh!.execute({ command: "grep nothing-here a.txt" }, signal)).toBe("(no output)");
    expect(await sh!.execute({ command: "wc -l a.txt" }, signal)).toBe("2 a.txt\n");
  });

  it.each([
    ["cat a.txt | sh", /"\|" is shell syntax/],
    ["cat a.txt > b", /">" is shell syntax/],
    ["echo $(id)", /"\$" is shell syntax/],
    ["cat a.txt; rm a.txt", /";" is shell syntax/],
    ["grep 'a b' a.txt", /"'" is shell syntax/],
    ["rm a.txt", /rm is not an allowed read-only command/],
    ["git push", /refused: git push/],
    ["git -c core.pager=sh log", /refused: git -c/],
    ["find . -delete", /find -delete can write files or run programs/],
    ["find . -exec cat {} ;", /shell syntax|can write files/],
    ["sort -o out.txt a.txt", /sort -o can write files/],
    ["git diff --output=x", /git --output=x can write files/],
    ["cat /etc/passwd", /points outside the project folder/],
    ["cat ../secret.txt", /points outside the project folder/],
  ])("refuses %s", (command, message) => {
    expect(() => readonlyArgv(command)).toThrow(message);
  });

  it("stops a command whose output passes the cap", async () => {
    await writeFile(path.join(root, "big.txt"), "x".repeat(READONLY_MAX_OUTPUT_BYTES * 2));
    const [sh] = shellReadonlyToolset(root);
    await expect(sh!.execute({ command: "cat big.txt" }, signal)).rejects.toThrow(/output cap/);
  });
});
