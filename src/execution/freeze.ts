/**
 * Freezing a guest's process between runs (issue 13: after a run ends, nothing of the guest
 * executes until the next run). SIGSTOP stops everything a process does — its timers, sockets,
 * worker threads, promise loops, Node's own timers — and SIGCONT lets it go on where it was, with
 * its variables. The deno engine (sandbox/deno/process.ts) and the subprocess executor
 * (subprocess/child-process.ts) both freeze through this module.
 *
 * A frozen process cannot notice its host going away (its stdin or IPC channel closing), so only a
 * process started through deathSignalLauncher — which the kernel kills when the host dies, however
 * it dies, even while frozen — is frozen. Elsewhere (not Linux, no setpriv) nothing is frozen and
 * the executors say so in their capabilities.
 *
 * SIGKILL works on a stopped process (SIGTERM would wait for SIGCONT), so killing a frozen process
 * needs no resume first.
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";

let launcher: string | null | undefined;
/** A setpriv larger than this is not read (a real one is ~80 KB). */
const MAX_LAUNCHER_BYTES = 4 * 1024 * 1024;

/**
 * util-linux's `setpriv`, which starts a program with PR_SET_PDEATHSIG = SIGKILL: the kernel kills
 * it when the host process dies, however it dies (even SIGKILL, even while frozen). setpriv execs
 * the program, so the pid is the program's. Null where there is none (not Linux, or not
 * installed); then processes are not frozen.
 */
export function deathSignalLauncher(): string | null {
  if (launcher !== undefined) return launcher;
  launcher = null;
  if (process.platform !== "linux") return launcher;
  for (const dir of ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]) {
    const candidate = path.join(dir, "setpriv");
    try {
      // --pdeathsig came with util-linux 2.33; an older setpriv would fail every start. Its help
      // text is compiled into the binary, so reading it (~80 KB, well under a millisecond) answers
      // without running `setpriv --help`, a synchronous spawn that blocked the first session's
      // start (and an MCP server's handshake) for ~5 ms.
      if (statSync(candidate).size > MAX_LAUNCHER_BYTES) continue;
      if (readFileSync(candidate).includes("--pdeathsig")) launcher = candidate;
    } catch {
      continue; // not there, or not readable: try the next folder
    }
    break;
  }
  return launcher;
}

/** How to start `command args` so that it dies with the host; `freezable` says whether it may then be frozen. */
export function withDeathSignal(command: string, args: readonly string[]): { command: string; args: string[]; freezable: boolean } {
  const wrapper = deathSignalLauncher();
  return wrapper ? { command: wrapper, args: ["--pdeathsig", "KILL", "--", command, ...args], freezable: true } : { command, args: [...args], freezable: false };
}

/**
 * The frozen state of one guest process (and, for the subprocess executor, what it started).
 * `stop` SIGSTOPs what belongs to the guest and returns the signal targets it stopped (pids, or
 * -pgid for a group); resume() sends SIGCONT to exactly those. Null `stop`: this process is not
 * freezable (see withDeathSignal) and freeze() does nothing.
 */
export class Freezer {
  private stopped: readonly number[] | null = null;

  constructor(private readonly stop: (() => readonly number[]) | null) {}

  /** Stop the guest until resume(); true when it is frozen. */
  freeze(): boolean {
    if (this.stopped === null && this.stop) {
      const targets = this.stop();
      this.stopped = targets.length ? targets : null;
    }
    return this.stopped !== null;
  }

  resume(): void {
    const targets = this.stopped;
    this.stopped = null;
    for (const target of targets ?? []) signal(target, "SIGCONT");
  }

  /** The process ended (its pid may be reused): never signal what was stopped. */
  forget(): void {
    this.stopped = null;
  }

  get isFrozen(): boolean {
    return this.stopped !== null;
  }
}

function signal(target: number, sig: NodeJS.Signals): void {
  try {
    process.kill(target, sig);
  } catch {
    // already gone (ESRCH) or not ours (EPERM)
  }
}
