/** Runs: the ledger's runs (filter by status, tool, error) and one run with every logged call. */
import { NotFoundError } from "../../errors.js";
import { decodeValue } from "../../runs/codec.js";
import { DurableRunsUnsupportedError } from "../../runs/errors.js";
import { validateRunId, type LedgerEntry, type RunHeader, type RunStore } from "../../storage/runs.js";
import { CONSOLE_PATH } from "../auth.js";
import type { ConsoleApp, ConsoleContext, Ctx } from "../context.js";
import { clip, html, prettyJson, type SafeHtml } from "../html.js";
import { notice, pageNumber, paginate, pager } from "../layout.js";

/** Runs whose calls are read to filter by tool or error: the newest this many. */
const MAX_SCANNED = 1_000;
const ENTRIES_PER_PAGE = 50;
const STATUSES = ["running", "paused", "completed", "failed", "rolled-back"] as const;

export function ledgerOf(ctx: ConsoleContext): RunStore {
  const store = ctx.session.storage.runs;
  if (!store) throw new DurableRunsUnsupportedError("This storage keeps no run ledger (FileStorage and RedisStorage do).");
  return store;
}

/** `tools.journal.pay`, `artifacts.save`: what a logged call called. */
export function callName(e: LedgerEntry): string {
  if (e.ns === "tools" && e.op === "call") {
    const [tool, callable] = argsOf(e) as [unknown, unknown];
    return `tools.${String(tool)}${typeof callable === "string" ? `.${callable}` : ""}`;
  }
  return `${e.ns}.${e.op}`;
}

export function argsOf(e: LedgerEntry): unknown[] {
  try {
    const v = decodeValue(e.args);
    return Array.isArray(v) ? v : [v];
  } catch {
    return [];
  }
}

/** The arguments a person reads: a tool call's argument object, else the argument list. */
export function shownArgs(e: LedgerEntry): unknown {
  const args = argsOf(e);
  return e.ns === "tools" && e.op === "call" ? (args[2] ?? {}) : args;
}

export function statusBadge(status: string): SafeHtml {
  return html`<span class="badge status-${status}">${status}</span>`;
}

export function durationOf(h: RunHeader): string {
  const ms = Date.parse(h.updatedAt) - Date.parse(h.createdAt);
  return Number.isFinite(ms) ? (ms < 1_000 ? `${ms} ms` : `${(ms / 1_000).toFixed(1)} s`) : "";
}

export function registerRuns(app: ConsoleApp, ctx: ConsoleContext): void {
  ctx.page(app, `${CONSOLE_PATH}/runs`, "runs", async (c) => list(c, ctx));
  ctx.page(app, `${CONSOLE_PATH}/runs/:id`, "runs", async (c) => show(c, ctx));
}

async function list(c: Ctx, ctx: ConsoleContext): Promise<Response> {
  const store = ledgerOf(ctx);
  const status = c.req.query("status") ?? "";
  const tool = (c.req.query("tool") ?? "").trim().slice(0, 200);
  const errorsOnly = c.req.query("error") === "1";
  let runs = await store.list({ limit: MAX_SCANNED });
  if (status) runs = runs.filter((r) => r.status === status);
  if (tool || errorsOnly) {
    const kept: RunHeader[] = [];
    for (const r of runs) {
      const entries = await store.entries(r.id);
      const toolOk = !tool || entries.some((e) => callName(e) === tool || callName(e).startsWith(`${tool}.`) || callName(e) === `tools.${tool}` || callName(e).startsWith(`tools.${tool}.`));
      const errorOk = !errorsOnly || r.status === "failed" || r.outcome?.ok === false || entries.some((e) => e.error !== undefined);
      if (toolOk && errorOk) kept.push(r);
    }
    runs = kept;
  }
  const paged = paginate(runs, pageNumber(c.req.query("page")));
  const filters = { status, tool, error: errorsOnly ? "1" : undefined };
  const body = html`
<form class="filters" method="get" action="${CONSOLE_PATH}/runs" role="search">
  <div><label for="f-status">Status</label><select id="f-status" name="status"><option value="">any</option>${STATUSES.map((s) => html`<option ${s === status ? "selected" : ""}>${s}</option>`)}</select></div>
  <div><label for="f-tool">Tool</label><input id="f-tool" type="search" name="tool" value="${tool}" placeholder="journal or tools.journal.pay"></div>
  <div><label><input type="checkbox" name="error" value="1" ${errorsOnly ? "checked" : ""}> With errors only</label></div>
  <div><button type="submit">Filter</button></div>
</form>
${paged.total === 0 ? notice("No runs match. Durable sessions (new Session({ durable })) record their runs in this storage's ledger.") : ""}
<table class="stack"><thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Calls</th><th scope="col">Duration</th><th scope="col">Updated</th><th scope="col">Code</th></tr></thead>
<tbody>${paged.items.map(
    (r) => html`<tr><td data-label="Run"><a href="${CONSOLE_PATH}/runs/${r.id}">${r.id}</a></td><td data-label="Status">${statusBadge(r.status)}</td><td data-label="Calls">${r.calls}</td>
<td data-label="Duration">${durationOf(r)}</td><td data-label="Updated"><time datetime="${r.updatedAt}">${r.updatedAt}</time></td><td data-label="Code"><code>${clip(r.code.split("\n").find((l) => l.trim()) ?? "", 120)}</code></td></tr>`,
  )}</tbody></table>
${pager(`${CONSOLE_PATH}/runs`, filters, paged)}`;
  return ctx.render(c, "Runs", "runs", body);
}

async function show(c: Ctx, ctx: ConsoleContext): Promise<Response> {
  const store = ledgerOf(ctx);
  const id = validateRunId(c.req.param("id"));
  const header = await store.getHeader(id);
  if (!header) throw new NotFoundError(`No run ${id} in this ledger (pruned?).`);
  const entries = paginate(await store.entries(id), pageNumber(c.req.query("page")), ENTRIES_PER_PAGE);
  const outcome = header.outcome;
  const body = html`
${header.status === "paused" ? notice(html`This run waits for a decision: <a href="${CONSOLE_PATH}/approvals#run-${header.id}">answer it on the approvals page</a>.`) : ""}
<dl class="meta">
  <dt>Status</dt><dd>${statusBadge(header.status)}</dd>
  <dt>Executor</dt><dd>${header.executor}</dd>
  <dt>Created</dt><dd><time datetime="${header.createdAt}">${header.createdAt}</time></dd>
  <dt>Updated</dt><dd><time datetime="${header.updatedAt}">${header.updatedAt}</time></dd>
  <dt>Duration</dt><dd>${durationOf(header)} (created to last update, resumes included)</dd>
  <dt>Calls</dt><dd>${header.calls} (${header.bytes} bytes)</dd>
  <dt>Resumes</dt><dd>${header.resumes}</dd>
  ${header.continuation ? html`<dt>Decide before</dt><dd>${header.continuation.expiresAt}</dd>` : ""}
</dl>
<h2>Result</h2>
${outcome === undefined
    ? html`<p class="muted">No result yet.</p>`
    : outcome.ok
      ? html`<pre id="result">${outcome.display ?? ""}</pre>`
      : html`<pre id="result" class="error">${outcome.error ? `${outcome.error.name}: ${outcome.error.message}` : "failed"}</pre>`}
<h2>Code</h2>
<pre><code>${clip(header.code, 50_000)}</code></pre>
<h2>Calls</h2>
<table class="stack"><thead><tr><th scope="col">#</th><th scope="col">Call</th><th scope="col">State</th><th scope="col">Arguments</th><th scope="col">Result</th><th scope="col">Time</th></tr></thead>
<tbody>${entries.items.map((e) => entryRow(e))}</tbody></table>
${pager(`${CONSOLE_PATH}/runs/${header.id}`, {}, entries)}`;
  return ctx.render(c, `Run ${header.id}`, "runs", body);
}

function entryRow(e: LedgerEntry): SafeHtml {
  let result: SafeHtml;
  if (e.error) result = html`<pre class="error">${e.error.name}: ${clip(e.error.message, 4_000)}</pre>`;
  else if (e.result) result = html`<pre>${prettyJson(safeDecode(e.result), 4_000)}</pre>`;
  else result = html`<span class="muted">—</span>`;
  const notes = [
    e.reason ? html`<div>${e.state === "pending" ? "Waits: " : "Reason: "}${e.reason}</div>` : "",
    e.decision ? html`<div>Decision: ${e.decision.decision} at ${e.decision.at}${e.decision.args ? html`, with <code>${prettyJson(safeDecode(e.decision.args), 2_000)}</code>` : ""}</div>` : "",
    e.revert ? html`<div>Revert: ${e.revert.ok ? "done" : "failed"} — ${e.revert.detail}</div>` : "",
  ];
  return html`<tr><td data-label="#">${e.seq}</td><td data-label="Call"><code>${callName(e)}</code>${notes}</td><td data-label="State">${statusBadge(e.state)}</td>
<td data-label="Arguments"><pre>${prettyJson(shownArgs(e), 4_000)}</pre></td><td data-label="Result">${result}</td>
<td data-label="Time"><time datetime="${e.startedAt}">${e.startedAt}</time>${e.endedAt ? html`<br><span class="muted">${Date.parse(e.endedAt) - Date.parse(e.startedAt)} ms</span>` : ""}</td></tr>`;
}

function safeDecode(v: Parameters<typeof decodeValue>[0]): unknown {
  try {
    return decodeValue(v);
  } catch {
    return "(undecodable)";
  }
}
