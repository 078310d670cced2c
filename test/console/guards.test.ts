/**
 * The console's guards one by one, over plain HTTP against the built `console` (no browser): a
 * request addressed to another host name (DNS rebinding) and a form posted from another origin or
 * from an opaque one are refused; an SVG is never served as an image; downloads are attachments
 * whose file name cannot break the header; hostile names in URLs are refused or shown as text.
 */
import { mkdir, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { ListeningProcess } from "../cli/harness.js";
import { cleanup, consoleBase, ensureBuilt, saveArtifact, startConsole, type JournalFixture } from "./harness.js";

let fx: JournalFixture;
let server: ListeningProcess;

beforeAll(async () => {
  await ensureBuilt();
  fx = await consoleBase();
  await saveArtifact(fx, "logo.svg", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`);
  await saveArtifact(fx, `a"b;c=d é.txt`, "hello");
  // A skill whose Markdown carries markup and script: rendered as Markdown, everything else text.
  const skill = path.join(fx.storage, "skills", "hostile-md");
  await mkdir(skill, { recursive: true });
  await writeFile(
    path.join(skill, "SKILL.md"),
    "---\nname: hostile-md\ndescription: A skill whose body tries markup\n---\n# Steps\n\n- run `wc -l`\n- read **carefully**\n\n<script>alert(1)</script> <img src=x onerror=alert(2)>\n\n[click](javascript:void0) and [docs](https://example.com/x)\n",
  );
  server = await startConsole(fx, { token: null });
}, 120_000);
afterAll(async () => {
  await server?.stop();
  if (fx) await cleanup(fx.dir);
});

/** A raw request (fetch would not let the test set Host). */
function request(path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: options.method ?? "GET", headers: options.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

test("without a token: pages answer loopback names only (a rebinding page's Host is refused)", async () => {
  expect((await request("/console/tools")).status).toBe(200);
  expect((await request("/console/tools", { headers: { host: "attacker.example" } })).status).toBe(403);
});

test("a form posted from another origin, an opaque one, or with neither Origin nor Sec-Fetch-Site is refused", async () => {
  const form = { "content-type": "application/x-www-form-urlencoded" };
  const body = "name=x&sha256=y";
  for (const origin of ["http://attacker.example", "null"]) {
    expect((await request("/console/workflow/approve", { method: "POST", headers: { ...form, origin }, body })).status).toBe(403);
  }
  expect((await request("/console/workflow/approve", { method: "POST", headers: form, body })).status).toBe(403);
  expect((await request("/console/workflow/approve", { method: "POST", headers: { ...form, "sec-fetch-site": "cross-site" }, body })).status).toBe(403);
  // From the console's own page it gets through to the check of the form itself.
  expect((await request("/console/workflow/approve", { method: "POST", headers: { ...form, origin: server.url }, body })).status).toBe(404);
});

test("an SVG artifact is never served as an image and its page shows no <img>", async () => {
  expect((await request("/console/artifact/image?name=logo.svg")).status).toBe(404);
  const page = await request("/console/artifact?name=logo.svg");
  expect(page.body).not.toContain("<img");
  expect(page.body).toContain("&lt;svg");
});

test("a download is an octet-stream attachment; quotes, semicolons and non-ASCII in the name do not reach the header raw", async () => {
  const res = await request(`/console/artifact/download?name=${encodeURIComponent(`a"b;c=d é.txt`)}`);
  expect(res.status).toBe(200);
  expect(res.headers["content-type"]).toBe("application/octet-stream");
  expect(res.headers["content-disposition"]).toMatch(/^attachment; filename="a_b_c_d__\.txt"; filename\*=UTF-8''a%22b%3Bc%3Dd%20%C3%A9\.txt$/);
  expect(res.body).toBe("hello");
});

test("a run id that is not one is refused before storage is touched; every page has the strict CSP", async () => {
  const res = await request(`/console/runs/${encodeURIComponent("../../etc")}`);
  expect(res.status).toBe(400);
  expect(res.headers["content-security-policy"]).toContain("default-src 'self'");
  expect(res.headers["content-security-policy"]).not.toContain("unsafe-inline");
});

test("a form body larger than 4 MiB is refused unread", async () => {
  const res = await request("/console/workflow/approve", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url }, body: `name=${"x".repeat(5 * 1_048_576)}` });
  expect(res.status).toBe(413);
});

test("a SKILL.md is rendered as Markdown, and the HTML and script links in it stay text", async () => {
  const page = await request("/console/skill?name=hostile-md");
  expect(page.status).toBe(200);
  const body = page.body.slice(page.body.indexOf('id="skill-body"'), page.body.indexOf('id="skill-source"'));
  expect(body).toContain("<h3>Steps</h3>");
  expect(body).toContain("<li>run <code>wc -l</code></li>");
  expect(body).toContain("<strong>carefully</strong>");
  expect(body).toContain('<a href="https://example.com/x" rel="noopener noreferrer nofollow">docs</a>');
  expect(body).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt;");
  expect(body).not.toMatch(/<script|<img|javascript:/i);
  expect(body).toContain("click and");
});
