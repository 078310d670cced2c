/**
 * Who may use the console: the same rules as `serve` (src/mcp/auth.ts). With a token, a browser
 * trades it once (the printed login URL, or the login form) for an HttpOnly, SameSite=Strict
 * cookie naming a random console session; a program may send `Authorization: Bearer <token>`
 * instead. Without one, the server listens on loopback only and every request must be addressed
 * to loopback (no DNS rebinding). Every POST must come from the console's own pages: its Origin
 * (or Sec-Fetch-Site) must say so, on top of SameSite=Strict.
 */
import { randomBytes } from "node:crypto";
import type { HttpBindings } from "@hono/node-server";
import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { bearerMatches, loopbackRequestAllowed } from "../mcp/auth.js";

export const COOKIE = "tcm_console";
export const CONSOLE_PATH = "/console";
const SESSION_TTL_MS = 12 * 3_600_000;
/** Console sessions kept at once; the oldest is forgotten first (a flood of logins cannot grow memory). */
const MAX_SESSIONS = 1_000;

/** Every page: no script, style, image or frame from anywhere but the console itself. */
export const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

type Ctx = Context<{ Bindings: HttpBindings }>;

export class ConsoleAuth {
  private readonly sessions = new Map<string, number>();

  constructor(
    private readonly token: string | undefined,
    private readonly loopbackOnly: boolean,
  ) {}

  get needsLogin(): boolean {
    return this.token !== undefined;
  }

  /** True when `given` is the token; then a cookie for a new console session is set on `c`. */
  login(c: Ctx, given: string): boolean {
    if (this.token === undefined) return true;
    if (!bearerMatches(`Bearer ${given}`, this.token)) return false;
    const id = randomBytes(32).toString("base64url");
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    this.sessions.set(id, Date.now() + SESSION_TTL_MS);
    setCookie(c, COOKIE, id, { httpOnly: true, sameSite: "Strict", path: CONSOLE_PATH, maxAge: SESSION_TTL_MS / 1000 });
    return true;
  }

  logout(c: Ctx): void {
    const id = getCookie(c, COOKIE);
    if (id !== undefined) this.sessions.delete(id);
    setCookie(c, COOKIE, "", { httpOnly: true, sameSite: "Strict", path: CONSOLE_PATH, maxAge: 0 });
  }

  private cookieValid(c: Ctx): boolean {
    const id = getCookie(c, COOKIE);
    if (id === undefined) return false;
    const expires = this.sessions.get(id);
    if (expires === undefined) return false;
    if (expires < Date.now()) {
      this.sessions.delete(id);
      return false;
    }
    return true;
  }

  /** The console's guard, for every path under /console. */
  middleware(): MiddlewareHandler<{ Bindings: HttpBindings }> {
    return async (c, next) => {
      securityHeaders(c);
      if (this.loopbackOnly && !loopbackRequestAllowed(c.env.incoming)) {
        return c.text("This console listens on loopback only; the request's Host (or Origin) does not name a loopback address.", 403);
      }
      const bearer = this.token !== undefined && c.req.header("authorization") !== undefined && bearerMatches(c.req.header("authorization"), this.token);
      const unsafe = c.req.method !== "GET" && c.req.method !== "HEAD";
      // A program with the bearer token sends no cookie, so a forged cross-site request cannot carry it.
      if (unsafe && !bearer && !sameOrigin(c)) return c.text("Refused: this form was not sent from the console's own pages (Origin check).", 403);
      const path = new URL(c.req.url).pathname;
      if (path === `${CONSOLE_PATH}/login` || path.startsWith(`${CONSOLE_PATH}/static/`)) return next();
      if (this.token === undefined || bearer || this.cookieValid(c)) return next();
      if (c.req.method === "GET") return c.redirect(`${CONSOLE_PATH}/login`, 303);
      return c.text("Log in first: open /console/login.", 401);
    };
  }
}

function securityHeaders(c: Ctx): void {
  c.header("Content-Security-Policy", CSP);
  c.header("X-Content-Type-Options", "nosniff");
  // "same-origin", not "no-referrer": with no-referrer Chromium sends `Origin: null` on form posts, which the check below must refuse.
  c.header("Referrer-Policy", "same-origin");
  c.header("X-Frame-Options", "DENY");
  c.header("Cache-Control", "no-store");
}

/** The request came from a page of this origin: its Origin names this host, or (no Origin) Sec-Fetch-Site says so. */
function sameOrigin(c: Ctx): boolean {
  const host = c.req.header("host");
  const origin = c.req.header("origin");
  if (origin !== undefined) {
    try {
      return host !== undefined && origin !== "null" && new URL(origin).host === host;
    } catch {
      return false;
    }
  }
  return c.req.header("sec-fetch-site") === "same-origin";
}
