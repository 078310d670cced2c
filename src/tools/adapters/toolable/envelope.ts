/**
 * Reading what a toolable executable answers: the response envelope (success / error / partial),
 * stream events, sampling requests and discovery documents. Everything here comes from a foreign
 * process: strict on what becomes a ToolError (a known code, bounded text), tolerant of missing
 * optional fields (as the wire format document asks).
 */
import { ToolError, type ToolErrorCode } from "../../../errors.js";

export const TOOLABLE_CODES: readonly ToolErrorCode[] = ["INVALID_INPUT", "MISSING_PARAM", "INVALID_PATH", "NOT_FOUND", "CONFLICT", "PRECONDITION", "TIMEOUT", "PERMISSION", "INTERNAL", "DEPENDENCY"];
/** Longest tool-supplied message/suggestion kept in a ToolError. */
const MAX_TEXT = 4_000;

export interface PartialResult {
  result: unknown;
  summary: unknown;
  errors: unknown[];
}

/** A progress/log/artifact event of a running tool, as the host sees it. */
export type ToolableEventBody =
  | { type: "progress"; message: string; percent?: number }
  | { type: "log"; level: string; message: string }
  | { type: "artifact"; name: string; uri: string };

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function cut(text: string, max = MAX_TEXT): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? cut(v) : undefined;
}

/** A stream event or stderr notification in the host's shape, or null when it is none. */
export function eventBody(raw: Record<string, unknown>): ToolableEventBody | null {
  const type = raw["type"] === "notification" ? raw["kind"] : raw["type"];
  if (type === "progress") {
    const percent = raw["percent"];
    return { type, message: str(raw["message"]) ?? "", ...(typeof percent === "number" && Number.isFinite(percent) ? { percent } : {}) };
  }
  if (type === "log") return { type, level: str(raw["level"]) ?? "info", message: str(raw["message"]) ?? "" };
  if (type === "artifact") return { type, name: str(raw["name"]) ?? "", uri: str(raw["uri"]) ?? "" };
  return null;
}

/** The `error` object of an envelope as a ToolError (unknown codes become INTERNAL). */
export function envelopeError(error: unknown, at: { tool: string; callable: string | null; label: string }, note = ""): ToolError {
  const e = isObject(error) ? error : {};
  const rawCode = e["code"];
  const known = typeof rawCode === "string" && (TOOLABLE_CODES as readonly string[]).includes(rawCode);
  const code: ToolErrorCode = known ? (rawCode as ToolErrorCode) : "INTERNAL";
  const message = str(e["message"]) ?? "(no message)";
  const suggestion = str(e["suggestion"]);
  const context = e["context"];
  const recoverable = e["recoverable"];
  return new ToolError({
    tool: at.tool,
    callable: at.callable,
    code,
    message: `${at.label}: ${known ? "" : `[${typeof rawCode === "string" ? cut(rawCode, 40) : "no code"}] `}${message}${note}`,
    ...(typeof recoverable === "boolean" ? { recoverable } : {}),
    ...(suggestion !== undefined ? { suggestion } : {}),
    ...(isObject(context) ? { context } : {}),
  });
}

/**
 * The value a call resolves to: `success` → result, `partial` → { result, summary, errors };
 * `error` is thrown as a ToolError. Anything else is INTERNAL (the tool broke the protocol).
 */
export function settleEnvelope(envelope: Record<string, unknown>, at: { tool: string; callable: string | null; label: string }, note = ""): unknown {
  const status = envelope["status"];
  if (status === "success") return envelope["result"] ?? null;
  if (status === "partial") {
    const errors = envelope["errors"];
    return { result: envelope["result"] ?? null, summary: envelope["summary"] ?? null, errors: Array.isArray(errors) ? errors : [] } satisfies PartialResult;
  }
  if (status === "error") throw envelopeError(envelope["error"], at, note);
  throw new ToolError({
    tool: at.tool,
    callable: at.callable,
    code: "INTERNAL",
    message: `${at.label}: the tool answered JSON that is not a toolable envelope (status ${JSON.stringify(status) ?? "missing"}; expected "success", "error" or "partial")`,
  });
}

/** JSON of a whole answer (discovery output is pretty-printed), else its last JSON line. */
export function parseAnswer(stdout: string, lastJson: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  try {
    const whole: unknown = JSON.parse(stdout);
    if (isObject(whole)) return whole;
  } catch {
    /* prints before the answer: use the last JSON line */
  }
  return lastJson;
}
