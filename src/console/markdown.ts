/**
 * A small Markdown renderer for SKILL.md bodies: headings, paragraphs, lists, block quotes, fenced
 * code, and inline code, bold, italics and links. Every piece of text goes through `html`, so what
 * a skill's author wrote is escaped; raw HTML in the Markdown is shown as text, never as markup.
 * Links keep only http(s), mailto and relative targets (no javascript: or data:). The patterns use
 * negated character classes only, so rendering is linear in the input, whatever it holds.
 */
import { html, type SafeHtml } from "./html.js";

type Inline = SafeHtml | string;

const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\n]+\*)|(\[[^\]\n]+\]\([^()\s]+\))/g;

/** Where a link may lead: the web, mail, or somewhere relative (a file of the skill is not served here, but text is harmless). */
function safeHref(target: string): string | null {
  if (/^(https?:|mailto:)/i.test(target)) return target;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null;
  return target;
}

function inline(text: string): Inline[] {
  const out: Inline[] = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    const at = m.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    const [token] = m;
    if (m[1]) out.push(html`<code>${token.slice(1, -1)}</code>`);
    else if (m[2]) out.push(html`<strong>${token.slice(2, -2)}</strong>`);
    else if (m[3]) out.push(html`<em>${token.slice(1, -1)}</em>`);
    else {
      const close = token.indexOf("](");
      const label = token.slice(1, close);
      const href = safeHref(token.slice(close + 2, -1));
      out.push(href === null ? label : html`<a href="${href}" rel="noopener noreferrer nofollow">${label}</a>`);
    }
    last = at + token.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

export function renderMarkdown(text: string): SafeHtml {
  const lines = text.split("\n");
  const blocks: SafeHtml[] = [];
  let paragraph: string[] = [];
  let list: { ordered: boolean; items: string[] } | null = null;
  const flush = () => {
    if (paragraph.length) blocks.push(html`<p>${inline(paragraph.join(" "))}</p>`);
    paragraph = [];
    if (list) {
      const items = list.items.map((item) => html`<li>${inline(item)}</li>`);
      blocks.push(list.ordered ? html`<ol>${items}</ol>` : html`<ul>${items}</ul>`);
    }
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trimStart().startsWith(fence[1]!); i++) code.push(lines[i]!);
      blocks.push(html`<pre><code>${code.join("\n")}</code></pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      // Page headings are h1/h2: a skill's headings start at h3.
      const level = Math.min(6, heading[1]!.length + 2);
      const content = inline(heading[2]!.replace(/\s+#+\s*$/, ""));
      blocks.push(level === 3 ? html`<h3>${content}</h3>` : level === 4 ? html`<h4>${content}</h4>` : level === 5 ? html`<h5>${content}</h5>` : html`<h6>${content}</h6>`);
      continue;
    }
    const item = /^\s*(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/.exec(line);
    if (item) {
      const ordered = item[2] !== undefined;
      if (paragraph.length || (list && list.ordered !== ordered)) flush();
      list ??= { ordered, items: [] };
      list.items.push(item[3]!);
      continue;
    }
    const quote = /^\s*>\s?(.*)$/.exec(line);
    if (quote) {
      flush();
      blocks.push(html`<blockquote><p>${inline(quote[1]!)}</p></blockquote>`);
      continue;
    }
    if (line.trim() === "") {
      flush();
      continue;
    }
    if (list) {
      // A continuation line of the last item.
      list.items[list.items.length - 1] += ` ${line.trim()}`;
      continue;
    }
    paragraph.push(line.trim());
  }
  flush();
  return html`${blocks}`;
}
