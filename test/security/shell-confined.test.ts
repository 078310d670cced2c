/**
 * shell_readonly runs under bubblewrap (issue 32 item 3): every attack quoted in the issue is
 * refused by the option checks AND, run raw inside the sandbox (as if the checks had a hole), reaches
 * nothing of the host. git runs with config-driven programs switched off even outside the sandbox.
 * Without bwrap the tool is refused with the install line, never run unconfined.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readonlyArgv, shellReadonlyToolset } from "../../src/agents/toolsets/shell.js";
import { BWRAP_ENV, confinedArgv, hardenGit } from "../../src/tools/adapters/cli/confine.js";
import { CliToolAdapter } from "../../src/tools/adapters/cli/adapter.js";
import { runCommand } from "../../src/tools/adapters/cli/run.js";

let top: string;
let root: string;
const signal = new AbortController().signal;
const shell = () => shellReadonlyToolset(root)[0]!;
/** Runs argv in the sandbox WITHOUT the option checks: what the wall alone holds. */
const raw = (argv: string[], okExitCodes = [0]) =>
  runCommand(confinedArgv(argv, { root, tool: "test" }), { tool: "test", callable: null, timeoutMs: 20_000, okExitCodes, cwd: root }).catch((e: Error) => `error: ${e.message}`);

beforeAll(async () => {
  top = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-confine-"));
  root = path.join(top, "project");
  await mkdir(path.join(root, ".code-mode", "artifacts"), { recursive: true });
  await writeFile(path.join(top, "secret.txt"), "SECRET\n");
  await writeFile(path.join(top, "x"), "SECRET-X\n");
  await symlink(top, path.join(root, "data"));
  await writeFile(path.join(root, "a"), "b\na\n");
  await writeFile(path.join(root, "b"), "keep me\n");
  // An artifact a sandboxed run_code could have saved: sorted, its lines are still a shell script
  // (comments first, then the command), big enough for sort -S 1K to compress temp files with it.
  const padding = Array.from({ length: 200 }, (_, i) => `# padding line ${i}`).join("\n");
  await writeFile(path.join(root, ".code-mode", "artifacts", "x.sh"), `${padding}\ntouch ${top}/pwned-sort\n`);
});
afterAll(async () => {
  await rm(top, { recursive: true, force: true, maxRetries: 5 });
});
afterEach(() => {
  delete process.env[BWRAP_ENV];
});

describe("the attacks of issue 32 are refused by the option checks", () => {
  it.each([
    ["sort -S 1K --compress-prog=sh .code-mode/artifacts/x.sh", /--compress-prog abbreviates --compress-program/],
    ["sort -S 1K --compress-program=sh .code-mode/artifacts/x.sh", /--compress-program/],
    ["sort --compress=sh a", /--compress abbreviates --compress-program/],
    ["sort -uo/tmp/x", /sort -o can write files/],
    ["sort --ou=", /--ou abbreviates --output/],
    ["sort -T. a", /sort -T/],
    ["uniq a b", /uniq takes at most 1 file/],
    ["sort --files0-from=/host/file", /files0-from/],
    ["wc --files0-from=list", /files0-from/],
    ["find . -files0-from list", /find -files0-from/],
    ["git diff --out=x", /--out abbreviates --output/],
    ["git log --ext-d", /--ext-diff/],
  ])("refuses %s", async (command, message) => {
    expect(() => readonlyArgv(command)).toThrow(message);
    await expect(shell().execute({ command }, signal)).rejects.toMatchObject({ name: "ToolError", code: "PERMISSION" });
  });

  it("still lets the harmless forms through (values of value-taking flags are not read as flags)", () => {
    expect(readonlyArgv("sort -S 1K -k 2 -t o a")).toEqual(["sort", "-S", "1K", "-k", "2", "-t", "o", "a"]);
    expect(readonlyArgv("uniq -f 1 a")).toEqual(["uniq", "-f", "1", "a"]);
    expect(readonlyArgv("sort -ru a")).toEqual(["sort", "-ru", "a"]);
  });
});

describe("the sandbox holds even when a command gets past the checks", () => {
  it("sort --compress-program=sh runs its program inside the sandbox: nothing is written on the host", async () => {
    await raw(["sort", "-S", "1K", "--compress-prog=sh", ".code-mode/artifacts/x.sh"]);
    expect(existsSync(path.join(top, "pwned-sort"))).toBe(false);
  });

  it("sort -o and uniq's output operand cannot write: the project is read-only and /tmp is private", async () => {
    await raw(["sort", `-uo${top}/written`, "a"]); // lands in the sandbox's own /tmp, gone with it
    expect(existsSync(path.join(top, "written"))).toBe(false);
    expect(await raw(["uniq", "a", "b"])).toMatch(/Read-only file system/);
    expect(await readFile(path.join(root, "b"), "utf8")).toBe("keep me\n");
  });

  it("sort --files0-from and absolute paths see no host file", async () => {
    expect(await raw(["sort", `--files0-from=${top}/secret.txt`])).not.toContain("SECRET");
    expect(await raw(["cat", `${top}/secret.txt`, "/etc/hostname", "/root/.bashrc"])).toMatch(/No such file/);
  });

  it("cat data/x where data -> a host folder: the link dangles inside", async () => {
    await expect(shell().execute({ command: "cat data/x" }, signal)).rejects.toThrow(/No such file/);
  });

  it("runs as uid 65534 with no network and a cleared environment", async () => {
    expect(await raw(["id", "-u"])).toBe("65534\n");
    process.env["TS_CODE_MODE_SECRET_TOKEN"] = "tok";
    try {
      expect(await raw(["env"])).not.toContain("tok");
    } finally {
      delete process.env["TS_CODE_MODE_SECRET_TOKEN"];
    }
    expect(await raw(["cat", "/proc/net/dev"])).not.toMatch(/eth|ens|wl/);
  });

  it("a normal read still works, with relative paths", async () => {
    expect(await shell().execute({ command: "sort a" }, signal)).toBe("a\nb\n");
  });
});

describe("git runs no program named by the repository's config", () => {
  let repo: string;
  beforeAll(async () => {
    repo = path.join(top, "repo");
    await mkdir(repo);
    spawnSync("git", ["init", "-q", repo]);
    await writeFile(path.join(repo, "f.txt"), "x\n");
    const hook = path.join(repo, "hook.sh");
    await writeFile(hook, `#!/bin/sh\ntouch ${top}/pwned-fsmonitor\n`, { mode: 0o755 });
    // Written once "with approval": the repository's own config names a program to run.
    const config = await readFile(path.join(repo, ".git", "config"), "utf8");
    await writeFile(path.join(repo, ".git", "config"), `${config}[core]\n\tfsmonitor = ${hook}\n\tpager = ${hook}\n`);
  });

  it("git status through shell_readonly does not run core.fsmonitor", async () => {
    const [sh] = shellReadonlyToolset(repo);
    expect(await sh!.execute({ command: "git status" }, signal)).toContain("f.txt");
    expect(existsSync(path.join(top, "pwned-fsmonitor"))).toBe(false);
  });

  it("the git settings alone (no sandbox) already keep core.fsmonitor from running", async () => {
    // Control: plain git on the host runs the hook, so the check below means something.
    spawnSync("git", ["status"], { cwd: repo, stdio: "ignore" });
    expect(existsSync(path.join(top, "pwned-fsmonitor"))).toBe(true);
    await rm(path.join(top, "pwned-fsmonitor"));
    const out = await runCommand(hardenGit(["git", "status"]), { tool: "t", callable: null, timeoutMs: 20_000, cwd: repo });
    expect(out).toContain("f.txt");
    expect(existsSync(path.join(top, "pwned-fsmonitor"))).toBe(false);
  });
});

describe("without an OS sandbox, shell_readonly is refused with the install line", () => {
  it("refuses when bwrap is not found (TS_CODE_MODE_BWRAP points at a missing file)", async () => {
    process.env[BWRAP_ENV] = path.join(top, "no-such-bwrap");
    const err = await shell().execute({ command: "cat a" }, signal).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "ToolError", code: "DEPENDENCY" });
    expect((err as Error).message).toMatch(/refused rather than run unconfined\. Install it: apt-get install -y bubblewrap/);
  });

  it("refuses when the bwrap option names a missing file", async () => {
    const [sh] = shellReadonlyToolset(root, { bwrap: path.join(top, "nope") });
    await expect(sh!.execute({ command: "cat a" }, signal)).rejects.toThrow(/apt-get install -y bubblewrap/);
  });
});

describe("a CLI tool marked confine: runs in the same sandbox", () => {
  const catTool = (confine: boolean) =>
    CliToolAdapter.fromDocument({ name: "readit", command: "cat", confine, schema: { positional: [{ name: "file", required: true, allow_leading_dash: false }] } }, "readit.yaml");

  it("sees the working folder read-only and no host file", async () => {
    const cwd = process.cwd();
    process.chdir(root);
    try {
      expect(await catTool(true).call(null, { file: "a" }, {})).toBe("b\na\n");
      await expect(catTool(true).call(null, { file: `${top}/secret.txt` }, {})).rejects.toThrow(/No such file/);
      // Control: the same tool unconfined reads it, so the refusal above is the sandbox's doing.
      expect(await catTool(false).call(null, { file: `${top}/secret.txt` }, {})).toBe("SECRET\n");
      process.env[BWRAP_ENV] = path.join(top, "no-such-bwrap");
      await expect(catTool(true).call(null, { file: "a" }, {})).rejects.toThrow(/tools\.readit runs only inside an OS sandbox.*apt-get install -y bubblewrap/);
    } finally {
      process.chdir(cwd);
    }
  });
});
