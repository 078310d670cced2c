/**
 * scripts/prerequisites.mjs (the pretest step and `.ci/run`'s first step): a prerequisite that is
 * missing and cannot be installed stops the run with exit 1 and ONE line saying what to install.
 * The PATH given to the script holds only `node`, which hides redis-server, podman (and apt-get).
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../cli/harness.js";

const SCRIPT = path.join(REPO, "scripts/prerequisites.mjs");
let onlyNode: string;

function runScript(args: string[], env: Record<string, string>) {
  const { PATH: _path, TS_CODE_MODE_NO_INSTALL: _no, ...rest } = process.env;
  return spawnSync(process.execPath, [SCRIPT, ...args], { cwd: REPO, encoding: "utf8", env: { ...rest, ...env } });
}

beforeAll(async () => {
  onlyNode = await mkdtemp(path.join(os.tmpdir(), "tcm-prereq-path-"));
  await symlink(process.execPath, path.join(onlyNode, "node"));
});
afterAll(async () => {
  await rm(onlyNode, { recursive: true, force: true });
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

  it("passes quietly on this machine, where everything is present", () => {
    const r = runScript(["--check"], { PATH: process.env["PATH"] ?? "" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});
