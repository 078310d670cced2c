/**
 * Was a container that exited with 137 killed by its memory cap, or by a SIGKILL / `process.exit(137)`
 * of its own? The exit code cannot tell them apart. The engine's State.OOMKilled can, but reads
 * false on cgroup v1 (podman here), and the container's cgroup (memory.oom_control, failcnt) is
 * gone by the time the engine reports the exit. What survives is the kernel's log: a memory-cgroup
 * OOM kill is logged with the cgroup's path, which carries the container id
 * (`oom-kill:...,oom_memcg=/libpod_parent/libpod-<id>,...`). It is read from /dev/kmsg when this
 * process can (the engine runs on this machine, as root); elsewhere only the engine's word counts.
 */
import { closeSync, openSync, readSync, constants } from "node:fs";

/** Records read from the kernel log at most (its ring buffer holds a few thousand). */
const MAX_RECORDS = 50_000;
const RECORD_BYTES = 16 * 1024;

export interface OomEvidence {
  /** True when the engine or the kernel says the cap's OOM killer ended it. */
  oomKilled: boolean;
  /** Where the answer came from, for messages and tests. */
  source: "engine" | "kernel-log" | "none";
}

export async function oomEvidence(container: { id: string; inspect(): Promise<{ State?: { OOMKilled?: boolean } }> }): Promise<OomEvidence> {
  try {
    if ((await container.inspect()).State?.OOMKilled === true) return { oomKilled: true, source: "engine" };
  } catch {
    // gone already: the kernel log may still say
  }
  const logged = kernelLogNamesOomKill(container.id);
  return logged === null ? { oomKilled: false, source: "none" } : { oomKilled: logged, source: "kernel-log" };
}

/** True when the kernel log holds a memory-cgroup OOM kill in the cgroup of `containerId`; null when the log cannot be read. */
export function kernelLogNamesOomKill(containerId: string): boolean | null {
  if (!/^[0-9a-f]{12,64}$/.test(containerId)) return false;
  let fd: number;
  try {
    fd = openSync("/dev/kmsg", constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  const buf = Buffer.alloc(RECORD_BYTES);
  try {
    for (let i = 0; i < MAX_RECORDS; i++) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        // EPIPE: records were overwritten while reading; the next read goes on with the oldest left.
        if (code === "EPIPE") continue;
        break; // EAGAIN: the end of the log
      }
      if (n <= 0) break;
      const record = buf.toString("utf8", 0, n);
      if (record.includes(containerId) && /oom-kill:|Memory cgroup out of memory/.test(record)) return true;
    }
    return false;
  } finally {
    closeSync(fd);
  }
}
