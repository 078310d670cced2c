/**
 * Workflows: the library with each one's trust, and one workflow's source (as text), parameters
 * and provenance, with approval of an untrusted one against exactly the source shown: the form
 * carries that source and approveWorkflow refuses when the stored one differs.
 */
import { createHash } from "node:crypto";
import { NotFoundError, ValidationError } from "../../errors.js";
import { describeProvenance, trustOf } from "../../workflows/provenance.js";
import type { WorkflowSummary } from "../../workflows/library.js";
import { CONSOLE_PATH } from "../auth.js";
import type { ConsoleApp, ConsoleContext, Ctx } from "../context.js";
import { highlightTypeScript } from "../highlight.js";
import { clip, html, query, type SafeHtml } from "../html.js";
import { notice, pageNumber, paginate, pager } from "../layout.js";

const MAX_SOURCE_CHARS = 1_048_576;

export function registerWorkflows(app: ConsoleApp, ctx: ConsoleContext): void {
  ctx.page(app, `${CONSOLE_PATH}/workflows`, "workflows", async (c) => list(c, ctx));
  ctx.page(app, `${CONSOLE_PATH}/workflow`, "workflows", async (c) => show(c, ctx));
  app.post(`${CONSOLE_PATH}/workflow/approve`, async (c) => {
    try {
      const form = await c.req.parseBody();
      const name = typeof form["name"] === "string" ? form["name"] : "";
      const reviewed = typeof form["sha256"] === "string" ? form["sha256"] : "";
      if (!name || !reviewed) throw new ValidationError("The approval form needs the workflow's name and the hash of the source you reviewed.");
      const current = await ctx.session.getWorkflow(name);
      if (!current) throw new NotFoundError(`No workflow ${JSON.stringify(name.slice(0, 200))}.`);
      // The form names the reviewed source by its hash (a form would rewrite its line breaks);
      // approveWorkflow then refuses if the stored source changed after this check.
      if (sourceHash(current.source) !== reviewed) throw new ValidationError(`Workflow "${name}" changed since it was reviewed; review it again before approving.`);
      await ctx.session.approveWorkflow(name, { source: current.source });
      return c.redirect(`${CONSOLE_PATH}/workflow${query({ name, approved: "1" })}`, 303);
    } catch (err) {
      return ctx.failure(c, "workflows", err);
    }
  });
}

function trustBadge(w: Pick<WorkflowSummary, "provenance">): SafeHtml {
  const trust = trustOf(w);
  return html`<span class="badge trust-${trust}">${trust}</span>`;
}

async function list(c: Ctx, ctx: ConsoleContext): Promise<Response> {
  const q = (c.req.query("q") ?? "").trim().slice(0, 500);
  const all = q ? await ctx.session.searchWorkflows(q, { limit: 200 }) : await ctx.session.listWorkflows();
  const paged = paginate(all, pageNumber(c.req.query("page")));
  const body = html`
<form class="filters" method="get" action="${CONSOLE_PATH}/workflows" role="search"><div><label for="q">Search</label><input id="q" type="search" name="q" value="${q}"></div><div><button type="submit">Search</button></div></form>
${paged.total === 0 ? notice(q ? "No workflow matches." : "No workflows saved yet.") : ""}
<table class="stack"><thead><tr><th scope="col">Name</th><th scope="col">Trust</th><th scope="col">Parameters</th><th scope="col">Description</th></tr></thead>
<tbody>${paged.items.map(
    (w) => html`<tr><td data-label="Name"><a href="${CONSOLE_PATH}/workflow${query({ name: w.name })}">${w.name}</a></td><td data-label="Trust">${trustBadge(w)}</td>
<td data-label="Parameters">${w.params.map((p, i) => html`${i ? ", " : ""}<code>${p.name}</code>`)}</td><td data-label="Description">${clip(w.description, 300)}${w.problem ? html` <span class="error">(${w.problem})</span>` : ""}</td></tr>`,
  )}</tbody></table>
${pager(`${CONSOLE_PATH}/workflows`, { q }, paged)}`;
  return ctx.render(c, "Workflows", "workflows", body);
}

async function show(c: Ctx, ctx: ConsoleContext): Promise<Response> {
  const name = c.req.query("name") ?? "";
  const w = await ctx.session.getWorkflow(name);
  if (!w) throw new NotFoundError(`No workflow ${JSON.stringify(name.slice(0, 200))}.`);
  const untrusted = trustOf(w) === "untrusted";
  const body = html`
${c.req.query("approved") === "1" ? notice("Approved: the workflow is now trusted.") : ""}
<dl class="meta">
  <dt>Trust</dt><dd>${trustBadge(w)}</dd>
  <dt>Provenance</dt><dd>${describeProvenance(w.provenance)}</dd>
  <dt>Description</dt><dd>${w.description}</dd>
  <dt>Created</dt><dd>${w.createdAt}</dd><dt>Updated</dt><dd>${w.updatedAt}</dd>
  ${w.author ? html`<dt>Author</dt><dd>${w.author}</dd>` : ""}
  ${w.language ? html`<dt>Language</dt><dd>${w.language}</dd>` : ""}
  ${w.problem ? html`<dt>Problem</dt><dd class="error">${w.problem}</dd>` : ""}
</dl>
<h2>Parameters</h2>
${w.params.length === 0 ? html`<p class="muted">None.</p>` : html`<table><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Required</th><th scope="col">Description</th></tr></thead>
<tbody>${w.params.map((p) => html`<tr><td><code>${p.name}</code></td><td><code>${p.type}</code></td><td>${p.required ? "yes" : "no"}</td><td>${p.description ?? ""}</td></tr>`)}</tbody></table>`}
<h2>Source</h2>
<pre id="source"><code>${w.language === "python" ? clip(w.source, MAX_SOURCE_CHARS) : await highlightTypeScript(clip(w.source, MAX_SOURCE_CHARS))}</code></pre>
${untrusted
    ? html`<form method="post" action="${CONSOLE_PATH}/workflow/approve" class="card">
<p>An untrusted session saved this workflow, so trusted sessions refuse to run it. Approve it if the source above is safe to run with this server's tools; the approval holds for exactly this source.</p>
<input type="hidden" name="name" value="${w.name}"><input type="hidden" name="sha256" value="${sourceHash(w.source)}">
<button type="submit" class="primary">Approve this source</button></form>`
    : ""}`;
  return ctx.render(c, `Workflow ${w.name}`, "workflows", body);
}

function sourceHash(source: string): string {
  return createHash("sha256").update(source).digest("hex");
}
