/**
 * Ending every process the agent's code started, not only the child.
 *
 * The child runs in its own session and process group (spawned `detached`), so one signal to the
 * group ends it and whatever it started plainly or with `nohup … &`. Processes that leave the group
 * — `spawn(..., { detached: true })`, `setsid` — are found on Linux by reading /proc before
 * anything is killed: the child's descendants (by parent pid), members of its group or session,
 * and any process whose environment carries the child's marker variable (inherited by everything
 * it starts, so a daemon that double-forked away from the tree is still found). A process that
 * both clears its environment and leaves the tree escapes; a container is the answer to that.
 */
import { readdir, readFile } from "node:fs/promises";

/** Name of the environment variable that marks the child and everything it starts. */
export const GUEST_MARKER_ENV = "TS_CODE_MODE_GUEST";

interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  sid: number;
}

const HAS_PROC = process.platform === "linux";

/**
 * SIGKILL the group led by `root` and, on Linux, every process found as described above. A live
 * child's group is stopped first, so its tree cannot change while /proc is read; then a few
 * rescans catch what was forked meanwhile by processes outside the group. `rootAlive` false: the
 * child has exited and its pid may belong to someone else now, so only the group (whose id the
 * kernel does not reuse while it has members) and the marker are trusted.
 */
export async function killGuestProcesses(root: number, marker: string, rootAlive: boolean): Promise<void> {
  if (rootAlive) signal(-root, "SIGSTOP");
  if (!HAS_PROC) return killRoot(root, rootAlive);
  const needle = Buffer.from(`\0${GUEST_MARKER_ENV}=${marker}\0`);
  for (let round = 0; round < 4; round++) {
    const found = await findGuestProcesses(round === 0 && rootAlive ? root : null, root, needle);
    if (round === 0) killRoot(root, rootAlive);
    if (found.length === 0) return;
    for (const pid of found) signal(pid, "SIGKILL");
  }
}

function killRoot(root: number, rootAlive: boolean): void {
  signal(-root, "SIGKILL");
  if (rootAlive) signal(root, "SIGKILL");
}

/** Pids (never the host's own) related to the child by tree (when `treeRoot` is given), group, session or marker. */
async function findGuestProcesses(treeRoot: number | null, group: number, needle: Buffer): Promise<number[]> {
  const table = await readProcTable();
  const found = new Set<number>();
  if (treeRoot !== null) {
    const children = new Map<number, number[]>();
    for (const p of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
    const stack = [treeRoot];
    while (stack.length) {
      for (const c of children.get(stack.pop()!) ?? []) {
        if (!found.has(c)) {
          found.add(c);
          stack.push(c);
        }
      }
    }
  }
  for (const p of table) if (p.pgrp === group || p.sid === group) found.add(p.pid);
  await Promise.all(
    table
      .filter((p) => !found.has(p.pid) && p.pid !== process.pid)
      .map(async (p) => {
        if (await environHas(p.pid, needle)) found.add(p.pid);
      }),
  );
  found.delete(process.pid);
  found.delete(group); // the child itself is killed by killRoot, only while its pid is surely its own
  return [...found];
}

async function readProcTable(): Promise<ProcInfo[]> {
  let names: string[];
  try {
    names = await readdir("/proc");
  } catch {
    return [];
  }
  const infos = await Promise.all(
    names.filter((n) => /^\d+$/.test(n)).map(async (n) => {
      try {
        return parseStat(await readFile(`/proc/${n}/stat`, "latin1"));
      } catch {
        return null; // the process ended meanwhile
      }
    }),
  );
  return infos.filter((i): i is ProcInfo => i !== null);
}

/** /proc/<pid>/stat: "pid (comm) state ppid pgrp session ..."; comm may contain spaces and parentheses. Null for a dead process. */
function parseStat(text: string): ProcInfo | null {
  const close = text.lastIndexOf(")");
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(" ");
  if (fields[0] === "Z" || fields[0] === "X") return null; // dead, waiting to be reaped
  const pid = Number.parseInt(text, 10);
  const [ppid, pgrp, sid] = [fields[1], fields[2], fields[3]].map((f) => Number(f));
  if (![pid, ppid, pgrp, sid].every((n) => Number.isInteger(n))) return null;
  return { pid, ppid: ppid!, pgrp: pgrp!, sid: sid! };
}

async function environHas(pid: number, needle: Buffer): Promise<boolean> {
  try {
    // A leading NUL so that the marker matches only as a whole variable; the first one has none.
    const env = Buffer.concat([Buffer.from([0]), await readFile(`/proc/${pid}/environ`)]);
    return env.includes(needle);
  } catch {
    return false; // another user's process, or gone
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone (ESRCH) or not ours (EPERM)
  }
}
