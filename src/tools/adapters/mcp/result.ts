/**
 * What an MCP `tools/call` result becomes for the agent, and what a failed one becomes as a
 * ToolError. The order of unwrapping (documented for users):
 *
 *   1. `structuredContent`, when the server sent it (what an `outputSchema` describes);
 *   2. else, when every content block is text: the texts joined with "\n", parsed as JSON when
 *      that text is a JSON object or array (so `JSON.stringify`-ing servers give back values);
 *   3. else (images, audio, resources, mixed content): the content array as the server sent it;
 *   4. no content at all: null.
 *
 * `isError: true` is a ToolError whose message is a bounded excerpt of the error text, with code
 * INTERNAL unless the text clearly says otherwise (invalid arguments, not found, permission,
 * timeout).
 */
import { ToolError, type ToolErrorCode } from "../../../errors.js";

/** How much of an error text or stderr goes into a ToolError. */
export const MCP_EXCERPT_CHARS = 2_000;

export interface CallLabel {
  tool: string;
  callable: string | null;
  /** `tools.math.add` / `tools.math["get-weather"]`, for messages. */
  label: string;
}

function textBlocks(content: readonly unknown[]): string[] | null {
  const texts: string[] = [];
  for (const block of content) {
    if (typeof block !== "object" || block === null) return null;
    const b = block as { type?: unknown; text?: unknown };
    if (b.type !== "text" || typeof b.text !== "string") return null;
    texts.push(b.text);
  }
  return texts;
}

function parseJsonContainer(text: string): { value: unknown } | null {
  const t = text.trim();
  const first = t[0];
  if ((first !== "{" && first !== "[") || (t[t.length - 1] !== "}" && t[t.length - 1] !== "]")) return null;
  try {
    return { value: JSON.parse(t) as unknown };
  } catch {
    return null;
  }
}

/** The value a successful call resolves to (see the order above). */
export function unwrapResult(result: Record<string, unknown>): unknown {
  if (result["structuredContent"] !== undefined) return result["structuredContent"];
  const content = Array.isArray(result["content"]) ? (result["content"] as unknown[]) : [];
  // A pre-2025 server may answer with the compatibility shape `{ toolResult }`.
  if (content.length === 0 && result["toolResult"] !== undefined) return result["toolResult"];
  if (content.length === 0) return null;
  const texts = textBlocks(content);
  if (!texts) return content;
  const joined = texts.join("\n");
  const json = parseJsonContainer(joined);
  return json ? json.value : joined;
}

/** All text of a result's content blocks (for error messages). */
export function resultText(result: Record<string, unknown>): string {
  const content = Array.isArray(result["content"]) ? (result["content"] as unknown[]) : [];
  const parts: string[] = [];
  for (const block of content) {
    const b = block as { type?: unknown; text?: unknown } | null;
    if (b && b.type === "text" && typeof b.text === "string") parts.push(b.text);
  }
  return parts.join("\n").trim();
}

/** Replace every secret value by `***`. Secrets are sorted longest first by the schema. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 3) out = out.split(s).join("***");
  return out;
}

/** The first `max` characters (errors say what went wrong first), marked when cut. */
export function excerpt(text: string, max = MCP_EXCERPT_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

/**
 * The ToolError code an error text clearly asks for; INTERNAL otherwise. MCP servers built on the
 * SDK report bad arguments as `MCP error -32602: Input validation error: ...` and unknown tools as
 * `MCP error -32602: Tool x not found`.
 */
export function errorCodeFromText(text: string): ToolErrorCode {
  if (/\btool\s+\S+\s+not found\b/i.test(text)) return "NOT_FOUND";
  if (/-32602|\binput validation error\b|\binvalid (arguments?|params|parameters?|input)\b/i.test(text)) return "INVALID_INPUT";
  if (/\bmissing required (argument|parameter|field)\b/i.test(text)) return "MISSING_PARAM";
  if (/\b(timed out|timeout)\b/i.test(text)) return "TIMEOUT";
  if (/\b(permission denied|forbidden|unauthori[sz]ed|access denied|EACCES|EPERM)\b/i.test(text)) return "PERMISSION";
  if (/\b(not found|no such file|does not exist|ENOENT)\b/i.test(text)) return "NOT_FOUND";
  return "INTERNAL";
}

/** The ToolError for a result with `isError: true`. */
export function resultError(result: Record<string, unknown>, at: CallLabel, secrets: readonly string[]): ToolError {
  const text = redact(resultText(result), secrets);
  const shown = text ? excerpt(text) : "(the server gave no error text)";
  return new ToolError({ tool: at.tool, callable: at.callable, code: text ? errorCodeFromText(text) : "INTERNAL", message: `${at.label} failed: ${shown}` });
}
