/**
 * `serve --console` in a real browser: the printed login link logs in, the sessions page lists a
 * client's live session, its run's output arrives over Server-Sent Events while it runs, and the
 * cancel button stops a run. The run waits for an artifact the test saves, so nothing depends on timing.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { api, startServe, type ServeProcess } from "../server/harness.js";
import { cleanup, consoleBase, ensureBuilt, launchBrowser, saveArtifact, SECRET, TOKEN, UI_TIMEOUT_MS, type JournalFixture } from "./harness.js";

let browser: Browser;
let fx: JournalFixture;
let server: ServeProcess;
let context: BrowserContext;
let sessionId: string;

beforeAll(async () => {
  await ensureBuilt();
  fx = await consoleBase();
  [browser, server] = await Promise.all([
    launchBrowser(),
    startServe(["--token", TOKEN, "--console", "--executor", "in-process", "--spare-executors", "0", "--tools", fx.tools, "--storage", fx.storage], { env: { ...process.env, TS_CODE_MODE_RUNS_SECRET: SECRET } }),
  ]);
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(UI_TIMEOUT_MS);
  const created = await api(server.url, "POST", "/sessions", { json: {}, token: TOKEN });
  expect(created.status).toBe(201);
  sessionId = (created.body as { id: string }).id;
}, 180_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  if (fx) await cleanup(fx.dir);
}, 60_000);

/** Starts a run through serve's own API (as a client would) without waiting for it. */
function startRun(code: string): Promise<{ status: number; body: unknown }> {
  return api(server.url, "POST", `/sessions/${sessionId}/run`, { json: { code, timeoutMs: 120_000 }, token: TOKEN });
}

const waitFor = (name: string) => `while (!(await artifacts.exists(${JSON.stringify(name)}))) await new Promise((r) => setTimeout(r, 50));`;

async function sessionPage(): Promise<Page> {
  const page = await context.newPage();
  await page.goto(new URL("/console/sessions", server.url).href);
  await page.getByRole("link", { name: sessionId }).click();
  await page.locator("#output[data-connected=true]").waitFor({ state: "attached" });
  return page;
}

test("the login link trades the token for the cookie; serve's JSON API still wants its bearer token", async () => {
  const page = await context.newPage();
  await page.goto(new URL(`/console/login?token=${TOKEN}`, server.url).href);
  await page.getByRole("heading", { name: "Approvals", level: 1 }).waitFor();
  expect(new URL(page.url()).search).toBe("");
  await page.getByRole("link", { name: "Sessions" }).click();
  await page.getByRole("link", { name: sessionId }).waitFor();
  expect((await api(server.url, "GET", "/info", { token: null })).status).toBe(401);
  await page.close();
}, 120_000);

test("a run's output arrives on the session's page while it runs, then its end", async () => {
  const page = await sessionPage();
  const run = startRun(`console.log("tick 1"); ${waitFor("go")} console.log("tick 2"); "done"`);
  await expect.poll(() => page.locator("#output").textContent(), { timeout: UI_TIMEOUT_MS }).toContain("tick 1");
  expect(await page.locator("#output").textContent()).not.toContain("tick 2");
  await saveArtifact(fx, "go", "now");
  await expect.poll(() => page.locator("#output").textContent(), { timeout: UI_TIMEOUT_MS }).toContain("tick 2");
  await expect.poll(() => page.locator("#run-status").textContent(), { timeout: UI_TIMEOUT_MS }).toMatch(/finished in/);
  expect((await run).status).toBe(200);
  await page.close();
}, 120_000);

test("the cancel button stops the session's run", async () => {
  const page = await sessionPage();
  const run = startRun(`console.log("waiting forever"); ${waitFor("never")}`);
  await expect.poll(() => page.locator("#output").textContent(), { timeout: UI_TIMEOUT_MS }).toContain("waiting forever");
  await page.getByRole("button", { name: "Cancel the current run" }).click();
  const result = (await run).body as { ok: boolean; error?: { name: string } };
  expect(result.ok).toBe(false);
  expect(result.error?.name).toMatch(/Cancel/);
  await page.close();
}, 120_000);
