/**
 * Ending every process the agent's code started, not only the child.
 *
 * On Linux the child's relatives are found by reading /proc before anything is killed: its
 * descendants (by parent pid, read while the child and what was found are stopped, so the tree
 * cannot change underneath), members of its group or session, and any process whose environment
 * carries the child's marker variable — inherited by everything it starts, so `detached`,
 * `nohup … &` and a `setsid` daemon that double-forked away from the tree are found too. A process
 * that both clears its environment and leaves the tree escapes; a container is the answer to that.
 * Elsewhere the child leads its own process group (see child-process.ts) and the group is killed.
 *
 * Only processes created after the child can be related to it, so only pids allocated since —
 * from the child's pid up to /proc/sys/kernel/ns_last_pid, across a wrap-around — are read. /proc
 * is read synchronously: small reads, and only when a child is killed (reset, close, a restart);
 * through the libuv thread pool the same took several times longer on a busy machine.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";

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
 * SIGKILL the child (`root`), its group, and on Linux every process found as described above; a
 * few rescans catch what was forked meanwhile. `rootAlive` false: the child has exited and its pid
 * may belong to someone else now, so only its group and session (ids the kernel does not reuse
 * while they have members) and the marker are trusted.
 */
export function killGuestProcesses(root: number, marker: string, rootAlive: boolean): number[] {
  if (process.platform === "win32") {
    if (rootAlive) signal(root, "SIGKILL");
    return [];
  }
  if (rootAlive) {
    signal(-root, "SIGSTOP");
    signal(root, "SIGSTOP");
  }
  if (!HAS_PROC) {
    killRoot(root, rootAlive);
    return [];
  }
  const needle = markerNeedle(marker);
  const found = stopRelatives(rootAlive ? root : null, root, needle);
  killRoot(root, rootAlive);
  for (const pid of found) signal(pid, "SIGKILL");
  for (let round = 0; round < 3 && found.size; round++) {
    const late = findGuestProcesses(null, root, needle);
    if (late.length === 0) break;
    for (const pid of late) {
      signal(pid, "SIGKILL");
      found.add(pid);
    }
  }
  return [...found];
}

/**
 * Resolves once every pid is dead (gone, or a zombie waiting to be reaped), or after `maxMs`.
 * SIGKILL is delivered when the process next runs, which on a busy machine can be milliseconds
 * after kill() returns: close() waits for this, so "closed" means nothing the guest started runs.
 */
export async function awaitProcessesGone(pids: readonly number[], maxMs = 2_000): Promise<void> {
  if (!HAS_PROC || pids.length === 0) return;
  const deadline = performance.now() + maxMs;
  let left = [...pids];
  for (;;) {
    left = left.filter((pid) => {
      try {
        return parseStat(readFileSync(`/proc/${pid}/stat`, "latin1")) !== null;
      } catch {
        return false;
      }
    });
    if (left.length === 0 || performance.now() >= deadline) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Freeze the live child (`root`) and what it started, found as for killGuestProcesses, between
 * runs (see ../freeze.ts). Returns the signal targets stopped (the child, its group elsewhere, the
 * pids found), which SIGCONT resumes. `relatives` is asked once the child is stopped: false (it
 * never had a child process, see ChildrenProbe) means only the child is stopped and /proc is not
 * swept — the sweep costs more than a run of trivial code.
 */
export function stopGuestProcesses(root: number, marker: string, relatives: () => boolean): number[] {
  if (process.platform === "win32") return [];
  signal(root, "SIGSTOP");
  if (!relatives()) return [root];
  // Elsewhere the child leads its own process group, and stopping the group stops what it started.
  if (!HAS_PROC) {
    signal(-root, "SIGSTOP");
    return [-root, root];
  }
  return [root, ...stopRelatives(root, root, markerNeedle(marker))];
}

/**
 * Whether a process has, or ever had, a child process, from its own /proc entry: a live (or
 * zombie) child is listed in the `children` file of the thread that started it, and a child it
 * reaped added its page faults (never zero for a process that ran) to cminflt/cmajflt in `stat`.
 * Everything the guest starts descends from such a child, double-forked daemons included. Asked
 * after every run, so the files stay open: re-reading an open /proc file costs a few µs, opening
 * it again about ten times that. Once true, always true. Unknown (no /proc): true.
 */
export class ChildrenProbe {
  private statFd: number | null = null;
  /** The `children` file of each of the process's threads, by thread id. */
  private readonly threads = new Map<string, number>();
  private seen = !HAS_PROC;
  private closed = false;
  private readonly buffer = Buffer.alloc(4_096);

  constructor(private readonly pid: number) {}

  hasHadChildren(): boolean {
    if (this.seen || this.closed) return true;
    try {
      this.statFd ??= openSync(`/proc/${this.pid}/stat`, "r");
      const text = this.read(this.statFd);
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
      // After the command: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt ...
      if (!(Number(fields[8]) === 0 && Number(fields[10]) === 0)) return (this.seen = true);
      const tids = new Set(readdirSync(`/proc/${this.pid}/task`));
      for (const [tid, fd] of this.threads) {
        if (tids.has(tid)) continue;
        closeQuietly(fd);
        this.threads.delete(tid);
      }
      for (const tid of tids) {
        let fd = this.threads.get(tid);
        if (fd === undefined) this.threads.set(tid, (fd = openSync(`/proc/${this.pid}/task/${tid}/children`, "r")));
        if (this.read(fd).trim()) return (this.seen = true);
      }
      return false;
    } catch {
      return true; // a thread ended meanwhile, or the process: the sweep decides
    }
  }

  close(): void {
    this.closed = true;
    if (this.statFd !== null) closeQuietly(this.statFd);
    for (const fd of this.threads.values()) closeQuietly(fd);
    this.threads.clear();
  }

  private read(fd: number): string {
    const n = readSync(fd, this.buffer, 0, this.buffer.length, 0);
    return this.buffer.toString("latin1", 0, n);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

function markerNeedle(marker: string): Buffer {
  return Buffer.from(`\0${GUEST_MARKER_ENV}=${marker}\0`);
}

/** With the child stopped: stop what was found, then look again (a child forked before the stop is in the tree now). */
function stopRelatives(treeRoot: number | null, group: number, needle: Buffer): Set<number> {
  const first = findGuestProcesses(treeRoot, group, needle);
  for (const pid of first) signal(pid, "SIGSTOP");
  if (first.length === 0) return new Set();
  const found = new Set(first);
  for (const pid of findGuestProcesses(treeRoot, group, needle)) {
    if (found.has(pid)) continue;
    found.add(pid);
    signal(pid, "SIGSTOP");
  }
  return found;
}

function killRoot(root: number, rootAlive: boolean): void {
  signal(-root, "SIGKILL");
  if (rootAlive) signal(root, "SIGKILL");
}

/** Pids (never the host's own) related to the child by tree (when `treeRoot` is given), group, session or marker. */
function findGuestProcesses(treeRoot: number | null, group: number, needle: Buffer): number[] {
  const table = readProcTable(group);
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
  for (const p of table) if (!found.has(p.pid) && p.pid !== process.pid && environHas(p.pid, needle)) found.add(p.pid);
  found.delete(process.pid);
  found.delete(group); // the child itself is killed by killRoot, only while its pid is surely its own
  return [...found];
}

/** Processes whose pid was allocated after `since` (itself included). */
function readProcTable(since: number): ProcInfo[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const newer = allocatedSince(since);
  const infos: ProcInfo[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n) || !newer(Number(n))) continue;
    try {
      const info = parseStat(readFileSync(`/proc/${n}/stat`, "latin1"));
      if (info) infos.push(info);
    } catch {
      // the process ended meanwhile
    }
  }
  return infos;
}

/** Whether a pid was allocated after `since` (pids are handed out in increasing order and wrap around). */
function allocatedSince(since: number): (pid: number) => boolean {
  let last: number;
  try {
    last = Number.parseInt(readFileSync("/proc/sys/kernel/ns_last_pid", "latin1"), 10);
  } catch {
    return () => true; // unknown: consider every process
  }
  if (!Number.isInteger(last)) return () => true;
  return last >= since ? (pid) => pid >= since && pid <= last : (pid) => pid >= since || pid <= last;
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

function environHas(pid: number, needle: Buffer): boolean {
  try {
    // A leading NUL so that the marker matches only as a whole variable; the first one has none.
    const env = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)]);
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
