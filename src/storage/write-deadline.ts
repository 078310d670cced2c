/**
 * A run's deadline, as the storage writes it starts see it (issue 35.3). A run that reports
 * TimeoutError must never have a write of its own land afterwards: the agent reads "timed out",
 * retries or gives up, and a save that then appears would be a ghost. So each namespace call of a
 * run carries the run's deadline (HostServices.dispatch sets it from the call context) and every
 * store write started inside that call is fenced by it:
 *
 * - Redis: the write's fence falls at the deadline, on the server's clock (connection.ts): a copy
 *   of the write that reaches the script after it does nothing, however long the server was frozen.
 * - Files: the rename that commits a write is not started within FILE_COMMIT_MARGIN_MS of the
 *   deadline (a rename is a local syscall, far shorter than the margin).
 *
 * Either way such a write fails with StorageError code "DEADLINE" and was not applied. The deadline
 * travels in an AsyncLocalStorage, so the stores' signatures stay what users call; writes made
 * outside a run (the CLI, the host's own API) have no deadline.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { StorageError } from "../errors.js";

const current = new AsyncLocalStorage<number>();

/** Runs `fn` with writes fenced at `deadlineMs` (epoch ms, Date.now()'s clock); undefined: no deadline. */
export function withWriteDeadline<T>(deadlineMs: number | undefined, fn: () => T): T {
  return deadlineMs === undefined || !Number.isFinite(deadlineMs) ? current.exit(fn) : current.run(deadlineMs, fn);
}

/** The deadline of writes started now, or undefined. */
export function writeDeadline(): number | undefined {
  return current.getStore();
}

/** A file write does not start its commit (a rename or unlink) closer than this to the deadline. */
export const FILE_COMMIT_MARGIN_MS = 250;

/** Throws DEADLINE when a file commit started now could end after the run's deadline. */
export function checkFileCommit(op: string): void {
  const deadline = writeDeadline();
  if (deadline !== undefined && Date.now() > deadline - FILE_COMMIT_MARGIN_MS) throw deadlinePassed(op, "the store");
}

export function deadlinePassed(op: string, where: string): StorageError {
  return new StorageError(`Cannot ${op}: the run's time ran out before ${where} could apply it, so it was not applied.`, { code: "DEADLINE" });
}
