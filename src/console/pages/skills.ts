/** Skills: the catalog, one skill's SKILL.md (rendered from Markdown with everything escaped, and as written) and its files. */
import { renderMarkdown } from "../markdown.js";
import { CONSOLE_PATH } from "../auth.js";
import type { ConsoleApp, ConsoleContext, Ctx } from "../context.js";
import { clip, html, prettyJson, query } from "../html.js";
import { notice, pageNumber, paginate, pager } from "../layout.js";

const PREVIEW_CHARS = 100_000;

export function registerSkills(app: ConsoleApp, ctx: ConsoleContext): void {
  ctx.page(app, `${CONSOLE_PATH}/skills`, "skills", async (c) => list(c, ctx));
  ctx.page(app, `${CONSOLE_PATH}/skill`, "skills", async (c) => show(c, ctx));
  ctx.page(app, `${CONSOLE_PATH}/skill/file`, "skills", async (c) => {
    const name = c.req.query("name") ?? "";
    const file = c.req.query("path") ?? "";
    const text = (await ctx.session.dispatch("skills", "read", [name, file, { as: "text" }])) as string;
    const body = html`<p><a href="${CONSOLE_PATH}/skill${query({ name })}">← ${name}</a></p><pre id="file">${clip(text, PREVIEW_CHARS)}</pre>`;
    return ctx.render(c, `${name}/${file}`, "skills", body);
  });
}

async function list(c: Ctx, ctx: ConsoleContext): Promise<Response> {
  const q = (c.req.query("q") ?? "").trim().slice(0, 500);
  const all = q ? ((await ctx.session.dispatch("skills", "search", [q, { limit: 200 }])) as Awaited<ReturnType<typeof ctx.session.listSkills>>) : await ctx.session.listSkills();
  const paged = paginate(all, pageNumber(c.req.query("page")));
  const body = html`
<form class="filters" method="get" action="${CONSOLE_PATH}/skills" role="search"><div><label for="q">Search</label><input id="q" type="search" name="q" value="${q}"></div><div><button type="submit">Search</button></div></form>
${paged.total === 0 ? notice(q ? "No skill matches." : "No skills: add folders with a SKILL.md under <base>/skills, or pass --skills DIR.") : ""}
<table class="stack"><thead><tr><th scope="col">Name</th><th scope="col">Description</th></tr></thead>
<tbody>${paged.items.map((s) => html`<tr><td data-label="Name"><a href="${CONSOLE_PATH}/skill${query({ name: s.name })}">${s.name}</a></td><td data-label="Description">${clip(s.description, 400)}</td></tr>`)}</tbody></table>
${pager(`${CONSOLE_PATH}/skills`, { q }, paged)}`;
  return ctx.render(c, "Skills", "skills", body);
}

async function show(c: Ctx, ctx: ConsoleContext): Promise<Response> {
  const name = c.req.query("name") ?? "";
  const s = await ctx.session.loadSkill(name);
  const files = paginate(s.resources, pageNumber(c.req.query("page")), 100);
  const body = html`
<dl class="meta"><dt>Description</dt><dd>${s.description}</dd><dt>Trust</dt><dd><span class="badge trust-${s.trust}">${s.trust}</span></dd><dt>From</dt><dd>${s.source}</dd><dt>Location</dt><dd>${s.location}</dd></dl>
<details><summary>Frontmatter</summary><pre>${prettyJson(s.frontmatter, 10_000)}</pre></details>
<h2>SKILL.md</h2>
<div id="skill-body" class="markdown">${renderMarkdown(clip(s.body, PREVIEW_CHARS))}</div>
<details><summary>SKILL.md as written</summary><pre id="skill-source">${clip(s.body, PREVIEW_CHARS)}</pre></details>
<h2>Files</h2>
${files.total === 0 ? html`<p class="muted">Only SKILL.md.</p>` : html`<ul>${files.items.map((f) => html`<li><a href="${CONSOLE_PATH}/skill/file${query({ name: s.name, path: f })}">${f}</a></li>`)}</ul>`}
${pager(`${CONSOLE_PATH}/skill`, { name: s.name }, files)}`;
  return ctx.render(c, `Skill ${s.name}`, "skills", body);
}
