/**
 * scripts/prerequisites.mjs (the pretest step and `.ci/run`'s first step): a prerequisite that is
 * missing and cannot be installed stops the run with exit 1 and ONE line saying what to install.
 * The PATH given to the script holds only `node`, which hides redis-server, podman (and apt-get).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../cli/harness.js";

const SCRIPT = path.join(REPO, "scripts/prerequisites.mjs");
let onlyNode: string;
/** node plus an apt-get that records each call in a log and fails: it proves what the script runs, and when. */
let withFakeApt: string;
let aptLog: string;

function runScript(args: string[], env: Record<string, string>) {
  const { PATH: _path, TS_CODE_MODE_NO_INSTALL: _no, ...rest } = process.env;
  return spawnSync(process.execPath, [SCRIPT, ...args], { cwd: REPO, encoding: "utf8", env: { ...rest, ...env } });
}

beforeAll(async () => {
  onlyNode = await mkdtemp(path.join(os.tmpdir(), "tcm-prereq-path-"));
  await symlink(process.execPath, path.join(onlyNode, "node"));
  withFakeApt = await mkdtemp(path.join(os.tmpdir(), "tcm-prereq-apt-"));
  aptLog = path.join(withFakeApt, "apt-calls.log");
  await symlink(process.execPath, path.join(withFakeApt, "node"));
  await writeFile(path.join(withFakeApt, "apt-get"), `#!/bin/sh\necho "apt-get $*" >> ${JSON.stringify(aptLog)}\necho "fake apt-get called: $*"\nexit 1\n`);
  await chmod(path.join(withFakeApt, "apt-get"), 0o755);
});
afterAll(async () => {
  await rm(onlyNode, { recursive: true, force: true, maxRetries: 5 });
  await rm(withFakeApt, { recursive: true, force: true, maxRetries: 5 });
});

describe("scripts/prerequisites.mjs", () => {
  it("stops with one line naming redis-server and the apt package when installing is turned off", () => {
    const r = runScript([], { PATH: onlyNode, TS_CODE_MODE_NO_INSTALL: "1" });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^prerequisites: missing redis-server .*installing is turned off.*install it: apt-get install -y redis-server podman runc catatonit bubblewrap haproxy chromium$/);
  });

  it("--check is the same as TS_CODE_MODE_NO_INSTALL=1", () => {
    const r = runScript(["--check", "--system"], { PATH: onlyNode });
    expect(r.status).toBe(1);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("apt-get install -y redis-server podman runc catatonit bubblewrap haproxy");
  });

  it("says why it cannot install when apt-get is not there, in one line", () => {
    const r = runScript(["--system"], { PATH: onlyNode });
    expect(r.status).toBe(1);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^prerequisites: missing redis-server .*apt-get is not available here; install it: apt-get install -y redis-server podman runc catatonit bubblewrap haproxy chromium$/);
  });

  it.runIf(process.getuid?.() === 0)("--dry-run says what it would change (the apt install of the ONE list) and changes nothing", async () => {
    await rm(aptLog, { force: true });
    const r = runScript(["--dry-run", "--system"], { PATH: withFakeApt });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^prerequisites: would install redis-server podman runc catatonit bubblewrap haproxy chromium with apt-get \(apt-get update, then apt-get install --no-install-recommends; for redis-server \(/);
    expect(lines.every((l) => l.startsWith("prerequisites: would "))).toBe(true);
    expect(existsSync(aptLog)).toBe(false);
  });

  it.runIf(process.getuid?.() === 0)("announces a change on stderr before making it", async () => {
    await rm(aptLog, { force: true });
    const r = runScript(["--system"], { PATH: withFakeApt });
    expect(r.status).toBe(1);
    const announced = r.stderr.indexOf("prerequisites: install redis-server podman runc catatonit bubblewrap haproxy chromium with apt-get");
    const ran = r.stderr.indexOf("fake apt-get called: update");
    expect(announced).toBeGreaterThanOrEqual(0);
    expect(ran).toBeGreaterThan(announced);
    expect(existsSync(aptLog)).toBe(true);
  });

  it("--dry-run on this machine, where everything is present, has nothing to change", () => {
    const r = runScript(["--dry-run"], { PATH: process.env["PATH"] ?? "" });
    expect(r.stderr).toBe("prerequisites: nothing to change (everything is in place)\n");
    expect(r.status).toBe(0);
  });

  it("passes quietly on this machine, where everything is present", () => {
    const r = runScript(["--check"], { PATH: process.env["PATH"] ?? "" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});
