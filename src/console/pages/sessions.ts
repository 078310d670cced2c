/**
 * Sessions (serve --console): the server's live sessions, and one session's current run as it
 * prints (Server-Sent Events from its OutputFeed), with a button that cancels the run.
 */
import { streamSSE } from "hono/streaming";
import { NotFoundError } from "../../errors.js";
import type { FeedEvent } from "../../server/output-feed.js";
import type { SessionEntry } from "../../server/sessions.js";
import { CONSOLE_PATH } from "../auth.js";
import type { ConsoleApp, ConsoleContext, Ctx, LiveSessions } from "../context.js";
import { html } from "../html.js";
import { notice, pageNumber, paginate, pager } from "../layout.js";

export function registerSessions(app: ConsoleApp, ctx: ConsoleContext, live: LiveSessions): void {
  const entryOf = (c: Ctx): SessionEntry => {
    const id = c.req.param("id") ?? "";
    const entry = live.list().find((e) => e.id === id);
    if (!entry) throw new NotFoundError("No such session on this server (closed, timed out, or never here).");
    return entry;
  };
  ctx.page(app, `${CONSOLE_PATH}/sessions`, "sessions", async (c) => {
    const paged = paginate(live.list().reverse(), pageNumber(c.req.query("page")));
    const body = html`
${paged.total === 0 ? notice("No live sessions: clients create them with POST /sessions (RemoteExecutor, run --remote, mcp --remote).") : ""}
<table class="stack"><thead><tr><th scope="col">Session</th><th scope="col">Executor</th><th scope="col">Workspace</th><th scope="col">Age</th><th scope="col">Now</th></tr></thead>
<tbody>${paged.items.map(
      (e) => html`<tr><td data-label="Session"><a href="${CONSOLE_PATH}/sessions/${e.id}">${e.id}</a></td><td data-label="Executor">${live.executor}</td><td data-label="Workspace">${e.workspace ?? "—"}</td>
<td data-label="Age">${age(e.createdAt)}</td><td data-label="Now">${e.running ? "running" : "idle"}</td></tr>`,
    )}</tbody></table>
${pager(`${CONSOLE_PATH}/sessions`, {}, paged)}`;
    return ctx.render(c, "Sessions", "sessions", body);
  });
  ctx.page(app, `${CONSOLE_PATH}/sessions/:id`, "sessions", async (c) => {
    const e = entryOf(c);
    const body = html`
<dl class="meta"><dt>Executor</dt><dd>${live.executor}</dd><dt>Workspace</dt><dd>${e.workspace ?? "—"}</dd><dt>Age</dt><dd>${age(e.createdAt)}</dd><dt>Trust</dt><dd>${e.session.trust}</dd></dl>
<h2>Current run</h2>
<p>Status: <span id="run-status" role="status" aria-live="polite">${e.running ? "running" : (e.feed.lastSummary ?? "idle: no run in progress")}</span></p>
<pre id="output" data-stream="${CONSOLE_PATH}/sessions/${e.id}/output" data-status-id="run-status" aria-live="polite" aria-label="The run's output"></pre>
<form method="post" action="${CONSOLE_PATH}/sessions/${e.id}/cancel"><button type="submit" class="danger">Cancel the current run</button></form>`;
    return ctx.render(c, `Session ${e.id}`, "sessions", body);
  });
  app.get(`${CONSOLE_PATH}/sessions/:id/output`, (c) => {
    let e: SessionEntry;
    try {
      e = entryOf(c);
    } catch (err) {
      return ctx.failure(c, "sessions", err);
    }
    return streamSSE(c, async (stream) => {
      let writes = Promise.resolve();
      const send = (event: FeedEvent) => {
        const data = event.type === "output" ? { text: event.chunk.text, stream: event.chunk.stream } : event.type === "end" ? { summary: event.summary } : {};
        writes = writes.then(() => stream.writeSSE({ event: event.type, data: JSON.stringify(data) })).catch(() => undefined);
      };
      const replay = e.feed.replay();
      if (replay.length === 0) writes = writes.then(() => stream.writeSSE({ event: "idle", data: "{}" })).catch(() => undefined);
      replay.forEach(send);
      const stop = e.feed.watch(send);
      // Open until the browser leaves; the session's close ends nothing here, so poll for it rarely.
      await new Promise<void>((resolve) => {
        stream.onAbort(resolve);
        const timer = setInterval(() => {
          if (!live.list().includes(e)) {
            clearInterval(timer);
            resolve();
          }
        }, 5_000);
        stream.onAbort(() => clearInterval(timer));
      });
      stop();
      await writes;
    });
  });
  app.post(`${CONSOLE_PATH}/sessions/:id/cancel`, (c) => {
    try {
      const e = entryOf(c);
      e.running?.abort();
      return c.redirect(`${CONSOLE_PATH}/sessions/${e.id}`, 303);
    } catch (err) {
      return ctx.failure(c, "sessions", err);
    }
  });
}

function age(createdAt: number): string {
  const s = Math.max(0, Math.round((Date.now() - createdAt) / 1000));
  return s < 120 ? `${s} s` : s < 7_200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3_600)} h`;
}
