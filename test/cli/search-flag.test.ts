/** `--search` on run: lexical, an OpenAI-compatible endpoint (a real local server), and bad values. */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, tempDir } from "./harness.js";

let dir: string;
let server: http.Server;
let url: string;
const seen: Array<{ model: string; inputs: number }> = [];

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  expect((await cli(["init", "--base", "base"], { cwd: dir })).code).toBe(0);
  // Embeds a text as counts of a few letters: deterministic, so "count" queries land near "wc".
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const { model, input } = JSON.parse(body) as { model: string; input: string[] };
      seen.push({ model, inputs: input.length });
      const vec = (t: string) => ["c", "o", "u", "n", "t", "l", "i", "e"].map((ch) => t.toLowerCase().split(ch).length - 1 + 0.01);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: vec(t) })) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}, 120_000);

afterAll(async () => {
  await new Promise((r) => server.close(r));
  await cleanup(dir);
});

describe("run --search", () => {
  it("lexical ranks by words", async () => {
    const r = await cli(["run", "--base", "base", "--search", "lexical", "(await tools.search('count lines'))[0].name"], { cwd: dir });
    expect(r.stdout).toBe("wc\n");
  });

  it("URL#model embeds with an OpenAI-compatible API", async () => {
    const r = await cli(["run", "--base", "base", "--search", `${url}#tiny-embed`, "(await tools.search('count lines', { limit: 3 })).length > 0"], { cwd: dir, timeoutMs: 60_000 });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("true\n");
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => s.model === "tiny-embed")).toBe(true);
  });

  it("a bad value is a usage error naming what is accepted", async () => {
    const r = await cli(["run", "--base", "base", "--search", "magic", "1"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/expected use-lite, lexical or URL#model/);
  });
});
