/**
 * Bounds on what one tool result may carry in `structuredContent`, the counterpart of `bounded()`
 * for the text. A store or a tool folder can be arbitrarily large and a tool result is one JSON-RPC
 * message: a list keeps the items that fit, a long string keeps its head and tail around a marker,
 * and the result says so in a `truncated` field naming how to get the rest from code.
 */
import { cutMiddle } from "./truncate.js";

/** Room for cutMiddle's marker and JSON escaping of the kept text. */
const MARKER_ROOM = 64;

export interface Truncation {
  /** Items (or characters) shown and there were. */
  shown: number;
  total: number;
  unit: "items" | "characters";
  /** How to get the rest, e.g. a run_code expression. */
  rest: string;
}

/** The longest prefix of `items` whose JSON fits in `maxChars`. */
export function fitItems<T>(items: readonly T[], maxChars: number): { items: T[]; truncated: boolean } {
  let used = 2;
  let n = 0;
  for (const item of items) {
    used += (JSON.stringify(item)?.length ?? 4) + 1;
    if (used > maxChars) break;
    n++;
  }
  return { items: items.slice(0, n), truncated: n < items.length };
}

/** `text` itself, or its head and tail (with a marker) in at most about `maxChars` characters of JSON. */
export function fitText(text: string, maxChars: number): { text: string; truncated: boolean } {
  // JSON may escape characters (quotes, newlines, control characters): measure the JSON form.
  const json = JSON.stringify(text).length;
  if (json <= maxChars) return { text, truncated: false };
  const keep = Math.max(0, Math.floor((text.length * (maxChars - MARKER_ROOM)) / json));
  return { text: cutMiddle(text, keep), truncated: true };
}

/** The note appended to a reply's text when its data was cut. */
export function truncationNote(t: Truncation): string {
  return `[${t.shown.toLocaleString("en-US")} of ${t.total.toLocaleString("en-US")} ${t.unit} shown (--max-output); get the rest in run_code: ${t.rest}]`;
}
