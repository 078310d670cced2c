/**
 * Listing and pruning the run ledger (what `ts-code-mode runs list|prune` and DurableRuns use).
 */
import type { PendingCall } from "../execution/protocol.js";
import type { LedgerEntry, RunHeader, RunStore } from "../storage/runs.js";
import { pendingCalls } from "./pending.js";

export interface PruneOptions {
  /** Remove runs whose last change is older than this many ms. */
  olderThanMs?: number;
  /** Keep at most this many runs (the newest). */
  keep?: number;
  /** Report what would go, remove nothing. */
  dryRun?: boolean;
}

/** Removes runs past the bounds, newest kept; returns the ids removed (or that would be). */
export async function pruneRuns(store: RunStore, options: PruneOptions): Promise<string[]> {
  const cutoff = options.olderThanMs === undefined ? undefined : Date.now() - options.olderThanMs;
  // A store that can rank its runs without reading every header (FileStorage's stamps) does.
  if (store.prune) return store.prune({ ...(cutoff !== undefined ? { cutoffMs: cutoff } : {}), ...(options.keep !== undefined ? { keep: options.keep } : {}), dryRun: options.dryRun === true });
  const runs = await store.list();
  const doomed = runs.filter((r, i) => (options.keep !== undefined && i >= options.keep) || (cutoff !== undefined && Date.parse(r.updatedAt) < cutoff));
  if (!options.dryRun) for (const r of doomed) await store.delete(r.id);
  return doomed.map((r) => r.id);
}

/** A run's header without its code (which may be long), for listings. */
export function runSummary(h: RunHeader): Omit<RunHeader, "code" | "seed" | "continuation"> & { codePreview: string; expiresAt?: string } {
  const { code, seed: _seed, continuation, ...rest } = h;
  const firstLine = code.split("\n", 1)[0] ?? "";
  return { ...rest, codePreview: firstLine.length > 80 ? `${firstLine.slice(0, 80)}…` : firstLine, ...(continuation ? { expiresAt: continuation.expiresAt } : {}) };
}

/** One run as `runs show` and GET /runs/{id} give it: its summary, each call's state (arguments and results stay in the ledger), and the pending calls. */
export function runDetail(header: RunHeader, entries: readonly LedgerEntry[]): { run: ReturnType<typeof runSummary>; calls: Array<Omit<LedgerEntry, "args" | "result" | "tape">>; pending: PendingCall[] } {
  const calls = entries.map(({ args: _a, result: _r, tape: _t, ...rest }) => rest);
  return { run: runSummary(header), calls, pending: header.status === "paused" ? pendingCalls(entries) : [] };
}
