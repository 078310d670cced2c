/** Tools: the list (or a search), and one tool's callables with its TypeScript declarations. */
import { CONSOLE_PATH } from "../auth.js";
import type { ConsoleApp, ConsoleContext, Ctx } from "../context.js";
import { clip, html, query } from "../html.js";
import { notice, pageNumber, paginate, pager } from "../layout.js";

export function registerTools(app: ConsoleApp, ctx: ConsoleContext): void {
  ctx.page(app, `${CONSOLE_PATH}/tools`, "tools", async (c) => list(c, ctx));
  ctx.page(app, `${CONSOLE_PATH}/tool`, "tools", async (c) => show(c, ctx));
}

async function list(c: Ctx, ctx: ConsoleContext): Promise<Response> {
  const q = (c.req.query("q") ?? "").trim().slice(0, 500);
  const all = q ? await ctx.session.searchTools(q, { limit: 200 }) : await ctx.session.listTools();
  const paged = paginate(all, pageNumber(c.req.query("page")));
  const body = html`
<form class="filters" method="get" action="${CONSOLE_PATH}/tools" role="search"><div><label for="q">Search</label><input id="q" type="search" name="q" value="${q}"></div><div><button type="submit">Search</button></div></form>
${paged.total === 0 ? notice(q ? "No tool matches." : "No tools: add YAML files to the tools folder.") : ""}
<table class="stack"><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Callables</th><th scope="col">Description</th></tr></thead>
<tbody>${paged.items.map(
    (t) => html`<tr><td data-label="Name"><a href="${CONSOLE_PATH}/tool${query({ name: t.name })}">${t.name}</a></td><td data-label="Type">${t.type}</td>
<td data-label="Callables">${t.callables.slice(0, 8).map((x, i) => html`${i ? ", " : ""}<code>${x.name}</code>`)}${t.callables.length > 8 ? ` and ${t.callables.length - 8} more` : ""}</td><td data-label="Description">${clip(t.description, 300)}</td></tr>`,
  )}</tbody></table>
${pager(`${CONSOLE_PATH}/tools`, { q }, paged)}`;
  return ctx.render(c, "Tools", "tools", body);
}

async function show(c: Ctx, ctx: ConsoleContext): Promise<Response> {
  const name = c.req.query("name") ?? "";
  const declarations = await ctx.session.describeTool(name);
  const listing = (await ctx.session.listTools()).find((t) => t.name === name);
  const callables = paginate(listing?.callables ?? [], pageNumber(c.req.query("page")), 50);
  const body = html`
${listing ? html`<p>${listing.description}</p>` : ""}
<h2>Callables</h2>
${callables.total === 0 ? html`<p class="muted">None listed.</p>` : html`<table class="stack"><thead><tr><th scope="col">Signature</th><th scope="col">Description</th></tr></thead>
<tbody>${callables.items.map((x) => html`<tr><td data-label="Signature"><code>${x.signature}</code></td><td data-label="Description">${clip(x.description, 400)}</td></tr>`)}</tbody></table>`}
${pager(`${CONSOLE_PATH}/tool`, { name }, callables)}
<h2>TypeScript declarations</h2>
<pre id="declarations"><code>${clip(declarations, 200_000)}</code></pre>`;
  return ctx.render(c, `Tool ${name}`, "tools", body);
}
