/**
 * Errors of durable runs. Each has a stable `name` (what front ends and agents branch on); the
 * message says what was wrong and what to do instead.
 */

/** On resume the code made a call the ledger does not have at that place. `seq` is the call's number. */
export class ReplayDivergenceError extends Error {
  override readonly name = "ReplayDivergenceError";
  constructor(
    message: string,
    readonly seq: number,
  ) {
    super(message);
  }
}

/** Not a continuation, or one whose signature does not match (altered, or signed with another key). */
export class ContinuationInvalidError extends Error {
  override readonly name = "ContinuationInvalidError";
}

/** The continuation's time ran out; the run stays paused in the ledger (rollback or inspect it). */
export class ContinuationExpiredError extends Error {
  override readonly name = "ContinuationExpiredError";
}

/** The continuation was already used (or a later pause replaced it): a run resumes once per pause. */
export class ContinuationUsedError extends Error {
  override readonly name = "ContinuationUsedError";
}

/** The continuation belongs to another workspace or another storage than this session's. */
export class ContinuationScopeError extends Error {
  override readonly name = "ContinuationScopeError";
}

/** The decisions do not answer the paused run's pending calls (one each, known ids, valid kinds). */
export class DecisionError extends Error {
  override readonly name = "DecisionError";
}

/** This executor or storage cannot record a durable run (see docs/durable-runs.md). */
export class DurableRunsUnsupportedError extends Error {
  override readonly name = "DurableRunsUnsupportedError";
}

/** The run reached a ledger bound (calls per run); the message names the bound and its option. */
export class LedgerLimitError extends Error {
  override readonly name = "LedgerLimitError";
}
