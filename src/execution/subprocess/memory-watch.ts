/**
 * maxMemoryMb for the whole child process. `--max-old-space-size` only caps V8's heap, and Buffers,
 * typed arrays and native allocations live outside it (a child capped at 64 MB reached 819 MB).
 * The kernel limits that would cover them do not work for Node: V8 reserves many GB of address
 * space at start-up, so RLIMIT_AS or RLIMIT_DATA of any useful size makes `node` crash before it
 * runs. So the host polls the child's own resident memory — anonymous plus shared-memory pages from
 * /proc/<pid>/status, not the Node binary mapped from disk — and kills it past the cap. Between two
 * polls the child can allocate past the cap for at most MEMORY_POLL_MS. Linux only; elsewhere only
 * the heap cap applies, and capabilities() says so.
 */
import { readFileSync } from "node:fs";

export const MEMORY_POLL_MS = 20;

export const canWatchMemory = process.platform === "linux" && ownResidentMb(process.pid) !== null;

export class MemoryWatch {
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(pid: number, limitMb: number, onExceeded: (residentMb: number) => void) {
    this.timer = setInterval(() => {
      const mb = ownResidentMb(pid);
      if (mb === null) return this.stop(); // the process is gone
      if (mb > limitMb) {
        this.stop();
        onExceeded(mb);
      }
    }, MEMORY_POLL_MS);
    // The watch must not keep the host alive; the child's IPC channel decides that.
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** RssAnon + RssShmem of `pid` in MB, or null when unknown (no /proc, process gone). */
export function ownResidentMb(pid: number): number | null {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "latin1");
  } catch {
    return null;
  }
  const anon = /RssAnon:\s+(\d+) kB/.exec(status);
  const shmem = /RssShmem:\s+(\d+) kB/.exec(status);
  if (!anon) return null;
  return (Number(anon[1]) + Number(shmem?.[1] ?? 0)) / 1024;
}
