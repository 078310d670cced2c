/** The frame of every console page (navigation, main landmark) and the pager every list uses. */
import { CONSOLE_PATH } from "./auth.js";
import { html, query, type HtmlValue, type SafeHtml } from "./html.js";

export type Section = "approvals" | "runs" | "sessions" | "workflows" | "artifacts" | "skills" | "tools" | "login";

const SECTIONS: Array<[Section, string]> = [
  ["approvals", "Approvals"],
  ["runs", "Runs"],
  ["sessions", "Sessions"],
  ["workflows", "Workflows"],
  ["artifacts", "Artifacts"],
  ["skills", "Skills"],
  ["tools", "Tools"],
];

export interface Frame {
  title: string;
  section: Section;
  /** Sections this console shows (sessions only with serve --console). */
  sections: ReadonlySet<Section>;
  loggedIn: boolean;
}

export function page(frame: Frame, body: HtmlValue): SafeHtml {
  const nav = SECTIONS.filter(([s]) => frame.sections.has(s)).map(
    ([s, label]) => html`<li><a href="${CONSOLE_PATH}/${s}" ${frame.section === s ? html`aria-current="page"` : ""}>${label}</a></li>`,
  );
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · ts-code-mode console</title>
<link rel="stylesheet" href="${CONSOLE_PATH}/static/console.css">
<script src="${CONSOLE_PATH}/static/console.js" defer><\/script>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<header><span class="brand">ts-code-mode console</span>${frame.section === "login" ? "" : html`<nav aria-label="Sections"><ul>${nav}</ul></nav>`}
${frame.loggedIn ? html`<form class="inline" method="post" action="${CONSOLE_PATH}/logout"><button type="submit">Log out</button></form>` : ""}</header>
<main id="main" tabindex="-1">
<h1>${frame.title}</h1>
${body}
</main>
</body>
</html>`;
}

export const PAGE_SIZE = 25;

export interface Paged<T> {
  items: T[];
  page: number;
  pages: number;
  total: number;
}

/** The `page` query value as a page number (1 when absent or not one). */
export function pageNumber(value: string | undefined): number {
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 1 ? n : 1;
}

export function paginate<T>(all: readonly T[], page: number, size = PAGE_SIZE): Paged<T> {
  const pages = Math.max(1, Math.ceil(all.length / size));
  const p = Math.min(page, pages);
  return { items: all.slice((p - 1) * size, p * size), page: p, pages, total: all.length };
}

/** Previous / next links that keep the list's other query values (its filters). */
export function pager(path: string, params: Record<string, string | undefined>, paged: Paged<unknown>): SafeHtml {
  if (paged.pages <= 1) return html`<p class="muted">${paged.total} in all</p>`;
  const link = (p: number, label: string, rel: string) => html`<a rel="${rel}" href="${path}${query({ ...params, page: p })}">${label}</a>`;
  return html`<nav class="pager" aria-label="Pages">${paged.page > 1 ? link(paged.page - 1, "← Previous", "prev") : ""}
<span>Page ${paged.page} of ${paged.pages} (${paged.total} in all)</span>${paged.page < paged.pages ? link(paged.page + 1, "Next →", "next") : ""}</nav>`;
}

export function notice(text: HtmlValue, kind: "info" | "error" = "info"): SafeHtml {
  return html`<div class="notice ${kind === "error" ? "error" : ""}" role="${kind === "error" ? "alert" : "status"}">${text}</div>`;
}
