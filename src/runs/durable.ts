/**
 * Durable runs: a session's runs recorded in the ledger (storage.runs), paused instead of blocked
 * when a call needs a human's decision, resumed from a signed continuation by any process sharing
 * the storage, and rolled back through the tools' `revert` declarations.
 *
 * A resume re-runs the run's code from the start: calls the ledger holds are served from it (the
 * tools do not run again), decided calls run with the decision, and the guest's clock and random
 * numbers replay (execution/guest/determinism.ts), so the code takes the same path it took.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { NotFoundError } from "../errors.js";
import { determinismEpilogue, determinismPrologue } from "../execution/guest/determinism.js";
import type { HostServices } from "../execution/host.js";
import type { ExecutionResult, Executor, HostFacade, PendingCall, RunOptions } from "../execution/protocol.js";
import type { StorageBackend } from "../storage/protocol.js";
import { validateRunId, type LedgerEntry, type RunHeader, type RunStore } from "../storage/runs.js";
import { decodeValue, encodeValue } from "./codec.js";
import { continuationKey, newNonce, signContinuation, storageScope, verifyContinuation } from "./continuation.js";
import { ContinuationUsedError, DecisionError, DurableRunsUnsupportedError } from "./errors.js";
import { ActiveRun, RunRecorder, pendingId, type Decision, type LedgerBounds } from "./recorder.js";
import { pruneRuns } from "./retention.js";
import { toPendingCall } from "./pending.js";

export interface DurableOptions {
  /** Signs continuations (HMAC-SHA256), at least 32 bytes; default TS_CODE_MODE_RUNS_SECRET. Every process resuming runs needs the same. */
  secret?: string | Uint8Array;
  /** How long a continuation stays valid. Default 24 h. */
  continuationTtlMs?: number;
  /** Namespace calls one run may log. Default 10,000. */
  maxCallsPerRun?: number;
  /** Largest logged call (arguments + result, encoded); a larger result makes the run unresumable. Default 4 MiB. */
  maxEntryBytes?: number;
  /** Largest ledger of one run. Default 64 MiB. */
  maxRunBytes?: number;
  /** Runs kept in the ledger (oldest pruned first, at most once a minute on a new run). Default 1,000. */
  maxRuns?: number;
  /** Runs older than this are pruned. Default 7 days. */
  retentionMs?: number;
}

export interface RollbackReport {
  runId: string;
  /** Calls undone, newest first, with the call that undid each. */
  reverted: Array<{ id: string; tool: string; callable: string | null; by: { callable: string | null; args: Record<string, unknown> } }>;
  /** Calls whose revert was tried and failed. */
  failed: Array<{ id: string; tool: string; callable: string | null; error: string }>;
  /** Applied calls that change something and declare no revert: what a human must undo. */
  irreversible: Array<{ id: string; call: string; why: string }>;
}

const DEFAULTS = {
  continuationTtlMs: 24 * 3_600_000,
  maxCallsPerRun: 10_000,
  maxEntryBytes: 4 * 1_048_576,
  maxRunBytes: 64 * 1_048_576,
  maxRuns: 1_000,
  retentionMs: 7 * 86_400_000,
};
const PRUNE_EVERY_MS = 60_000;

/** Operations that change nothing: a rollback has nothing to undo for them. */
const READ_ONLY = new Set([
  "tools.list", "tools.search", "tools.describe", "tools.callables", "workflows.list", "workflows.search", "workflows.get", "workflows.load",
  "artifacts.load", "artifacts.get", "artifacts.list", "artifacts.exists", "deps.list", "skills.list", "skills.search", "skills.load", "skills.read",
]);

export class DurableRuns {
  private readonly key: Buffer;
  private readonly settings: typeof DEFAULTS;
  private readonly recorder = new RunRecorder();
  private hooked: HostServices | null = null;
  private lastPrune = 0;

  constructor(
    private readonly storage: StorageBackend,
    private readonly executor: Executor,
    private readonly services: () => Promise<HostFacade>,
    options: DurableOptions = {},
  ) {
    this.key = continuationKey(options.secret);
    const settings = { ...DEFAULTS };
    for (const k of Object.keys(DEFAULTS) as Array<keyof typeof DEFAULTS>) {
      const v = options[k];
      if (v === undefined) continue;
      if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1) throw new TypeError(`new Session({ durable: { ${k} } }): expected a positive whole number; got ${String(v)}`);
      settings[k] = v;
    }
    this.settings = settings;
  }

  private get store(): RunStore {
    const store = this.storage.runs;
    if (!store) throw new DurableRunsUnsupportedError("This storage keeps no run ledger (FileStorage and RedisStorage do); durable runs need one.");
    return store;
  }

  private get bounds(): LedgerBounds {
    return { maxCalls: this.settings.maxCallsPerRun, maxEntryBytes: this.settings.maxEntryBytes, maxRunBytes: this.settings.maxRunBytes };
  }

  /** The executor's HostServices with the ledger hook installed; refuses executors whose calls do not pass one here. */
  private async host(): Promise<HostServices> {
    const facade = await this.services();
    const host = facade as Partial<HostServices>;
    if (typeof host.setRunHook !== "function") {
      throw new DurableRunsUnsupportedError(
        `The ${this.executor.kind} executor's namespace calls are answered in another process (a serve node), so this session cannot record them; run durable sessions on the server itself (its sessions take { durable }).`,
      );
    }
    if (facade.language !== "typescript") {
      throw new DurableRunsUnsupportedError("Durable runs replay the guest's clock and random numbers in TypeScript guests only; Python sessions cannot pause and resume yet.");
    }
    if (this.hooked !== facade) {
      host.setRunHook(this.recorder.hook);
      this.hooked = facade as HostServices;
    }
    return facade as HostServices;
  }

  /** Runs `code` as a new durable run. */
  async run(code: string, options: RunOptions = {}): Promise<ExecutionResult> {
    const host = await this.host();
    void this.pruneNow();
    const now = new Date().toISOString();
    const header: RunHeader = {
      id: randomUUID(),
      status: "running",
      code,
      createdAt: now,
      updatedAt: now,
      executor: this.executor.kind,
      fingerprint: await fingerprint(host),
      seed: randomBytes(16).toString("hex"),
      calls: 0,
      bytes: 0,
      resumes: 0,
    };
    await this.store.putHeader(header);
    return this.execute(header, [], new Map(), options);
  }

  /**
   * Resumes a paused run with a decision for each pending call. Refusals throw, with stable names:
   * ContinuationInvalidError, ContinuationScopeError, ContinuationExpiredError,
   * ContinuationUsedError, DecisionError, NotFoundError.
   */
  async resume(continuation: string, decisions: readonly Decision[], options: RunOptions = {}): Promise<ExecutionResult> {
    const payload = verifyContinuation(this.key, continuation, storageScope(this.storage.toDescriptor()));
    const host = await this.host();
    const store = this.store;
    const header = await store.getHeader(payload.run);
    if (!header) throw new NotFoundError(`No run ${payload.run} in this storage's ledger (pruned?).`);
    if (header.status !== "paused" || header.continuation?.nonce !== payload.nonce) {
      throw new ContinuationUsedError(`This continuation of run ${header.id} was already used (the run is ${header.status}${header.status === "paused" ? " again, with a newer continuation" : ""}); a paused run resumes once per pause.`);
    }
    const logged = await store.entries(header.id);
    const byId = checkDecisions(logged.filter((e) => e.state === "pending"), decisions);
    const now = await fingerprint(host);
    if (now !== header.fingerprint) {
      throw new DecisionError(`Run ${header.id} was recorded against another set of tools than this session has; resume it where the same tool definitions are loaded.`);
    }
    if (!(await store.claim(header.id, payload.nonce))) throw new ContinuationUsedError(`This continuation of run ${header.id} was already used; a paused run resumes once per pause.`);
    const resumed: RunHeader = { ...header, status: "running", resumes: header.resumes + 1, updatedAt: new Date().toISOString() };
    delete resumed.continuation;
    await store.putHeader(resumed);
    return this.execute(resumed, logged, byId, options);
  }

  /**
   * Resumes the paused run `runId` by its id: for a front end (the console) that holds the signing
   * secret but not the continuation the pause returned. Holding the secret already lets a process
   * sign any continuation, so this grants nothing new; the continuation is re-issued from the
   * ledger's nonce and claimed once, exactly as `resume` claims one.
   */
  async resumeRun(runId: string, decisions: readonly Decision[], options: RunOptions = {}): Promise<ExecutionResult> {
    const header = await this.store.getHeader(validateRunId(runId));
    if (!header) throw new NotFoundError(`No run ${runId} in this storage's ledger (pruned?).`);
    if (header.status !== "paused" || !header.continuation) throw new ContinuationUsedError(`Run ${header.id} is ${header.status}, not paused: there is nothing to decide.`);
    const scope = storageScope(this.storage.toDescriptor());
    const exp = Date.parse(header.continuation.expiresAt);
    const continuation = signContinuation(this.key, { run: header.id, nonce: header.continuation.nonce, exp, ws: scope.workspace, st: scope.storage });
    return this.resume(continuation, decisions, options);
  }

  private async execute(header: RunHeader, logged: readonly LedgerEntry[], decisions: ReadonlyMap<string, Decision>, options: RunOptions): Promise<ExecutionResult> {
    const controller = new AbortController();
    const cancel = () => controller.abort();
    options.signal?.addEventListener("abort", cancel, { once: true });
    if (options.signal?.aborted) controller.abort();
    const active = new ActiveRun(header.id, this.store, this.bounds, logged, decisions, () => controller.abort());
    this.recorder.add(active);
    const tape = [...logged].sort((a, b) => a.seq - b.seq).flatMap((e) => e.tape ?? []);
    let result: ExecutionResult;
    try {
      // The prologue as the run's prelude, where the executor takes one: the code's preparation is
      // then cached by the code's own text (a resume, a loop of runs of the same code) and the
      // prologue (~3 KB) is never parsed as TypeScript, which was most of a durable run's fixed cost.
      const prologue = determinismPrologue({ seed: header.seed, tape });
      const preludes = this.executor.runsPreludes === true;
      result = await this.executor.run(preludes ? header.code : `${prologue} ${header.code}`, { ...options, signal: controller.signal, runId: header.id, ...(preludes ? { prelude: prologue } : {}) });
      // A pause logs its pending calls with the rest: one write.
      if (!active.divergence && active.isPaused && !(options.signal?.aborted ?? false)) active.logPending();
      await active.flushed();
    } finally {
      this.recorder.remove(active);
      options.signal?.removeEventListener("abort", cancel);
    }
    // The realm's own clock and random numbers back, for the session's next (maybe not durable) run.
    await this.executor.run(determinismEpilogue, { timeoutMs: 10_000 }).catch(() => undefined);
    const done: RunHeader = { ...header, updatedAt: new Date().toISOString(), calls: Math.max(header.calls, active.calls), bytes: active.bytes };
    if (active.divergence) {
      const error = { name: active.divergence.name, message: active.divergence.message };
      await this.store.putHeader({ ...done, status: "failed", outcome: { ok: false, error } });
      return { ...result, ok: false, value: undefined, display: error.message, error, runId: header.id, status: "failed" };
    }
    if (active.isPaused && !(options.signal?.aborted ?? false)) {
      const nonce = newNonce();
      const exp = Date.now() + this.settings.continuationTtlMs;
      await this.store.putHeader({ ...done, status: "paused", continuation: { nonce, expiresAt: new Date(exp).toISOString() } });
      const scope = storageScope(this.storage.toDescriptor());
      const continuation = signContinuation(this.key, { run: header.id, nonce, exp, ws: scope.workspace, st: scope.storage });
      const pending = active.pending.map(toPendingCall);
      const display = explainPause(header.id, pending);
      return {
        ok: false,
        value: undefined,
        display,
        stdout: result.stdout,
        stderr: result.stderr,
        error: { name: "RunPaused", message: display },
        durationMs: result.durationMs,
        runId: header.id,
        status: "paused",
        pending,
        continuation,
      };
    }
    const outcome: RunHeader["outcome"] = result.ok ? { ok: true, display: result.display.slice(0, 2_000) } : { ok: false, ...(result.error ? { error: { name: result.error.name, message: result.error.message.slice(0, 2_000) } } : {}) };
    await this.store.putHeader({ ...done, status: result.ok ? "completed" : "failed", outcome });
    return { ...result, runId: header.id, status: result.ok ? "completed" : "failed" };
  }

  /**
   * Undoes a run's applied calls, newest first, with each tool's `revert` declaration, and records
   * it in the ledger (state "reverted"). Calls that change something and declare no revert are listed.
   */
  async rollback(runId: string): Promise<RollbackReport> {
    const host = await this.host();
    const store = this.store;
    const header = await store.getHeader(runId);
    if (!header) throw new NotFoundError(`No run ${runId} in this storage's ledger.`);
    const report: RollbackReport = { runId, reverted: [], failed: [], irreversible: [] };
    const entries = (await store.entries(runId)).filter((e) => e.state === "applied" && !e.error).sort((a, b) => b.seq - a.seq);
    for (const e of entries) {
      const id = pendingId(e.seq);
      if (READ_ONLY.has(`${e.ns}.${e.op}`)) continue;
      if (e.ns !== "tools" || e.op !== "call") {
        report.irreversible.push({ id, call: `${e.ns}.${e.op}`, why: `${e.ns}.${e.op} has no revert` });
        continue;
      }
      const [tool, callable, given] = decodeValue(e.args) as [string, string | null, Record<string, unknown> | undefined];
      const args = e.decision?.args ? (decodeValue(e.decision.args) as Record<string, unknown>) : (given ?? {});
      const label = `tools.${tool}${callable === null ? "" : `.${callable}`}`;
      let revert: Awaited<ReturnType<HostServices["tools"]["revertOf"]>>;
      try {
        revert = await host.tools.revertOf(tool, callable, args, e.result ? decodeValue(e.result) : undefined);
      } catch (err) {
        report.irreversible.push({ id, call: label, why: err instanceof Error ? err.message : String(err) });
        continue;
      }
      if (!revert) {
        report.irreversible.push({ id, call: label, why: `${label} declares no revert` });
        continue;
      }
      const at = new Date().toISOString();
      try {
        await host.tools.call(tool, revert.callable, revert.args, { executor: "host", runId: `rollback-${runId}`, approved: true });
        report.reverted.push({ id, tool, callable, by: revert });
        await store.putEntries(runId, [{ ...e, state: "reverted", revert: { ok: true, at, detail: `tools.${tool}${revert.callable === null ? "" : `.${revert.callable}`}(${JSON.stringify(revert.args)})` } }]);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        report.failed.push({ id, tool, callable, error: message });
        await store.putEntries(runId, [{ ...e, revert: { ok: false, at, detail: message.slice(0, 2_000) } }]);
      }
    }
    const outcome = { ok: report.failed.length === 0, display: `reverted ${report.reverted.length}, failed ${report.failed.length}, irreversible ${report.irreversible.length}` };
    await store.putHeader({ ...header, status: "rolled-back", updatedAt: new Date().toISOString(), outcome });
    return report;
  }

  /** Removes runs past the retention or the count bound, at most once a minute; never fails the run. */
  private async pruneNow(): Promise<void> {
    if (Date.now() - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = Date.now();
    await pruneRuns(this.store, { olderThanMs: this.settings.retentionMs, keep: this.settings.maxRuns }).catch(() => undefined);
  }
}

function checkDecisions(pending: readonly LedgerEntry[], decisions: readonly Decision[]): Map<string, Decision> {
  if (!Array.isArray(decisions)) throw new DecisionError('decisions must be an array of { id, decision: "approve" | "edit" | "reject", args?, reason? }');
  const wanted = new Set(pending.map((e) => pendingId(e.seq)));
  const byId = new Map<string, Decision>();
  for (const d of decisions as unknown[]) {
    const o = d as Partial<Decision> | null;
    if (typeof o !== "object" || o === null || typeof o.id !== "string") throw new DecisionError("each decision needs an id (one of the pending calls' ids)");
    if (!wanted.has(o.id)) throw new DecisionError(`no pending call ${JSON.stringify(o.id)} in this run; pending: ${[...wanted].join(", ") || "(none)"}`);
    if (byId.has(o.id)) throw new DecisionError(`two decisions for ${o.id}`);
    if (o.decision !== "approve" && o.decision !== "edit" && o.decision !== "reject") throw new DecisionError(`decision of ${o.id} must be "approve", "edit" or "reject"`);
    if (o.decision === "edit" && (typeof o.args !== "object" || o.args === null || Array.isArray(o.args))) throw new DecisionError(`"edit" of ${o.id} needs args: the call's new arguments (an object)`);
    if (o.reason !== undefined && typeof o.reason !== "string") throw new DecisionError(`reason of ${o.id} must be a string`);
    encodeValue(o.args ?? null);
    byId.set(o.id, { id: o.id, decision: o.decision, ...(o.args ? { args: o.args } : {}), ...(o.reason !== undefined ? { reason: o.reason.slice(0, 2_000) } : {}) });
  }
  const missing = [...wanted].filter((id) => !byId.has(id));
  if (missing.length) throw new DecisionError(`every pending call needs a decision; missing: ${missing.join(", ")}`);
  return byId;
}

/** What a person (or a model) reads about a pause. */
export function explainPause(runId: string, pending: readonly PendingCall[]): string {
  const lines = pending.map((p) => {
    const args = JSON.stringify(p.args) ?? "";
    return `  ${p.id}: tools.${p.tool}${p.callable ? `.${p.callable}` : ""}(${args.length > 300 ? `${args.slice(0, 300)}…` : args}) — ${p.reason}`;
  });
  return (
    `The run paused: ${pending.length === 1 ? "1 call waits" : `${pending.length} calls wait`} for a decision (run ${runId}).\n${lines.join("\n")}\n` +
    'Nothing after these calls ran. Resume with the continuation and a decision for each: { id, decision: "approve" | "edit" | "reject", args?, reason? }.'
  );
}

/** The tool set a run was recorded against: names and signatures of every callable. */
async function fingerprint(host: HostServices): Promise<string> {
  const tools = await host.tools.list();
  const shape = tools.map((t) => [t.name, t.callables.map((c) => c.signature)]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  return createHash("sha256").update(JSON.stringify(shape)).digest("base64url").slice(0, 22);
}
