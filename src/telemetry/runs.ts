/**
 * The `code_mode.session.run` span and the run metrics. A run never throws (its failures are
 * values), so the span is marked from the ExecutionResult here rather than from a rejection.
 */
import type { ExecutionResult } from "../execution/protocol.js";
import { CALL_ARGS_LIMITS } from "../values/limits.js";
import { walk } from "../values/walk.js";
import { contentAttribute } from "./content.js";
import { recordRun } from "./metrics.js";
import { ATTR } from "./names.js";
import { failSpan, inSpan, type Span } from "./spans.js";

export const RUN_SPAN = "code_mode.session.run";

/** Runs `run` (a session's run) in its span; records its metrics. `language` is known once the session started. */
export function traceRun(executor: string, language: () => string, code: string, run: () => Promise<ExecutionResult>): Promise<ExecutionResult> {
  return inSpan(RUN_SPAN, { [ATTR.executor]: executor }, async (span) => {
    const result = await run();
    const lang = language();
    if (span) markRun(span, result, lang, code);
    recordRun({ executor, language: lang, ok: result.ok, errorName: result.error?.name }, result.durationMs);
    return result;
  });
}

function markRun(span: Span, result: ExecutionResult, language: string, code: string): void {
  span.setAttributes({
    [ATTR.language]: language,
    [ATTR.ok]: result.ok,
    [ATTR.runDurationMs]: Math.round(result.durationMs * 1000) / 1000,
    // Bounded: the value crossed from the guest as data within these limits already.
    [ATTR.runValueBytes]: walk(result.value, CALL_ARGS_LIMITS, { mode: "data" }).bytes,
  });
  const codeText = contentAttribute(code);
  if (codeText !== undefined) {
    span.setAttribute(ATTR.runCode, codeText);
    // The display is the value's bounded rendering: never the whole value.
    const valueText = contentAttribute(result.display);
    if (valueText !== undefined) span.setAttribute(ATTR.runValue, valueText);
  }
  if (result.error) failSpan(span, result.error, false);
}
