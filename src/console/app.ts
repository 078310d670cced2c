/**
 * The web console (docs/console.md): server-rendered pages under /console, mounted on a hono app
 * (serve's own with `serve --console`, or a new one for `ts-code-mode console`). It reaches the
 * project only through a Session (and serve's session pool for the sessions page), never below.
 */
import type { HttpBindings } from "@hono/node-server";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { CONSOLE_CSS, CONSOLE_JS } from "./assets.js";
import { ConsoleAuth, CONSOLE_PATH } from "./auth.js";
import { ConsoleContext, type ConsoleApp, type ConsoleOptions } from "./context.js";
import { html } from "./html.js";
import { notice } from "./layout.js";
import { registerApprovals } from "./pages/approvals.js";
import { registerArtifacts } from "./pages/artifacts.js";
import { registerRuns } from "./pages/runs.js";
import { registerSessions } from "./pages/sessions.js";
import { registerSkills } from "./pages/skills.js";
import { registerTools } from "./pages/tools.js";
import { registerWorkflows } from "./pages/workflows.js";

const MAX_FORM_BYTES = 4 * 1_048_576;

export type { ConsoleOptions, LiveSessions } from "./context.js";
export { CONSOLE_PATH } from "./auth.js";

/** Adds the console's routes (and its guard) under /console to `app`. */
export function mountConsole(app: ConsoleApp, options: ConsoleOptions): void {
  const auth = new ConsoleAuth(options.token, options.loopbackOnly);
  const ctx = new ConsoleContext(options, auth);
  app.use(CONSOLE_PATH, auth.middleware());
  app.use(`${CONSOLE_PATH}/*`, auth.middleware());
  // Forms are small (the largest is an edited call's arguments); a larger body is refused unread.
  app.use(`${CONSOLE_PATH}/*`, bodyLimit({ maxSize: MAX_FORM_BYTES, onError: (c) => c.text(`The form is larger than ${MAX_FORM_BYTES} bytes.`, 413) }));
  app.get(`${CONSOLE_PATH}/static/console.css`, (c) => c.body(CONSOLE_CSS, 200, { "Content-Type": "text/css; charset=utf-8" }));
  app.get(`${CONSOLE_PATH}/static/console.js`, (c) => c.body(CONSOLE_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }));
  app.get(CONSOLE_PATH, (c) => c.redirect(`${CONSOLE_PATH}/approvals`, 303));
  app.get(`${CONSOLE_PATH}/`, (c) => c.redirect(`${CONSOLE_PATH}/approvals`, 303));

  const loginForm = (message?: string) => html`${message ? notice(message, "error") : ""}
<form method="post" action="${CONSOLE_PATH}/login" class="card">
<div class="field"><label for="token">Token (the --token the server was started with)</label><input type="password" id="token" name="token" autocomplete="current-password" required></div>
<button type="submit" class="primary">Log in</button></form>`;
  app.get(`${CONSOLE_PATH}/login`, (c) => {
    if (!auth.needsLogin) return c.redirect(`${CONSOLE_PATH}/approvals`, 303);
    // The printed URL carries the token once; it is traded for the cookie and the address bar cleared.
    const given = c.req.query("token");
    if (given !== undefined) {
      if (auth.login(c, given)) return c.redirect(`${CONSOLE_PATH}/approvals`, 303);
      return ctx.render(c, "Log in", "login", loginForm("That token is not this server's."), 401);
    }
    return ctx.render(c, "Log in", "login", loginForm());
  });
  app.post(`${CONSOLE_PATH}/login`, async (c) => {
    const form = await c.req.parseBody();
    const given = typeof form["token"] === "string" ? form["token"] : "";
    if (auth.login(c, given)) return c.redirect(`${CONSOLE_PATH}/approvals`, 303);
    return ctx.render(c, "Log in", "login", loginForm("That token is not this server's."), 401);
  });
  app.post(`${CONSOLE_PATH}/logout`, (c) => {
    auth.logout(c);
    return c.redirect(`${CONSOLE_PATH}/login`, 303);
  });

  registerApprovals(app, ctx);
  registerRuns(app, ctx);
  registerWorkflows(app, ctx);
  registerArtifacts(app, ctx);
  registerSkills(app, ctx);
  registerTools(app, ctx);
  if (options.live) registerSessions(app, ctx, options.live);
}

/** The app of `ts-code-mode console`: the console alone, `/` leading to it. */
export function createConsoleApp(options: ConsoleOptions): ConsoleApp {
  const app = new Hono<{ Bindings: HttpBindings }>();
  app.get("/", (c) => c.redirect(`${CONSOLE_PATH}/approvals`, 303));
  app.get("/favicon.ico", (c) => c.body(null, 204));
  mountConsole(app, options);
  app.notFound((c) => c.text("Not found: the console is under /console/", 404));
  return app;
}
