/**
 * OpenAICompatibleEmbedder against a real local HTTP server that speaks the OpenAI embeddings API
 * (the shape Ollama, vLLM and LM Studio also serve): the request it sends, the replies it accepts,
 * and the errors it raises — which must never contain the API key.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import { EmbedderError } from "../../src/search/embedder.js";
import { OpenAICompatibleEmbedder } from "../../src/search/openai.js";

const KEY = "sk-test-0123456789abcdef";

interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  body: { model?: string; input?: string[]; dimensions?: number };
}

let server: Server;
let base: string;
let seen: Seen[] = [];
/** How the server answers the next requests; default: a valid reply, rows in reverse order. */
let reply: (req: Seen, res: ServerResponse) => void;

function valid(req: Seen, res: ServerResponse): void {
  const input = req.body.input ?? [];
  const data = input.map((text, index) => ({ object: "embedding", index, embedding: [text.length, 1, 0] })).reverse();
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify({ object: "list", data, model: req.body.model }));
}

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString()));
    req.on("end", () => {
      const s: Seen = { method: req.method ?? "", url: req.url ?? "", auth: req.headers.authorization, body: raw ? (JSON.parse(raw) as Seen["body"]) : {} };
      seen.push(s);
      reply(s, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
  reply = valid;
});

async function caught(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a rejection");
}

describe("OpenAICompatibleEmbedder", () => {
  it("POSTs { model, input } to <url>/embeddings with the key as a bearer token and returns vectors in input order", async () => {
    const e = new OpenAICompatibleEmbedder({ url: `${base}/v1`, model: "nomic-embed-text", apiKey: KEY });
    expect(e.dimensions).toBe(0);
    const out = await e.embed(["a", "bbb"]);
    expect(out.map((v) => [...v])).toEqual([
      [1, 1, 0],
      [3, 1, 0],
    ]);
    expect(seen).toEqual([{ method: "POST", url: "/v1/embeddings", auth: `Bearer ${KEY}`, body: { model: "nomic-embed-text", input: ["a", "bbb"] } }]);
    expect(e.dimensions).toBe(3);
    expect(e.id).toBe(`nomic-embed-text@127.0.0.1:${new URL(base).port}/v1`);
  });

  it("keeps a URL that already ends in /embeddings, sends no auth header without a key, and asks for dimensions when given", async () => {
    const e = new OpenAICompatibleEmbedder({ url: `${base}/custom/embeddings`, model: "m", dimensions: 3 });
    await e.embed(["x"]);
    expect(seen[0]).toMatchObject({ url: "/custom/embeddings", auth: undefined, body: { model: "m", input: ["x"], dimensions: 3 } });
  });

  it("splits large inputs into batches", async () => {
    const e = new OpenAICompatibleEmbedder({ url: base, model: "m", batchSize: 2 });
    expect(await e.embed(["a", "b", "c", "d", "e"])).toHaveLength(5);
    expect(seen.map((s) => s.body.input)).toEqual([["a", "b"], ["c", "d"], ["e"]]);
  });

  it("reports an HTTP error with status, body and a hint, and never the API key even when the server echoes it", async () => {
    reply = (_req, res) => {
      res.statusCode = 401;
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }));
    };
    const err = await caught(new OpenAICompatibleEmbedder({ url: `${base}/v1`, model: "m", apiKey: KEY }).embed(["x"]));
    expect(err).toBeInstanceOf(EmbedderError);
    expect(err.name).toBe("EmbedderError");
    expect(err.message).toContain(`${base}/v1/embeddings`);
    expect(err.message).toContain("HTTP 401");
    expect(err.message).toContain("Check the apiKey");
    expect(err.message).not.toContain(KEY);
    expect(err.message).toContain("***");
  });

  it("moves URL credentials into a Basic auth header and keeps them out of messages", async () => {
    const url = new URL(base);
    reply = (_req, res) => {
      res.statusCode = 500;
      res.end("boom");
    };
    const err = await caught(new OpenAICompatibleEmbedder({ url: `http://user:s3cret@${url.host}/v1`, model: "m" }).embed(["x"]));
    expect(seen[0]?.auth).toBe(`Basic ${Buffer.from("user:s3cret").toString("base64")}`);
    expect(err.message).toContain("HTTP 500");
    expect(err.message).not.toContain("s3cret");
  });

  it("rejects replies that are not JSON, have the wrong shape, or the wrong number of vectors", async () => {
    const e = new OpenAICompatibleEmbedder({ url: base, model: "m" });
    reply = (_req, res) => res.end("<html>gateway</html>");
    expect((await caught(e.embed(["x"]))).message).toMatch(/not JSON: <html>gateway<\/html>/);
    reply = (_req, res) => res.end(JSON.stringify({ embeddings: [[1, 2]] }));
    expect((await caught(e.embed(["x"]))).message).toMatch(/unexpected shape/);
    reply = (_req, res) => res.end(JSON.stringify({ data: [] }));
    expect((await caught(e.embed(["x"]))).message).toMatch(/returned 0 embeddings for 1 texts/);
  });

  it("refuses vectors whose size changes between replies", async () => {
    const e = new OpenAICompatibleEmbedder({ url: base, model: "m" });
    await e.embed(["x"]);
    reply = (_req, res) => res.end(JSON.stringify({ data: [{ index: 0, embedding: [1, 2] }] }));
    expect((await caught(e.embed(["x"]))).message).toMatch(/returned 2-dimensional vectors; expected 3/);
  });

  it("says clearly when nothing listens at the URL", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await caught(new OpenAICompatibleEmbedder({ url: `http://127.0.0.1:${port}/v1`, model: "m", apiKey: KEY }).embed(["x"]));
    expect(err).toBeInstanceOf(EmbedderError);
    expect(err.message).toMatch(/ECONNREFUSED/);
    expect(err.message).toMatch(/Is the server running/);
    expect(err.message).not.toContain(KEY);
  });

  it("times out a server that does not answer", async () => {
    reply = () => undefined; // never answers
    const err = await caught(new OpenAICompatibleEmbedder({ url: base, model: "m", timeoutMs: 100 }).embed(["x"]));
    expect(err.message).toMatch(/no answer within 100 ms/);
  });

  it("validates its options", () => {
    expect(() => new OpenAICompatibleEmbedder({ url: "localhost:11434", model: "m" })).toThrow(ValidationError);
    expect(() => new OpenAICompatibleEmbedder({ url: "ftp://x/v1", model: "m" })).toThrow(/not http: or https:/);
    expect(() => new OpenAICompatibleEmbedder({ url: base, model: "" })).toThrow(/model must not be empty/);
    expect(() => new OpenAICompatibleEmbedder({ url: base, model: "m", extra: 1 } as never)).toThrow(ValidationError);
  });
});
