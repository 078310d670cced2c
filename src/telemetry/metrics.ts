/**
 * Metrics through the OpenTelemetry metrics API, with the same no-op rule as spans. The API has no
 * proxy meter: instruments made before an SDK registers stay no-ops, so they are made (again)
 * whenever the global meter provider is a different one.
 */
import type { Attributes, Counter, Histogram, UpDownCounter } from "@opentelemetry/api";
import { liveApi } from "./api.js";
import { ATTR, METRIC, SCOPE } from "./names.js";

interface Instruments {
  provider: unknown;
  runs: Counter;
  runDuration: Histogram;
  toolCalls: Counter;
  toolDuration: Histogram;
  errors: Counter;
  sessionsOpen: UpDownCounter;
  executorRestarts: Counter;
  ledgerEntries: Counter;
  ledgerBytes: Counter;
}

let cache: Instruments | undefined;

function instruments(): Instruments | undefined {
  const api = liveApi();
  if (!api) return undefined;
  const provider = api.metrics.getMeterProvider();
  if (cache?.provider === provider) return cache;
  const meter = provider.getMeter(SCOPE);
  cache = {
    provider,
    runs: meter.createCounter(METRIC.runs, { description: "Runs of agent code (session.run)" }),
    runDuration: meter.createHistogram(METRIC.runDuration, { description: "Duration of runs", unit: "s" }),
    toolCalls: meter.createCounter(METRIC.toolCalls, { description: "Tool calls made by agent code" }),
    toolDuration: meter.createHistogram(METRIC.toolDuration, { description: "Duration of tool calls, middleware included", unit: "s" }),
    errors: meter.createCounter(METRIC.errors, { description: "Failed runs and namespace calls, by error name" }),
    sessionsOpen: meter.createUpDownCounter(METRIC.sessionsOpen, { description: "Sessions started and not yet closed" }),
    executorRestarts: meter.createCounter(METRIC.executorRestarts, { description: "Executor processes or sandboxes replaced (timeouts, crashes, memory)" }),
    ledgerEntries: meter.createCounter(METRIC.ledgerEntries, { description: "Run-ledger entries written by durable runs" }),
    ledgerBytes: meter.createCounter(METRIC.ledgerBytes, { description: "Bytes of encoded arguments and results written to run ledgers", unit: "By" }),
  };
  return cache;
}

export function recordRun(attributes: { executor: string; language: string; ok: boolean; errorName: string | undefined }, durationMs: number): void {
  const m = instruments();
  if (!m) return;
  const attrs: Attributes = { [ATTR.executor]: attributes.executor, [ATTR.language]: attributes.language, [ATTR.ok]: attributes.ok };
  if (attributes.errorName) attrs[ATTR.errorType] = attributes.errorName;
  m.runs.add(1, attrs);
  m.runDuration.record(durationMs / 1000, attrs);
  if (attributes.errorName) m.errors.add(1, { [ATTR.errorType]: attributes.errorName, [ATTR.errorSource]: "run" });
}

export function recordToolCall(attributes: { tool: string; executor: string; ok: boolean; errorName: string | undefined }, durationMs: number): void {
  const m = instruments();
  if (!m) return;
  const attrs: Attributes = { [ATTR.tool]: attributes.tool, [ATTR.executor]: attributes.executor, [ATTR.ok]: attributes.ok };
  if (attributes.errorName) attrs[ATTR.errorType] = attributes.errorName;
  m.toolCalls.add(1, attrs);
  m.toolDuration.record(durationMs / 1000, attrs);
}

/** A failed namespace call (tools, workflows, artifacts, deps, skills), by error name. */
export function recordCallError(namespace: string, errorName: string): void {
  instruments()?.errors.add(1, { [ATTR.errorType]: errorName, [ATTR.errorSource]: namespace });
}

export function recordSessionOpened(executor: string): void {
  instruments()?.sessionsOpen.add(1, { [ATTR.executor]: executor });
}

export function recordSessionClosed(executor: string): void {
  instruments()?.sessionsOpen.add(-1, { [ATTR.executor]: executor });
}

export function recordExecutorRestart(executor: string, reason: string): void {
  instruments()?.executorRestarts.add(1, { [ATTR.executor]: executor, [ATTR.restartReason]: reason });
}

/** A batch of ledger entries written (durable runs): how the run ledgers grow. */
export function recordLedgerWrite(entries: number, bytes: number): void {
  const m = instruments();
  if (!m) return;
  m.ledgerEntries.add(entries);
  m.ledgerBytes.add(bytes);
}
