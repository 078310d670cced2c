/**
 * The console's journeys in a real browser (headless Chromium): log in with the token, answer
 * paused runs (an edited approval that finishes the run, a rejection), approve an untrusted
 * workflow, open and download an artifact, and hostile names and contents that stay text.
 */
import { readFile } from "node:fs/promises";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { ListeningProcess } from "../cli/harness.js";
import { cleanup, consoleBase, ensureBuilt, launchBrowser, runDurable, saveArtifact, saveUntrustedWorkflow, startConsole, TOKEN, UI_TIMEOUT_MS, type JournalFixture } from "./harness.js";

let browser: Browser;
let fx: JournalFixture;
let server: ListeningProcess;
let context: BrowserContext;
let dialogs: string[] = [];

beforeAll(async () => {
  await ensureBuilt();
  fx = await consoleBase();
  [browser, server] = await Promise.all([launchBrowser(), startConsole(fx)]);
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(UI_TIMEOUT_MS);
}, 180_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  if (fx) await cleanup(fx.dir);
}, 60_000);

async function open(path: string): Promise<Page> {
  const page = await context.newPage();
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(new URL(path, server.url).href);
  return page;
}

test("a browser without the cookie is sent to log in; the token is traded once for an HttpOnly, SameSite=Strict cookie", async () => {
  const page = await open("/console/runs");
  await expect.poll(() => new URL(page.url()).pathname).toBe("/console/login");
  await page.getByLabel("Token").fill("wrong-token-0123456789");
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByText("That token is not this server's.").waitFor();
  await page.getByLabel("Token").fill(TOKEN);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("heading", { name: "Approvals", level: 1 }).waitFor();
  const cookie = (await context.cookies()).find((c) => c.name === "tcm_console");
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/console" });
  expect(cookie?.value).not.toContain(TOKEN);
  await page.close();
}, 120_000);

test("every page has the strict CSP; a POST from another origin, or without the cookie, is refused", async () => {
  const res = await fetch(new URL("/console/login", server.url));
  expect(res.headers.get("content-security-policy")).toMatch(/default-src 'self'/);
  const cookie = (await context.cookies()).find((c) => c.name === "tcm_console")!;
  const forged = await fetch(new URL("/console/workflow/approve", server.url), {
    method: "POST",
    headers: { cookie: `tcm_console=${cookie.value}`, origin: "http://evil.example", "content-type": "application/x-www-form-urlencoded" },
    body: "name=x&sha256=y",
  });
  expect(forged.status).toBe(403);
  const noCookie = await fetch(new URL("/console/workflow/approve", server.url), { method: "POST", headers: { origin: server.url, "content-type": "application/x-www-form-urlencoded" }, body: "name=x&sha256=y" });
  expect(noCookie.status).toBe(401);
}, 60_000);

test("approving an edited call resumes the paused run, which finishes with the edited arguments", async () => {
  const paused = await runDurable(fx, `const n = (await tools.journal.add({ line: "a" })).trim(); const paid = (await tools.journal.pay({ line: "pay 100" })).trim(); ({ n, paid })`);
  expect(paused.status).toBe("paused");
  const page = await open("/console/approvals");
  const card = page.locator(`#run-${paused.runId}`);
  await card.getByRole("radio", { name: "Approve with the edited arguments" }).check();
  const args = card.getByLabel("Arguments (JSON; used when you edit)");
  await expect.poll(() => args.inputValue()).toContain("pay 100");
  // A wrong edit is refused against the tool's parameters, before anything runs.
  await args.fill('{ "amount": 90 }');
  await card.getByRole("button", { name: /resume the run/ }).click();
  await page.getByText(/Unknown argument 'amount'/).waitFor();
  const again = page.locator(`#run-${paused.runId}`);
  await again.getByRole("radio", { name: "Approve with the edited arguments" }).check();
  await again.getByLabel("Arguments (JSON; used when you edit)").fill('{ "line": "pay 90" }');
  await again.getByRole("button", { name: /resume the run/ }).click();
  await page.waitForURL(/\/console\/runs\//);
  await page.locator(".badge", { hasText: "completed" }).first().waitFor();
  expect(await page.locator("#result").textContent()).toContain("paid: '2'");
  expect(await fx.lines()).toEqual(["a", "pay 90"]);
  // The run page lists every call with its arguments and the decision.
  await page.getByText("Decision: edit").waitFor();
  await page.close();
}, 120_000);

test("rejecting a call resumes the run with a PERMISSION error the agent sees, with the reason", async () => {
  const paused = await runDurable(fx, `await tools.journal.pay({ line: "pay 1000" })`);
  expect(paused.status).toBe("paused");
  const page = await open("/console/approvals");
  const card = page.locator(`#run-${paused.runId}`);
  await card.getByRole("radio", { name: "Reject" }).check();
  await card.getByLabel(/Reason/).fill("too much");
  await card.getByRole("button", { name: /resume the run/ }).click();
  await page.waitForURL(/\/console\/runs\//);
  await page.locator(".badge", { hasText: "failed" }).first().waitFor();
  expect(await page.locator("#result").textContent()).toMatch(/rejected by a reviewer: too much/);
  expect(await fx.lines()).not.toContain("pay 1000");
  await page.close();
}, 120_000);

test("an untrusted workflow is reviewed and approved against the source shown", async () => {
  await saveUntrustedWorkflow(fx, { name: "greet", source: `/** Says hello */\nexport async function run({ who }: { who: string }) {\n  return "hello " + who;\n}\n` });
  const page = await open("/console/workflows");
  await page.getByRole("link", { name: "greet" }).click();
  await page.locator(".badge", { hasText: "untrusted" }).first().waitFor();
  expect(await page.locator("#source").textContent()).toContain('return "hello " + who;');
  // Highlighted on the server: keywords and strings in spans, the text unchanged.
  expect(await page.locator("#source .tok-keyword", { hasText: "export" }).count()).toBe(1);
  expect(await page.locator("#source .tok-string").first().textContent()).toBe('"hello "');
  await page.getByRole("button", { name: "Approve this source" }).click();
  await page.getByText("Approved: the workflow is now trusted.").waitFor();
  await page.locator(".badge", { hasText: "trusted" }).first().waitFor();
  expect(await page.getByRole("button", { name: "Approve this source" }).count()).toBe(0);
  await page.close();
}, 120_000);

test("an artifact opens with its metadata and preview, and downloads as an attachment", async () => {
  await saveArtifact(fx, "report.json", JSON.stringify({ total: 42 }), "the weekly report");
  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
  await saveArtifact(fx, "dot.png", new Uint8Array(png), "one pixel");
  const page = await open("/console/artifacts");
  await page.getByRole("link", { name: "report.json" }).click();
  await page.getByText("the weekly report").first().waitFor();
  expect(await page.locator("#preview").textContent()).toContain('{"total":42}');
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download" }).click()]);
  expect(download.suggestedFilename()).toBe("report.json.txt");
  expect(await readFile((await download.path())!, "utf8")).toBe('{"total":42}');
  await page.goto(new URL("/console/artifacts", server.url).href);
  await page.getByRole("link", { name: "dot.png" }).click();
  const img = page.getByRole("img", { name: "one pixel" });
  await img.waitFor();
  await expect.poll(() => img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBe(1);
  await page.close();
}, 120_000);

test("an artifact and a workflow named and filled with script and HTML render as text", async () => {
  const evil = `<script>alert("name")</script><img src=x onerror=alert("img")>`;
  await saveArtifact(fx, evil, `<script>alert("body")</script><b onmouseover=alert(1)>bold</b>`, `<img src=x onerror=alert("desc")>`);
  await saveUntrustedWorkflow(fx, {
    name: "evil_flow",
    description: `<script>alert("wf")</script>`,
    source: `/** <img src=x onerror=alert("doc")> */\nexport async function run() {\n  return "</pre><script>alert('src')</script>";\n}\n`,
  });
  dialogs = [];
  const page = await open("/console/artifacts");
  await page.getByText(`<img src=x onerror=alert("desc")>`).waitFor();
  await page.getByRole("link", { name: evil }).click();
  await page.getByRole("heading", { name: `Artifact ${evil}` }).waitFor();
  expect(await page.locator("#preview").textContent()).toBe(`<script>alert("body")</script><b onmouseover=alert(1)>bold</b>`);
  await page.goto(new URL("/console/workflows", server.url).href);
  await page.getByText(`<script>alert("wf")</script>`).waitFor();
  await page.getByRole("link", { name: "evil_flow" }).click();
  expect(await page.locator("#source").textContent()).toContain(`return "</pre><script>alert('src')</script>";`);
  expect(await page.locator("main script, main img, main b").count()).toBe(0);
  expect(dialogs).toEqual([]);
  await page.close();
}, 120_000);

test("keyboard and small screens: the first Tab reaches the skip link, every control has a label, no page scrolls sideways at phone width", async () => {
  const pages = ["/console/approvals", "/console/runs", "/console/workflows", "/console/workflow?name=greet", "/console/artifacts", "/console/artifact?name=report.json", "/console/skills", "/console/tools", "/console/tool?name=journal"];
  const page = await open(pages[0]!);
  await page.keyboard.press("Tab");
  expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent)).toBe("Skip to the content");
  await page.setViewportSize({ width: 390, height: 844 });
  for (const path of pages) {
    await page.goto(new URL(path, server.url).href);
    const unlabelled = await page.evaluate(() => {
      type Control = { type?: string; id: string; name: string; labels: { length: number } | null; getAttribute(n: string): string | null };
      const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<Control> } }).document;
      return [...doc.querySelectorAll("input, textarea, select")].filter((c) => c.type !== "hidden" && !(c.labels?.length) && !c.getAttribute("aria-label")).map((c) => c.name || c.id);
    });
    expect(unlabelled, path).toEqual([]);
    const overflow = await page.evaluate(() => {
      const el = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
      return el.scrollWidth - el.clientWidth;
    });
    expect(overflow, path).toBeLessThanOrEqual(0);
  }
  await page.close();
}, 120_000);
