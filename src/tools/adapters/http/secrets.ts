/**
 * Secrets of an HTTP tool: `${VAR}` references in header values, resolved from the environment at
 * call time, and the redaction that keeps their values out of every message this adapter produces.
 *
 * A server may echo a request header back in an error body, and Node's own errors may quote a
 * header value, so redaction is applied to all text that reaches an error (body excerpts, network
 * error causes, URLs) — not only to text we compose ourselves.
 */

export const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const REFERENCE_RE = /\$\{([^}]*)\}/g;
/** What replaces a secret in any text shown to a caller. */
export const REDACTED = "***";
/** Header names whose values are credentials even when written literally in the YAML. */
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(["authorization", "proxy-authorization", "cookie"]);
/** Query keys whose values are masked in URLs shown in errors (api_key, access_token, sig, ...). */
const SENSITIVE_QUERY_KEY_RE = /token|key|secret|passw|pwd|auth|sig|credential|session|cookie/i;

export function hasControlChar(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Why a header value template is malformed, or null. Checked at load time. */
export function templateProblem(template: string): string | null {
  if (hasControlChar(template.replace(/\t/g, ""))) return "header values cannot contain line breaks or control characters";
  let from = 0;
  for (;;) {
    const start = template.indexOf("${", from);
    if (start < 0) return null;
    const end = template.indexOf("}", start + 2);
    if (end < 0) return `unterminated \${ at position ${start}; write \${VAR_NAME}`;
    const name = template.slice(start + 2, end);
    if (!ENV_NAME_RE.test(name)) return `\${${name}} is not an environment variable reference; write \${VAR_NAME} (letters, digits and _)`;
    from = end + 1;
  }
}

/** Variable names a template refers to, in order. */
export function templateVariables(template: string): string[] {
  return [...template.matchAll(REFERENCE_RE)].map((m) => m[1] ?? "");
}

export interface ResolvedHeaders {
  headers: Record<string, string>;
  /** Values that must never be shown: each variable's value and each credential header's value. */
  secrets: string[];
  /** Lower-case names of headers that carry secrets; they are not sent to another origin on a redirect. */
  secretHeaders: Set<string>;
  /** References to variables that are unset or empty. */
  missing: Array<{ header: string; variable: string }>;
  /** Headers whose value, once resolved, contains a line break (the variable's value is not shown). */
  invalid: Array<{ header: string; variables: string[] }>;
}

/** Resolve `${VAR}` in header templates from `env`. Never throws; the caller turns `missing`/`invalid` into errors. */
export function resolveHeaders(templates: ReadonlyArray<{ name: string; template: string }>, env: NodeJS.ProcessEnv): ResolvedHeaders {
  const out: ResolvedHeaders = { headers: {}, secrets: [], secretHeaders: new Set(), missing: [], invalid: [] };
  for (const { name, template } of templates) {
    const variables = templateVariables(template);
    const value = template.replace(REFERENCE_RE, (_, variable: string) => {
      const v = env[variable];
      if (v === undefined || v === "") {
        out.missing.push({ header: name, variable });
        return "";
      }
      out.secrets.push(v);
      return v;
    });
    if (variables.length > 0 || CREDENTIAL_HEADERS.has(name.toLowerCase())) {
      out.secretHeaders.add(name.toLowerCase());
      if (value.trim()) out.secrets.push(value);
    }
    if (hasControlChar(value.replace(/\t/g, ""))) out.invalid.push({ header: name, variables });
    out.headers[name] = value;
  }
  return out;
}

/**
 * Why resolved templates cannot be sent (an unset variable, a value with a line break), or null.
 * Names the variable, never a value. `kind` says what the templates are ("header", "query parameter").
 */
export function unresolvedMessage(label: string, resolved: ResolvedHeaders, source: string, kind = "header"): string | null {
  const missing = resolved.missing[0];
  if (missing) {
    const others = resolved.missing.slice(1).map((m) => m.variable);
    return (
      `${label}: ${kind} '${missing.header}' needs the environment variable ${missing.variable}, which is not set (or empty)` +
      `${others.length ? `; also missing: ${[...new Set(others)].join(", ")}` : ""}. ` +
      `Set it in the environment of the process that runs the tools (${source}).`
    );
  }
  const invalid = resolved.invalid[0];
  if (invalid) {
    const from = invalid.variables.length ? ` (from ${invalid.variables.join(", ")})` : "";
    return `${label}: the value of ${kind} '${invalid.header}'${from} contains a line break or control character`;
  }
  return null;
}

/**
 * `text` with every secret replaced by `***`, in the forms a server or library may echo it in:
 * as is, URL-encoded (percent and form style), JSON-escaped, hex (either case), and base64 /
 * base64url — also where the secret sits inside a longer base64 text (e.g. a base64-encoded JSON
 * body), at whichever of the three byte offsets it starts.
 */
export function redact(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return text;
  const forms = new Set<string>();
  for (const s of secrets) {
    if (!s) continue;
    for (const form of encodedForms(s)) forms.add(form);
  }
  // Longest first, so a secret that contains another (and a padded base64 its unpadded core) is replaced whole.
  let out = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) out = out.split(form).join(REDACTED);
  return out;
}

/** Shortest base64 fragment of an unaligned secret that is redacted: shorter ones would mask unrelated text. */
const MIN_BASE64_FRAGMENT = 8;

function encodedForms(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const hex = bytes.toString("hex");
  const forms = [secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2), JSON.stringify(secret).slice(1, -1), hex, hex.toUpperCase()];
  // Inside a base64 stream the secret starts at byte offset 0, 1 or 2 of a 3-byte group; the
  // characters that mix its bits with its neighbours' differ per text, so only the middle is fixed.
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    const start = [0, 2, 3][offset]!;
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    const core = encoded.slice(start, end);
    if (offset === 0) forms.push(encoded, encoded.replace(/=+$/, ""));
    if (offset === 0 || core.length >= MIN_BASE64_FRAGMENT) forms.push(core);
  }
  const base64 = forms.slice(6);
  forms.push(...base64.map((b) => b.replace(/\+/g, "-").replace(/\//g, "_")));
  return forms.filter((f) => f.length > 0);
}

/** A URL as it may appear in a message: no credentials or fragment, sensitive query values masked. */
export function displayUrl(url: URL): string {
  const params = new URLSearchParams();
  for (const [k, v] of url.searchParams) params.append(k, SENSITIVE_QUERY_KEY_RE.test(k) ? REDACTED : v);
  const query = params.toString();
  return `${url.origin}${url.pathname}${query ? `?${query}` : ""}`;
}
