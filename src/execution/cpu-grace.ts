/**
 * A grace period measured in the guest's own CPU time, for "answer within the grace or be judged
 * busy" (the deno engine asks its guest to confirm a stop after every run; a guest that does not
 * confirm is a runaway loop and its process is replaced, losing its variables).
 *
 * A fixed wall-clock grace confuses a guest that did not get a CPU with a guest that is busy: on a
 * loaded machine an idle guest can wait longer than the grace to be scheduled at all, and was
 * killed for it (a clean-clone CI run lost a sandbox's variables that way). What tells the two
 * apart is whether the process ran: a busy loop burns CPU all through the grace, a guest waiting
 * for its turn burns none. So the guest is judged busy once it has used `graceMs` of CPU since it
 * was asked, or once `maxWaitMs` of wall time have passed whatever it used (a guest that runs but
 * never answers cannot hold the host forever). Where the process's CPU time cannot be read (no
 * /proc), the grace is the wall clock, as before.
 */
import { readFileSync } from "node:fs";

/** Kernel clock ticks per second, in which /proc reports CPU time (USER_HZ: 100 on every Linux port that matters). */
const TICKS_PER_SECOND = 100;

/** CPU time (user + system, all threads) the process has used, in ms, or undefined where it cannot be read. */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined || process.platform !== "linux") return undefined;
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "latin1");
    // "pid (comm) state ppid ..." — comm may hold spaces and parentheses; utime and stime are
    // fields 14 and 15, that is the 12th and 13th after the command.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

export interface CpuGrace {
  /** The guest's CPU time that, spent without answering, means it is busy. */
  graceMs: number;
  /** Wall time after which the guest is judged busy whatever it used. */
  maxWaitMs: number;
}

/**
 * Calls `onBusy` once the process `pid` has used `graceMs` of CPU since now (looked at every
 * `graceMs` of wall time), or after `maxWaitMs`; returns a function that cancels the wait (the
 * guest answered). Without a readable CPU time, `onBusy` comes after `graceMs` of wall time.
 */
export function whenBusy(pid: number | undefined, grace: CpuGrace, onBusy: () => void): () => void {
  const started = processCpuMs(pid);
  const startedAt = performance.now();
  const look = (): void => {
    const used = started === undefined ? undefined : processCpuMs(pid);
    if (started === undefined || used === undefined || used - started >= grace.graceMs || performance.now() - startedAt >= grace.maxWaitMs) onBusy();
    else timer = setTimeout(look, grace.graceMs);
  };
  let timer = setTimeout(look, grace.graceMs);
  return () => clearTimeout(timer);
}
