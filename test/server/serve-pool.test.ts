/**
 * `serve` keeps started executors for new sessions (--spare-executors): the spares are real child
 * processes of the server, each session gets its own, and they die with the server even when it is
 * killed without a chance to clean up (the parent-death signal every child carries).
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";
import { processesWith, waitFor } from "../helpers/processes.js";
import { api, cleanup, ensureBuilt, startServe, tempDir, type ServeProcess } from "./harness.js";

const servers: ServeProcess[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  await Promise.all(dirs.splice(0).map((d) => cleanup(d)));
});

/** pids of the live processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  let out = "";
  try {
    out = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" });
  } catch {
    return []; // ps exits 1 when there are none
  }
  return out
    .split("\n")
    .map((l) => Number(l.trim()))
    .filter((p) => p > 0 && processesWith(String(p)).some((q) => q.pid === p));
}

it("keeps spares as child processes, gives each session its own, and they die with a killed server", async () => {
  const dir = await tempDir();
  dirs.push(dir);
  const s = await startServe(["--no-auth", "--base", dir, "--tools", EXAMPLE_TOOLS_PATH, "--spare-executors", "2"]);
  servers.push(s);
  const serverPid = s.child.pid as number;
  await waitFor(() => childrenOf(serverPid).length >= 2, "two spare children", 20_000);
  const spares = childrenOf(serverPid);

  const pids: number[] = [];
  for (const secret of ["a", "b"]) {
    const created = await api(s.url, "POST", "/sessions", { json: {}, token: null });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = (created.body as { id: string }).id;
    const run = await api(s.url, "POST", `/sessions/${id}/run`, { json: { code: `const before = typeof mine; var mine = "${secret}"; [before, process.pid]` }, token: null });
    const [before, pid] = (run.body as { value: [string, number] }).value;
    expect(before).toBe("undefined");
    pids.push(pid);
  }
  // Both sessions ran in children that were started before they were created.
  expect(pids[0]).not.toBe(pids[1]);
  expect(spares).toEqual(expect.arrayContaining(pids));

  await waitFor(() => childrenOf(serverPid).length >= 4, "the pool to refill", 20_000);
  const all = childrenOf(serverPid);
  await s.stop("SIGKILL");
  await waitFor(() => all.every((p) => !processesWith(String(p)).some((q) => q.pid === p)), "every child to die with the server", 10_000);
}, 90_000);
