/**
 * HTML built from tagged templates that escape every interpolated value: nothing the agent wrote
 * (a workflow's source, an artifact's name, a tool's output) reaches a page as markup. Only values
 * that are already `SafeHtml` (made by `html` itself) are inserted as they are.
 */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (ch) => ESCAPES[ch]!);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? "";
  values.forEach((v, i) => (out += render(v) + (strings[i + 1] ?? "")));
  return new SafeHtml(out);
}

/** JSON for display (pretty, bounded): values the agent wrote can be huge. */
export function prettyJson(value: unknown, maxChars = 20_000): string {
  let text: string;
  try {
    text = JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v instanceof Uint8Array ? `<${v.byteLength} bytes>` : v), 2) ?? String(value);
  } catch {
    text = String(value);
  }
  return clip(text, maxChars);
}

export function clip(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}\n… (${text.length - maxChars} more characters)` : text;
}

/** A query string (values URL-encoded); the result goes into an href, which `html` escapes again. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}
