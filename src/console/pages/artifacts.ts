/**
 * Artifacts: metadata, a preview (text and JSON as text; PNG, JPEG, GIF and WebP images, known by
 * their first bytes, never by a name or a stored type) and a download that is always an
 * attachment of type application/octet-stream, so no artifact is ever rendered as a page.
 */
import { NotFoundError } from "../../errors.js";
import type { ArtifactData } from "../../storage/protocol.js";
import { CONSOLE_PATH } from "../auth.js";
import type { ConsoleApp, ConsoleContext, Ctx } from "../context.js";
import { clip, html, prettyJson, query } from "../html.js";
import { notice, pageNumber, paginate, pager } from "../layout.js";

const PREVIEW_CHARS = 100_000;

export function registerArtifacts(app: ConsoleApp, ctx: ConsoleContext): void {
  ctx.page(app, `${CONSOLE_PATH}/artifacts`, "artifacts", async (c) => list(c, ctx));
  ctx.page(app, `${CONSOLE_PATH}/artifact`, "artifacts", async (c) => show(c, ctx));
  ctx.page(app, `${CONSOLE_PATH}/artifact/download`, "artifacts", async (c) => {
    const name = c.req.query("name") ?? "";
    const data = await load(ctx, name);
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data instanceof Uint8Array ? data : Buffer.from(JSON.stringify(data, null, 2), "utf8");
    return c.body(new Uint8Array(bytes), 200, {
      "Content-Type": "application/octet-stream",
      "Content-Disposition": attachment(name, typeof data === "string" ? ".txt" : data instanceof Uint8Array ? "" : ".json"),
    });
  });
  ctx.page(app, `${CONSOLE_PATH}/artifact/image`, "artifacts", async (c) => {
    const data = await load(ctx, c.req.query("name") ?? "");
    const type = data instanceof Uint8Array ? imageType(data) : null;
    if (!type || !(data instanceof Uint8Array)) throw new NotFoundError("This artifact is not a PNG, JPEG, GIF or WebP image.");
    return c.body(new Uint8Array(data), 200, { "Content-Type": type, "Content-Security-Policy": "default-src 'none'; sandbox" });
  });
}

async function load(ctx: ConsoleContext, name: string): Promise<ArtifactData> {
  const data = (await ctx.session.dispatch("artifacts", "load", [name])) as ArtifactData | undefined;
  if (data === undefined) throw new NotFoundError(`No artifact ${JSON.stringify(name.slice(0, 200))}.`);
  return data;
}

async function list(c: Ctx, ctx: ConsoleContext): Promise<Response> {
  const q = (c.req.query("q") ?? "").trim().toLowerCase().slice(0, 500);
  const all = (await ctx.session.listArtifacts()).filter((a) => !q || a.name.toLowerCase().includes(q) || a.description.toLowerCase().includes(q));
  const paged = paginate(all, pageNumber(c.req.query("page")));
  const body = html`
<form class="filters" method="get" action="${CONSOLE_PATH}/artifacts" role="search"><div><label for="q">Name or description contains</label><input id="q" type="search" name="q" value="${q}"></div><div><button type="submit">Filter</button></div></form>
${paged.total === 0 ? notice(q ? "No artifact matches." : "No artifacts saved yet.") : ""}
<table class="stack"><thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Size</th><th scope="col">Updated</th><th scope="col">Description</th></tr></thead>
<tbody>${paged.items.map(
    (a) => html`<tr><td data-label="Name"><a href="${CONSOLE_PATH}/artifact${query({ name: a.name })}">${a.name}</a></td><td data-label="Kind">${a.kind}</td><td data-label="Size">${a.size} bytes</td>
<td data-label="Updated">${a.updatedAt}</td><td data-label="Description">${clip(a.description, 300)}</td></tr>`,
  )}</tbody></table>
${pager(`${CONSOLE_PATH}/artifacts`, { q }, paged)}`;
  return ctx.render(c, "Artifacts", "artifacts", body);
}

async function show(c: Ctx, ctx: ConsoleContext): Promise<Response> {
  const name = c.req.query("name") ?? "";
  const info = (await ctx.session.dispatch("artifacts", "get", [name])) as Awaited<ReturnType<ConsoleContext["session"]["listArtifacts"]>>[number] | null;
  if (!info) throw new NotFoundError(`No artifact ${JSON.stringify(name.slice(0, 200))}.`);
  const data = await load(ctx, name);
  let preview;
  if (typeof data === "string") preview = html`<pre id="preview">${clip(data, PREVIEW_CHARS)}</pre>`;
  else if (data instanceof Uint8Array) {
    preview = imageType(data)
      ? html`<img class="preview" id="preview" src="${CONSOLE_PATH}/artifact/image${query({ name })}" alt="${info.description || `Image ${name}`}">`
      : html`<p class="muted" id="preview">${data.byteLength} bytes of binary data; download it to look inside.</p>`;
  } else preview = html`<pre id="preview">${prettyJson(data, PREVIEW_CHARS)}</pre>`;
  const body = html`
<dl class="meta">
  <dt>Name</dt><dd>${info.name}</dd><dt>Kind</dt><dd>${info.kind}</dd><dt>Size</dt><dd>${info.size} bytes</dd>
  <dt>Description</dt><dd>${info.description || html`<span class="muted">none</span>`}</dd>
  <dt>Created</dt><dd>${info.createdAt}</dd><dt>Updated</dt><dd>${info.updatedAt}</dd>
  <dt>Metadata</dt><dd><pre>${prettyJson(info.metadata, 10_000)}</pre></dd>
</dl>
<p><a href="${CONSOLE_PATH}/artifact/download${query({ name })}" download>Download</a></p>
<h2>Preview</h2>
${preview}`;
  return ctx.render(c, `Artifact ${info.name}`, "artifacts", body);
}

/** The image type its first bytes announce, or null. SVG is never one: it can carry script. */
export function imageType(b: Uint8Array): string | null {
  const starts = (...sig: number[]) => sig.every((v, i) => b[i] === v);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (starts(0x52, 0x49, 0x46, 0x46) && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50) return "image/webp";
  return null;
}

/** `attachment; filename="ascii"; filename*=UTF-8''…`: quotes, slashes and control characters never reach the header. */
function attachment(name: string, extension: string): string {
  const base = (name.split("/").pop() ?? "artifact") + (extension && !name.endsWith(extension) ? extension : "");
  const ascii = base.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 150) || "artifact";
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(base.slice(0, 150))}`;
}
