/**
 * Code, arguments and results never go into span attributes unless the application opts in: they
 * may hold secrets and personal data, and they can be large. `configureTelemetry({ content: {
 * maxChars } })` (or `--otel-content CHARS`) records them, each cut to `maxChars` characters.
 */
import { ValidationError } from "../errors.js";

export interface TelemetryOptions {
  /** Record the run's code and value, and tool calls' arguments and results, each cut to `maxChars`. Omit (or false) to record none. */
  content?: { maxChars: number } | false;
}

/** Longest `maxChars` accepted: an attribute is one string an exporter sends whole. */
export const MAX_CONTENT_CHARS = 65_536;

let maxChars = 0;

/** Process-wide, like the OpenTelemetry registration it refines. */
export function configureTelemetry(options: TelemetryOptions): void {
  const content = options.content;
  if (content === undefined || content === false) {
    maxChars = 0;
    return;
  }
  const n = content.maxChars;
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONTENT_CHARS) throw new ValidationError(`telemetry content.maxChars must be a whole number from 1 to ${MAX_CONTENT_CHARS}; got ${String(n)}`);
  maxChars = n;
}

/** `value` as at most maxChars characters, or undefined when content is not recorded. */
export function contentAttribute(value: unknown): string | undefined {
  if (maxChars === 0) return undefined;
  let text: string;
  if (typeof value === "string") text = value;
  else {
    try {
      // A replacer that stops early would still walk the whole value; slicing a bounded JSON is the
      // simple bound here, and only applications that opted in pay it.
      text = JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v instanceof Uint8Array ? `<${v.byteLength} bytes>` : v)) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > maxChars ? `${text.slice(0, maxChars)}…` : text;
}
