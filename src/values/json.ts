/**
 * JSON text of a guest value, bounded: the value is walked first (walk.ts) and JSON.stringify runs
 * only on a value the walk found to be exact JSON within the limits. A DAG of 2^40 paths, a value
 * nested 100,000 deep or one whose text would pass the limit comes back as a reason instead of
 * stalling the host or filling its memory.
 */
import { ValidationError } from "../errors.js";
import { describeCut } from "./explain.js";
import { ARTIFACT_JSON_LIMITS } from "./limits.js";
import { walk, type WalkLimits } from "./walk.js";

export type JsonOutcome = { ok: true; text: string } | { ok: false; reason: string; tooLarge: boolean };

/**
 * `JSON.stringify(value, null, indent)` when JSON holds `value` exactly (no Map, Date, BigInt,
 * undefined member, cycle, ...) and the walk stays within `limits`; otherwise why not, e.g.
 * "the value is more than 1,000,000 values (2^40 paths through shared references …) at $[0][0]".
 */
export function boundedJson(value: unknown, limits: WalkLimits, indent = 0): JsonOutcome {
  const report = walk(value, limits, { mode: "json", indent });
  if (report.problem) return { ok: false, reason: `${report.problem.path} is ${report.problem.text}, which JSON cannot hold exactly`, tooLarge: false };
  if (report.cut) return { ok: false, reason: `the value is ${describeCut(value, report, limits)}`, tooLarge: true };
  let text: string;
  try {
    text = JSON.stringify(value, null, indent);
  } catch (err) {
    return { ok: false, reason: `it could not be written as JSON: ${err instanceof Error ? err.message : String(err)}`, tooLarge: false };
  }
  // The walk's size is an estimate; the text's length is the real bound.
  if (text.length > limits.maxBytes) {
    return { ok: false, reason: `its JSON text is ${text.length.toLocaleString("en-US")} characters, more than ${limits.maxBytes.toLocaleString("en-US")}`, tooLarge: true };
  }
  return { ok: true, text };
}

/**
 * Throws a ValidationError when `value`, written as JSON with 2-space indentation, would pass
 * `limits` (values, depth, characters). Whether it IS JSON is left to the caller's own check.
 */
export function assertWithinJsonLimits(value: unknown, what: string, limits: WalkLimits = ARTIFACT_JSON_LIMITS): void {
  const report = walk(value, limits, { mode: "data", indent: 2 });
  if (report.cut) throw new ValidationError(`${what} is too large or too deep to store as JSON: it is ${describeCut(value, report, limits)}. Store big data as text or bytes, or split it.`);
}
