/**
 * Syntax highlighting of a workflow's source, on the server: the TypeScript scanner splits it into
 * tokens and each token is escaped into a span with a class (keyword, string, number, comment).
 * Only those classes are markup; the text is the source's, escaped like any other value. Without
 * the optional typescript package, acorn's JavaScript tokenizer does it (TypeScript-only words such
 * as `interface` stay plain), and what it cannot tokenize is shown plain.
 */
import { loadTypeScript } from "../workflows/typescript.js";
import { html, type SafeHtml } from "./html.js";

/** Larger sources are shown plain: scanning is cheap, but a page of a million spans is not. */
const MAX_HIGHLIGHT_CHARS = 200_000;

export async function highlightTypeScript(source: string): Promise<SafeHtml> {
  if (source.length > MAX_HIGHLIGHT_CHARS) return html`${source}`;
  const ts = await loadTypeScript();
  if (!ts) return highlightWithAcorn(source, (await import("acorn")).tokenizer);
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, source);
  const K = ts.SyntaxKind;
  const parts: SafeHtml[] = [];
  let end = 0;
  // Open braces inside each `${ … }` of the templates being scanned: its closing brace goes on with the template.
  const templates: number[] = [];
  for (let kind = scanner.scan(); kind !== K.EndOfFileToken; kind = scanner.scan()) {
    if (kind === K.OpenBraceToken && templates.length) templates[templates.length - 1]!++;
    else if (kind === K.CloseBraceToken && templates.length) {
      if (templates[templates.length - 1] === 0) {
        kind = scanner.reScanTemplateToken(false);
        if (kind === K.TemplateTail) templates.pop();
      } else templates[templates.length - 1]!--;
    } else if (kind === K.TemplateHead) templates.push(0);
    const start = scanner.getTokenStart();
    end = scanner.getTokenEnd();
    const text = source.slice(start, end);
    let cls: string | null = null;
    if (kind >= K.FirstKeyword && kind <= K.LastKeyword) cls = "tok-keyword";
    else if (kind === K.StringLiteral || kind === K.NoSubstitutionTemplateLiteral || (kind >= K.TemplateHead && kind <= K.TemplateTail)) cls = "tok-string";
    else if (kind === K.NumericLiteral || kind === K.BigIntLiteral) cls = "tok-number";
    else if (kind === K.SingleLineCommentTrivia || kind === K.MultiLineCommentTrivia) cls = "tok-comment";
    parts.push(cls ? html`<span class="${cls}">${text}</span>` : html`${text}`);
  }
  // Whatever the scanner did not reach (it stops at the end) is kept as text.
  if (end < source.length) parts.push(html`${source.slice(end)}`);
  return html`${parts}`;
}

function highlightWithAcorn(source: string, tokenizer: typeof import("acorn").tokenizer): SafeHtml {
  const spans: Array<{ start: number; end: number; cls: string }> = [];
  const onComment = (_block: boolean, _text: string, start: number, end: number) => spans.push({ start, end, cls: "tok-comment" });
  try {
    for (const token of tokenizer(source, { ecmaVersion: "latest", sourceType: "module", allowHashBang: true, onComment })) {
      const label = token.type.label;
      const cls = token.type.keyword !== undefined ? "tok-keyword" : label === "string" || label === "template" ? "tok-string" : label === "num" ? "tok-number" : null;
      if (cls) spans.push({ start: token.start, end: token.end, cls });
    }
  } catch {
    // Not JavaScript from here on (a type the tokenizer cannot read): the rest stays plain.
  }
  spans.sort((a, b) => a.start - b.start);
  const parts: SafeHtml[] = [];
  let at = 0;
  for (const { start, end, cls } of spans) {
    if (start < at) continue;
    if (start > at) parts.push(html`${source.slice(at, start)}`);
    parts.push(html`<span class="${cls}">${source.slice(start, end)}</span>`);
    at = end;
  }
  if (at < source.length) parts.push(html`${source.slice(at)}`);
  return html`${parts}`;
}
