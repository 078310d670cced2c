/**
 * `agent run --chat` starts each agent call's code session on a spare executor
 * (pooledSessionFactory): the spare is a real child process started before the call asked for a
 * session, each call gets its own (variables never pass between calls), and close() ends the spares.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadProject } from "../../src/agents/files.js";
import { pooledSessionFactory } from "../../src/agents/session-factory.js";
import { ensureBuilt } from "../cli/harness.js";
import { waitFor } from "../helpers/processes.js";
import { removeProject, writeProject } from "./project.js";

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await writeProject([{ name: "main", tools: ["code"] }], { code_mode: { base: ".code-mode", executor: "subprocess" } });
}, 120_000);
afterAll(async () => {
  await removeProject(dir);
});

/** pids of live child.js processes (the subprocess executor's children) started by this test process. */
function guestChildren(): number[] {
  let out = "";
  try {
    out = execFileSync("ps", ["-o", "pid=,stat=,args=", "--ppid", String(process.pid)], { encoding: "utf8" });
  } catch {
    return []; // ps exits 1 when there are none
  }
  return out
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, stat, ...args]) => !stat?.startsWith("Z") && args.join(" ").includes("execution/subprocess/child.js"))
    .map(([pid]) => Number(pid));
}

it("each call's session runs in a spare started before it, never one an earlier call had; close() ends the spares", async () => {
  const project = await loadProject(dir);
  const sessions = pooledSessionFactory(1);
  try {
    const first = await sessions.create(project);
    const one = await first.run("var secret = 'first call'; process.pid");
    expect(one.ok).toBe(true);
    // The pool starts the next spare in the background.
    await waitFor(() => guestChildren().some((p) => p !== one.value), "a spare child", 20_000);
    const spare = guestChildren().find((p) => p !== one.value);
    const second = await sessions.create(project);
    const two = await second.run("[typeof secret, process.pid]");
    expect(two.value).toEqual(["undefined", spare]);
    await first.close();
    await second.close();
    await waitFor(() => guestChildren().length >= 1, "the next spare", 20_000);
  } finally {
    await sessions.close();
  }
  await waitFor(() => guestChildren().length === 0, "no child left after close()", 20_000);
});
