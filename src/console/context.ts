/** What every page module gets: the session it reads through, and how to answer with a page. */
import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import type { Session } from "../session.js";
import type { SessionEntry } from "../server/sessions.js";
import type { ConsoleAuth } from "./auth.js";
import { html, type HtmlValue, type SafeHtml } from "./html.js";
import { notice, page, type Section } from "./layout.js";

export type Ctx = Context<{ Bindings: HttpBindings }>;
export type ConsoleApp = Hono<{ Bindings: HttpBindings }>;

/** The sessions a `serve --console` process holds. */
export interface LiveSessions {
  executor: string;
  list(): SessionEntry[];
}

export interface ConsoleOptions {
  /**
   * The session the console reads and acts through: its storage's run ledger, workflows,
   * artifacts, skills and tools. Durable (`{ durable }`) to answer approvals: resuming a paused
   * run runs its code again here.
   */
  session: Session;
  /** The bearer token; undefined only on loopback. */
  token?: string;
  loopbackOnly: boolean;
  /** serve --console: the server's live sessions (the sessions page). */
  live?: LiveSessions;
  log: (line: string) => void;
}

/** HTTP status for an error's stable name (the same names as serve's JSON errors). */
const STATUS: Record<string, number> = {
  ValidationError: 400,
  InvalidNameError: 400,
  DecisionError: 400,
  ToolError: 400,
  NotFoundError: 404,
  ContinuationUsedError: 409,
  ContinuationExpiredError: 409,
  ContinuationScopeError: 409,
  ContinuationInvalidError: 409,
  WorkflowProtectedError: 409,
};

export class ConsoleContext {
  readonly sections: ReadonlySet<Section>;

  constructor(
    readonly options: ConsoleOptions,
    readonly auth: ConsoleAuth,
  ) {
    const all: Section[] = ["approvals", "runs", "workflows", "artifacts", "skills", "tools"];
    this.sections = new Set<Section>(options.live ? [...all, "sessions"] : all);
  }

  get session(): Session {
    return this.options.session;
  }

  render(c: Ctx, title: string, section: Section, body: HtmlValue, status = 200): Response {
    const text = page({ title, section, sections: this.sections, loggedIn: this.auth.needsLogin && section !== "login" }, body).text;
    return c.html(text, status as 200);
  }

  /** A page for a failure, with the error's stable name and message as text. */
  failure(c: Ctx, section: Section, err: unknown): Response {
    const e = err instanceof Error ? err : new Error(String(err));
    const status = STATUS[e.name] ?? 500;
    if (status === 500) this.options.log(`console: ${e.stack ?? e.message}`);
    return this.render(c, status === 404 ? "Not found" : "Something went wrong", section, notice(html`<strong>${e.name}</strong>: ${e.message}`, "error"), status);
  }

  /** Registers a GET page whose failures render as pages. */
  page(app: ConsoleApp, path: string, section: Section, handler: (c: Ctx) => Promise<Response | SafeHtml>, title = ""): void {
    app.get(path, async (c) => {
      try {
        const out = await handler(c);
        return out instanceof Response ? out : this.render(c, title, section, out);
      } catch (err) {
        return this.failure(c, section, err);
      }
    });
  }
}
