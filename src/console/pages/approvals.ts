/**
 * Approvals: the pending calls of paused runs, each with its run's code and earlier calls, and a
 * form to approve, edit (arguments as JSON, checked against the tool's parameters) or reject with
 * a reason. Sending it resumes the run here (session.resumeRun) and shows the run.
 */
import type { Decision } from "../../runs/recorder.js";
import { ValidationError } from "../../errors.js";
import type { LedgerEntry, RunHeader } from "../../storage/runs.js";
import { validateRunId } from "../../storage/runs.js";
import type { CallableInfo } from "../../tools/protocol.js";
import { validateArgs } from "../../tools/validate.js";
import { CONSOLE_PATH } from "../auth.js";
import type { ConsoleApp, ConsoleContext, Ctx } from "../context.js";
import { clip, html, prettyJson, type SafeHtml } from "../html.js";
import { notice, pageNumber, paginate, pager } from "../layout.js";
import { argsOf, callName, ledgerOf, shownArgs } from "./runs.js";

const RUNS_PER_PAGE = 10;
/** Largest edited arguments accepted, in characters. */
const MAX_ARGS_CHARS = 1_048_576;
const pendingId = (e: LedgerEntry) => `call-${e.seq}`;

interface PausedRun {
  header: RunHeader;
  entries: LedgerEntry[];
}

export function registerApprovals(app: ConsoleApp, ctx: ConsoleContext): void {
  ctx.page(app, `${CONSOLE_PATH}/approvals`, "approvals", async (c) => list(c, ctx));
  app.post(`${CONSOLE_PATH}/approvals/:id`, async (c) => {
    let run: PausedRun | null = null;
    try {
      const id = validateRunId(c.req.param("id"));
      run = await pausedRun(ctx, id);
      if (!run) throw new ValidationError(`Run ${id} is not paused (any more): nothing to decide. See its page for what happened.`);
      const form = await c.req.parseBody();
      const decisions = await decisionsOf(ctx, run, (k) => (typeof form[k] === "string" ? (form[k] as string) : undefined));
      await ctx.session.resumeRun(id, decisions);
      return c.redirect(`${CONSOLE_PATH}/runs/${id}`, 303);
    } catch (err) {
      if (!run) return ctx.failure(c, "approvals", err);
      const e = err instanceof Error ? err : new Error(String(err));
      const status = e.name === "ValidationError" || e.name === "DecisionError" || e.name === "ToolError" ? 400 : 409;
      return ctx.render(c, "Approvals", "approvals", html`${notice(html`<strong>${e.name}</strong>: ${e.message}`, "error")}${runCard(ctx, run)}`, status);
    }
  });
}

async function pausedRun(ctx: ConsoleContext, id: string): Promise<PausedRun | null> {
  const store = ledgerOf(ctx);
  const header = await store.getHeader(id);
  if (!header || header.status !== "paused") return null;
  return { header, entries: await store.entries(id) };
}

async function list(c: Ctx, ctx: ConsoleContext): Promise<Response> {
  const store = ledgerOf(ctx);
  const paused = (await store.list()).filter((h) => h.status === "paused");
  const paged = paginate(paused, pageNumber(c.req.query("page")), RUNS_PER_PAGE);
  const runs = await Promise.all(paged.items.map(async (header) => ({ header, entries: await store.entries(header.id) })));
  const body = html`
${ctx.session.isDurable ? "" : notice("This console cannot answer approvals: it needs the key that signs continuations. Start it with TS_CODE_MODE_RUNS_SECRET set (the same key as the sessions that paused).", "error")}
${paged.total === 0 ? notice("No run waits for a decision.") : html`<p>${paged.total} paused ${paged.total === 1 ? "run waits" : "runs wait"} for a decision. Each decision resumes its run: calls already made are replayed from the ledger, not made again.</p>`}
${runs.map((r) => runCard(ctx, r))}
${pager(`${CONSOLE_PATH}/approvals`, {}, paged)}`;
  return ctx.render(c, "Approvals", "approvals", body);
}

function runCard(ctx: ConsoleContext, run: PausedRun): SafeHtml {
  const { header, entries } = run;
  const pending = entries.filter((e) => e.state === "pending");
  const before = entries.filter((e) => e.state !== "pending");
  return html`<section class="card" id="run-${header.id}" aria-labelledby="title-${header.id}">
<h2 id="title-${header.id}">Run <a href="${CONSOLE_PATH}/runs/${header.id}">${header.id}</a></h2>
<p class="muted">Paused ${header.updatedAt}${header.continuation ? `; decide before ${header.continuation.expiresAt}` : ""}. ${before.length} earlier ${before.length === 1 ? "call" : "calls"}${before.length ? html`: ${before.slice(-5).map((e, i) => html`${i ? ", " : ""}<code>${callName(e)}</code>`)}` : ""}.</p>
<details><summary>The run's code</summary><pre><code>${clip(header.code, 20_000)}</code></pre></details>
<form method="post" action="${CONSOLE_PATH}/approvals/${header.id}">
${pending.map((e) => callFields(e))}
<button type="submit" class="primary" ${ctx.session.isDurable ? "" : "disabled"}>Send ${pending.length === 1 ? "the decision" : "the decisions"} and resume the run</button>
</form></section>`;
}

function callFields(e: LedgerEntry): SafeHtml {
  const id = pendingId(e);
  const f = `${e.seq}`;
  return html`<fieldset data-call="${id}"><legend><code>${callName(e)}</code> (${id})</legend>
<p>${e.reason ? html`Why it waits: ${e.reason}` : "It waits for a decision."}</p>
<div class="choices" role="radiogroup" aria-label="Decision for ${id}">
<label><input type="radio" name="decision-${f}" value="approve" checked> Approve</label>
<label><input type="radio" name="decision-${f}" value="edit"> Approve with the edited arguments</label>
<label><input type="radio" name="decision-${f}" value="reject"> Reject</label>
</div>
<div class="field"><label for="args-${f}">Arguments (JSON; used when you edit)</label><textarea id="args-${f}" name="args-${f}" spellcheck="false">${prettyJson(shownArgs(e), MAX_ARGS_CHARS)}</textarea></div>
<div class="field"><label for="reason-${f}">Reason (shown to the agent when you reject)</label><input type="text" id="reason-${f}" name="reason-${f}" maxlength="2000"></div>
</fieldset>`;
}

/** The form's decisions, one per pending call; edited arguments parsed and checked against the tool's parameters. */
async function decisionsOf(ctx: ConsoleContext, run: PausedRun, field: (name: string) => string | undefined): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (const e of run.entries.filter((x) => x.state === "pending")) {
    const id = pendingId(e);
    const choice = field(`decision-${e.seq}`);
    const reason = field(`reason-${e.seq}`)?.trim().slice(0, 2_000);
    if (choice === "approve") decisions.push({ id, decision: "approve" });
    else if (choice === "reject") decisions.push({ id, decision: "reject", ...(reason ? { reason } : {}) });
    else if (choice === "edit") decisions.push({ id, decision: "edit", args: await editedArgs(ctx, e, field(`args-${e.seq}`) ?? "") });
    else throw new ValidationError(`Choose approve, edit or reject for ${id} (${callName(e)}).`);
  }
  return decisions;
}

async function editedArgs(ctx: ConsoleContext, e: LedgerEntry, text: string): Promise<Record<string, unknown>> {
  if (text.length > MAX_ARGS_CHARS) throw new ValidationError(`The arguments of call-${e.seq} are longer than ${MAX_ARGS_CHARS} characters.`);
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch (err) {
    throw new ValidationError(`The arguments of call-${e.seq} are not JSON: ${(err as Error).message}`);
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) throw new ValidationError(`The arguments of call-${e.seq} must be a JSON object, like { "line": "..." }.`);
  if (e.ns !== "tools" || e.op !== "call") return args as Record<string, unknown>;
  // The tool's own parameter check, the one its call would run: a bad edit is refused here, before the run resumes.
  const [tool, callable] = argsOf(e) as [string, string | null];
  const callables = (await ctx.session.dispatch("tools", "callables", [tool])) as Array<Pick<CallableInfo, "name" | "description" | "params">>;
  const info = callables.find((c) => c.name === callable);
  if (!info) return args as Record<string, unknown>;
  try {
    return validateArgs(tool, callable, { ...info, returns: "unknown" }, args);
  } catch (err) {
    throw new ValidationError(`call-${e.seq}: ${(err as Error).message}`);
  }
}
