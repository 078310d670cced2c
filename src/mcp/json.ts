/**
 * Whether a run's value can go into `structuredContent` as it is. MCP carries JSON, and a value
 * that JSON would change silently (a Map becoming {}, a BigInt throwing, a Date becoming a string,
 * an undefined member vanishing) would mislead a program reading it; such values are left out and
 * the readable `display` still shows them. The check is the bounded walk (../values/json.ts), so a
 * DAG of 2^40 paths or a deep value costs the host a bounded amount of work.
 */
import type { JsonValue } from "../storage/protocol.js";
import { boundedJson } from "../values/json.js";

/** Deeper than this is treated as not representable. */
const MAX_DEPTH = 200;

/** `value` when JSON holds it exactly and its JSON text is at most `maxChars` long; otherwise undefined. */
export function exactJson(value: unknown, maxChars: number): JsonValue | undefined {
  if (value === undefined) return undefined;
  return boundedJson(value, { maxNodes: maxChars, maxDepth: MAX_DEPTH, maxBytes: maxChars }).ok ? (value as JsonValue) : undefined;
}
