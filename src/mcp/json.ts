/**
 * Whether a run's value can go into `structuredContent` as it is. MCP carries JSON, and a value
 * that JSON would change silently (a Map becoming {}, a BigInt throwing, a Date becoming a string,
 * an undefined member vanishing) would mislead a program reading it; such values are left out and
 * the readable `display` still shows them.
 */
import type { JsonValue } from "../storage/protocol.js";

/** Deeper than this is treated as not representable rather than risking the stack. */
const MAX_DEPTH = 200;

/** `value` when JSON holds it exactly and its JSON text is at most `maxChars` long; otherwise undefined. */
export function exactJson(value: unknown, maxChars: number): JsonValue | undefined {
  if (value === undefined || !isExactJson(value, new Set(), 0)) return undefined;
  return JSON.stringify(value).length <= maxChars ? (value as JsonValue) : undefined;
}

function isExactJson(value: unknown, ancestors: Set<object>, depth: number): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value !== "object" || depth > MAX_DEPTH || ancestors.has(value)) return false;
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) if (!(i in value) || !isExactJson(value[i], ancestors, depth + 1)) return false;
      return true;
    }
    // A plain object of any realm (values come from a vm context or over IPC).
    if (Object.prototype.toString.call(value) !== "[object Object]") return false;
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== null && Object.getPrototypeOf(proto) !== null) return false;
    if (Object.getOwnPropertySymbols(value).length > 0) return false;
    return Object.values(value).every((v) => isExactJson(v, ancestors, depth + 1));
  } finally {
    ancestors.delete(value);
  }
}
