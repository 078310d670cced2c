/**
 * OpenAICompatibleEmbedder: any server speaking OpenAI's embeddings API (`POST /embeddings` with
 * `{ model, input: string[] }`, answering `{ data: [{ index, embedding }] }`): OpenAI itself,
 * Ollama (`http://localhost:11434/v1`), vLLM, LM Studio, llama.cpp's server, LiteLLM, ...
 *
 * Errors are EmbedderErrors that name the endpoint and what went wrong; the API key never appears
 * in a message (it is redacted from echoed response bodies too), and neither do URL credentials.
 */
import { z } from "zod";
import { lazy } from "../lazy.js";
import { ValidationError } from "../errors.js";
import { EmbedderError, type Embedder } from "./embedder.js";

export interface OpenAICompatibleEmbedderOptions {
  /** Base URL (`https://api.openai.com/v1`, `/embeddings` is appended) or the full embeddings URL. */
  url: string;
  /** Model name as the server knows it, e.g. `text-embedding-3-small`, `nomic-embed-text`. */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>`. Local servers usually need none. */
  apiKey?: string;
  /** Ask for vectors of this size (OpenAI's `dimensions` parameter); otherwise learned from the first reply. */
  dimensions?: number;
  /** Per request; default 30 s. */
  timeoutMs?: number;
  /** Texts per request; default 128. */
  batchSize?: number;
}

const optionsSchema = lazy(() => z.strictObject({
  url: z.string({ error: "url must be a string" }).min(1, "url must not be empty"),
  model: z.string({ error: "model must be a string" }).min(1, "model must not be empty"),
  apiKey: z.string({ error: "apiKey must be a string" }).optional(),
  dimensions: z.number().int().min(1).max(65_536).optional(),
  timeoutMs: z.number().int().min(1).max(600_000).optional(),
  batchSize: z.number().int().min(1).max(4096).optional(),
}));

const responseSchema = lazy(() => z.object({
  data: z.array(z.object({ index: z.number().int().min(0).optional(), embedding: z.array(z.number()) })),
}));

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_BATCH = 128;
const BODY_SNIPPET = 300;

export class OpenAICompatibleEmbedder implements Embedder {
  readonly id: string;
  private dims: number;
  private readonly endpoint: URL;
  private readonly model: string;
  private readonly apiKey: string | undefined;
  /** `user:pass@` of the URL: fetch refuses URLs with credentials, so they travel as Basic auth. */
  private readonly basicAuth: string | undefined;
  private readonly requestedDims: number | undefined;
  private readonly timeoutMs: number;
  private readonly batchSize: number;

  constructor(options: OpenAICompatibleEmbedderOptions) {
    const parsed = optionsSchema.safeParse(options);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
      throw new ValidationError(`Invalid OpenAICompatibleEmbedder options: ${problems}. Expected { url, model, apiKey?, dimensions?, timeoutMs?, batchSize? }.`);
    }
    const o = parsed.data;
    this.endpoint = embeddingsUrl(o.url);
    if (this.endpoint.username || this.endpoint.password) {
      const user = decodeURIComponent(this.endpoint.username);
      const pass = decodeURIComponent(this.endpoint.password);
      this.basicAuth = Buffer.from(`${user}:${pass}`).toString("base64");
      this.endpoint.username = "";
      this.endpoint.password = "";
    }
    this.model = o.model;
    this.apiKey = o.apiKey;
    this.requestedDims = o.dimensions;
    this.dims = o.dimensions ?? 0;
    this.timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.batchSize = o.batchSize ?? DEFAULT_BATCH;
    // Same model behind another server may be another build: the endpoint is part of the identity.
    this.id = `${o.model}@${this.endpoint.host}${this.endpoint.pathname.replace(/\/embeddings$/, "")}`;
  }

  get dimensions(): number {
    return this.dims;
  }

  /** The endpoint without credentials, for messages. */
  get url(): string {
    return this.endpoint.href;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) out.push(...(await this.request(texts.slice(i, i + this.batchSize))));
    return out;
  }

  private async request(input: string[]): Promise<Float32Array[]> {
    const where = `Embedding request to ${this.endpoint.href} (model ${this.model})`;
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (this.apiKey) headers["authorization"] = `Bearer ${this.apiKey}`;
    else if (this.basicAuth) headers["authorization"] = `Basic ${this.basicAuth}`;
    const body: Record<string, unknown> = { model: this.model, input };
    if (this.requestedDims !== undefined) body["dimensions"] = this.requestedDims;
    let res: Response;
    try {
      res = await fetch(this.endpoint, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const why =
        e.name === "TimeoutError" ? `no answer within ${this.timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message);
      throw new EmbedderError(`${where} failed: ${this.redact(why)}. Is the server running and the URL right?`);
    }
    const text = await res.text().catch(() => "");
    if (!res.ok) {
      const hint = res.status === 401 || res.status === 403 ? " Check the apiKey." : res.status === 404 ? " Check the URL and the model name." : "";
      throw new EmbedderError(`${where} failed: HTTP ${res.status} ${res.statusText}: ${this.snippet(text)}.${hint}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new EmbedderError(`${where} returned something that is not JSON: ${this.snippet(text)}`);
    }
    const parsed = responseSchema.safeParse(json);
    if (!parsed.success) {
      throw new EmbedderError(`${where} returned an unexpected shape (expected { data: [{ index, embedding: number[] }] }): ${this.snippet(text)}`);
    }
    const rows = parsed.data.data.map((d, i) => ({ index: d.index ?? i, embedding: d.embedding }));
    rows.sort((a, b) => a.index - b.index);
    if (rows.length !== input.length) throw new EmbedderError(`${where} returned ${rows.length} embeddings for ${input.length} texts`);
    const dims = rows[0]?.embedding.length ?? 0;
    if (dims === 0 || rows.some((r) => r.embedding.length !== dims)) throw new EmbedderError(`${where} returned embeddings of differing or zero length`);
    if (this.dims !== 0 && dims !== this.dims) throw new EmbedderError(`${where} returned ${dims}-dimensional vectors; expected ${this.dims}`);
    this.dims = dims;
    return rows.map((r) => Float32Array.from(r.embedding));
  }

  private snippet(text: string): string {
    const flat = text.replace(/\s+/g, " ").trim();
    return this.redact(flat.length > BODY_SNIPPET ? `${flat.slice(0, BODY_SNIPPET)}…` : flat || "(empty body)");
  }

  /** Some servers echo the key they refused; never let it into a message. */
  private redact(text: string): string {
    let out = text;
    for (const secret of [this.apiKey, this.basicAuth]) if (secret) out = out.split(secret).join("***");
    return out;
  }
}

/** `.../v1` → `.../v1/embeddings`; a URL already ending in `/embeddings` is kept. */
function embeddingsUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError(`Invalid OpenAICompatibleEmbedder url ${JSON.stringify(raw)}: expected e.g. http://localhost:11434/v1`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ValidationError(`Invalid OpenAICompatibleEmbedder url: ${url.protocol} is not http: or https:`);
  }
  if (!/\/embeddings\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/+$/, "")}/embeddings`;
  return url;
}
