/**
 * The container commands of the built CLI on a real engine: image build, run/mcp flags of
 * --executor container, containers prune.
 */
import { spawnSync } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTAINER_LABEL, OWNER_HOST_LABEL, OWNER_PID_LABEL, OWNER_UID_LABEL } from "../../src/execution/container/guest.js";
import { defaultImageTag } from "../../src/execution/container/image.js";
import { ensureTestImage, testDocker } from "../helpers/container.js";
import { cleanup, cli, ensureBuilt, MAIN, tempDir } from "./harness.js";
import { markedShellBlock, runDocShell } from "../helpers/docs.js";

let dir: string;
const FROM_TAG = "localhost/ts-code-mode-test-from:1";

/** The --from image of an earlier run killed before its afterAll would make `image build` answer built: false. */
const removeFromImage = async () => (await testDocker()).getImage(FROM_TAG).remove({ force: true }).catch(() => undefined);

beforeAll(async () => {
  await ensureBuilt();
  await ensureTestImage();
  await removeFromImage();
  dir = await tempDir();
  expect((await cli(["init", "--base", "demo"], { cwd: dir })).code).toBe(0);
}, 120_000);

afterAll(async () => {
  await removeFromImage();
  await cleanup(dir);
});

describe("docs/container.md, as written", () => {
  it("image build, then run --executor container lists the demo's tools from inside a container", async () => {
    // `node dist/cli/main.js` is the clone's CLI: this checkout's build.
    const block = (await markedShellBlock("docs/container.md", "test/cli/container.test.ts")).replaceAll("node dist/cli/main.js", `${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN)}`);
    const r = await runDocShell(block, { cwd: dir, timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(defaultImageTag());
    expect(r.stdout).toContain("name: 'wc'");
  }, 330_000);
});

describe("ts-code-mode image build", () => {
  it("--json names the default image the executor uses, already built", async () => {
    const r = await cli(["image", "build", "--json"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ tag: defaultImageTag(), built: false });
  });

  it("--from builds on a base image (here our own, no registry needed) and --image runs it", async () => {
    const base = await ensureTestImage();
    const built = await cli(["image", "build", "--from", base, "--tag", FROM_TAG, "--json"], { cwd: dir, timeoutMs: 120_000 });
    expect(built.stderr).toBe("");
    expect(JSON.parse(built.stdout)).toEqual({ tag: FROM_TAG, built: true });
    const r = await cli(["run", "--base", "demo", "--executor", "container", "--image", FROM_TAG, "--json", "1 + 2"], { cwd: dir });
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, value: 3 });
  }, 120_000);

  it("--tools adds the programs the tool files run inside; a program the image lacks makes its tool unavailable with the fix", async () => {
    const tools = path.join(dir, "jq-tools");
    await mkdir(tools, { recursive: true });
    await writeFile(path.join(tools, "jq.yaml"), "name: jq\ndescription: Query JSON\ncommand: [jq, -c]\nschema:\n  positional:\n    - { name: filter, type: string, required: true }\n    - { name: files, type: array, required: true }\n");
    await writeFile(path.join(tools, "wc.yaml"), "name: wc\ndescription: Count lines\ncommand: [wc, -l]\n");
    await writeFile(path.join(tools, "gone.yaml"), "name: gone\ndescription: Not anywhere\ncommand: tcm-not-on-this-host\n");
    const built = await cli(["image", "build", "--tools", tools, "--json"], { cwd: dir, timeoutMs: 180_000 });
    expect(built.code, built.stderr).toBe(0);
    const out = JSON.parse(built.stdout) as { tag: string; with: string[]; skipped: string[] };
    expect(out.with).toEqual(["jq"]); // wc is in every image already
    expect(out.skipped).toEqual([expect.stringMatching(/^tcm-not-on-this-host \(not on this host's PATH/)]);
    const code = 'await (await import("node:fs/promises")).writeFile("/workspace/a.json", JSON.stringify({ a: [1, 2] })); [await tools.jq({ filter: ".a", files: ["/workspace/a.json"] }), (await tools.list()).map((t) => t.name + ": " + t.description)]';
    const r = await cli(["run", "--base", "demo", "--tools", tools, "--executor", "container", "--image", out.tag, "--json", code], { cwd: dir, timeoutMs: 120_000 });
    const result = JSON.parse(r.stdout) as { ok: boolean; value: [string, string[]] };
    expect(result.ok, r.stdout).toBe(true);
    expect(result.value[0]).toBe("[1,2]\n");
    expect(result.value[1]).toContain("jq: Query JSON");
    expect(result.value[1]).toContain("wc: Count lines");
    expect(result.value[1].find((l) => l.startsWith("gone: "))).toMatch(/^gone: \(unavailable: command 'tcm-not-on-this-host' is not in the container image .*image build --with tcm-not-on-this-host/);
    await (await testDocker()).getImage(out.tag).remove({ force: true }).catch(() => undefined);
  }, 300_000);

  it("a value that is not a program or package name is refused before anything runs", async () => {
    const r = await cli(["image", "build", "--with", "--evil;rm"], { cwd: dir });
    expect(r.code).not.toBe(0);
    const r2 = await cli(["image", "build", "--with", "a;b"], { cwd: dir });
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(/"a;b" is not a program or package name/);
  });
});

describe("--executor container", () => {
  it("run: tools.list() and a shell command inside a container with the given limits", async () => {
    const r = await cli(["run", "--base", "demo", "--executor", "container", "--network", "none", "--memory-mb", "128", "--json", "[(await tools.list()).length > 0, (await tools.shell.exec({ command: 'uname -s' })).output]"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, value: [true, "Linux\n"] });
  });

  it("container flags with another executor are a usage error (exit 2)", async () => {
    // (--memory-mb is not one: every executor that can cap memory takes it, test/cli/memory-and-skills.test.ts.)
    const r = await cli(["run", "--base", "demo", "--image", "localhost/x:1", "1"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--image applies to --executor container only; got --executor subprocess/);
  });

  it("--workspace-dir and --mount: host tools, container commands and the code agree on every path (issue 32.2)", async () => {
    const ws = path.join(dir, "ws");
    const ro = path.join(dir, "ro");
    await mkdir(ws, { recursive: true });
    await mkdir(ro, { recursive: true });
    await writeFile(path.join(ws, "in.txt"), "a\nb\n");
    await writeFile(path.join(ro, "r.txt"), "read only\n");
    // The container's user (nobody) reads the mount and writes into the workspace.
    await chmod(dir, 0o755);
    await chmod(ro, 0o755);
    spawnSync("chown", ["-R", "65534:65534", ws]);
    const code = `const fs = await import("node:fs"); fs.writeFileSync("out.txt", "x\\ny\\nz\\n");
      let wrote = "no"; try { fs.writeFileSync("/data/w.txt", "x"); wrote = "yes"; } catch {}
      [process.cwd(), (await tools.wc.lines({ files: [${JSON.stringify(path.join(ws, "in.txt"))}, "out.txt"] })).trim(), (await tools.grep({ pattern: ".", paths: ["/data/r.txt"] })).trim(), wrote]`;
    const r = await cli(["run", "--base", "demo", "--executor", "container", "--workspace-dir", ws, "--mount", `${ro}:/data:ro`, "--json", code], { cwd: dir });
    expect(r.stderr).toBe("");
    const v = JSON.parse(r.stdout) as { ok: boolean; value: [string, string, string, string] };
    expect(v.ok).toBe(true);
    expect(v.value[0]).toBe(ws);
    expect(v.value[1]).toMatch(new RegExp(`2 ${ws}/in.txt\\s+3 out.txt\\s+5 total`));
    expect(v.value.slice(2)).toEqual(["read only", "no"]);
    // What the code wrote is on the host, in the workspace.
    expect(await readFile(path.join(ws, "out.txt"), "utf8")).toBe("x\ny\nz\n");
  });

  it("--mount and --workspace values are checked at the boundary (exit 2, nothing runs)", async () => {
    const bad: Array<[string[], RegExp]> = [
      [["--mount", `${dir}:data`], /DST must be an absolute path/],
      [["--mount", `${dir}:/a/../etc`], /DST must not contain '\.\.'/],
      [["--mount", `${dir}:/a,readonly=false`], /DST must not contain ','/],
      [["--mount", `${dir}:/a:rw:x`], /expected SRC:DST/],
      [["--mount", `${dir}:/a:rx`], /the mode must be ro or rw/],
      [["--mount", `${dir}/nope:/a`], /does not exist/],
      [["--workspace-dir", `${dir}/nope`], /does not exist/],
    ];
    for (const [flags, message] of bad) {
      const r = await cli(["run", "--base", "demo", "--executor", "container", ...flags, "1"], { cwd: dir });
      expect(r.code, flags.join(" ")).toBe(2);
      expect(r.stderr, flags.join(" ")).toMatch(message);
    }
    const other = await cli(["run", "--base", "demo", "--mount", `${dir}:/a`, "1"], { cwd: dir });
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/--mount applies to --executor container only/);
  });

  it("a missing image says the command that builds it", async () => {
    const r = await cli(["run", "--base", "demo", "--executor", "container", "--image", "localhost/nope:1", "--json", "1"], { cwd: dir });
    expect(JSON.parse(r.stdout).error.message).toMatch(/the container image localhost\/nope:1 is missing; build it with: ts-code-mode image build --tag localhost\/nope:1/);
  });
});

describe("ts-code-mode containers prune", () => {
  it("removes a labelled container whose owner process is gone, and leaves others", async () => {
    const docker = await testDocker();
    const deadPid = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" }).stdout.trim();
    const labels = (pid: string) => ({ [CONTAINER_LABEL]: "1", [OWNER_PID_LABEL]: pid, [OWNER_HOST_LABEL]: os.hostname() });
    const [orphan, live] = await Promise.all([
      docker.createContainer({ Image: defaultImageTag(), Cmd: ["sleep", "300"], Labels: labels(deadPid), HostConfig: { NetworkMode: "none" } }),
      docker.createContainer({ Image: defaultImageTag(), Cmd: ["sleep", "300"], Labels: labels(String(process.pid)), HostConfig: { NetworkMode: "none" } }),
    ]);
    try {
      const r = await cli(["containers", "prune", "--json"], { cwd: dir });
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).removed).toContain(orphan.id);
      expect(JSON.parse(r.stdout).removed).not.toContain(live.id);
      await expect(live.inspect()).resolves.toBeTruthy();
    } finally {
      await Promise.all([orphan.remove({ force: true }).catch(() => undefined), live.remove({ force: true })]);
    }
  });

  it("--all removes this user's running sessions' containers, never another user's or host's (issue 41)", async () => {
    const docker = await testDocker();
    const uid = process.getuid!();
    const labels = (extra: Record<string, string>) => ({ [CONTAINER_LABEL]: "1", [OWNER_PID_LABEL]: String(process.pid), [OWNER_HOST_LABEL]: os.hostname(), ...extra });
    const create = (extra: Record<string, string>) =>
      docker.createContainer({ Image: defaultImageTag(), Cmd: ["sleep", "300"], Labels: labels(extra), HostConfig: { NetworkMode: "none" } });
    const [own, otherUser, otherHost] = await Promise.all([
      create({ [OWNER_UID_LABEL]: String(uid) }),
      create({ [OWNER_UID_LABEL]: String(uid + 4242) }),
      create({ [OWNER_UID_LABEL]: String(uid), [OWNER_HOST_LABEL]: `not-${os.hostname()}` }),
    ]);
    try {
      const r = await cli(["containers", "prune", "--all", "--json"], { cwd: dir });
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout) as { removed: string[]; othersKept: number };
      expect(out.removed).toContain(own.id);
      expect(out.removed).not.toContain(otherUser.id);
      expect(out.removed).not.toContain(otherHost.id);
      expect(out.othersKept).toBeGreaterThanOrEqual(2);
      await expect(otherUser.inspect()).resolves.toBeTruthy();
      await expect(otherHost.inspect()).resolves.toBeTruthy();
    } finally {
      await Promise.all([own, otherUser, otherHost].map((c) => c.remove({ force: true }).catch(() => undefined)));
    }
  });
});
