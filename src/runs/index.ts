/** Durable runs: the run ledger, pause/resume with signed continuations, rollback (docs/durable-runs.md). */
export { DurableRuns, explainPause, type DurableOptions, type RollbackReport } from "./durable.js";
export type { Decision } from "./recorder.js";
export { pruneRuns, runDetail, runSummary, type PruneOptions } from "./retention.js";
export { pendingCalls } from "./pending.js";
export {
  ContinuationExpiredError,
  ContinuationInvalidError,
  ContinuationScopeError,
  ContinuationUsedError,
  DecisionError,
  DurableRunsUnsupportedError,
  LedgerLimitError,
  ReplayDivergenceError,
} from "./errors.js";
export type { CallState, LedgerEntry, RunHeader, RunStatus, RunStore } from "../storage/runs.js";
