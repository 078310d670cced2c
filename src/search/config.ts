/**
 * Search configuration: which embedder (if any) ranks tools.search and workflows.search, and where
 * its vectors are cached. HostServices builds one SearchSetup per session from the executor's
 * `search` option; the wiring lives here so that the libraries only ever see a `Ranker`.
 *
 *   search: { embedder: "use-lite" }                    default: built-in model, offline
 *   search: { embedder: "lexical" }                     words only, no model
 *   search: { embedder: { url, model, apiKey? } }        an OpenAI-compatible endpoint
 *   search: { embedder: myEmbedder }                    anything implementing Embedder
 *
 * Without an explicit embedder, the TS_CODE_MODE_SEARCH environment variable may choose one with
 * the same words the CLI uses: `use-lite`, `lexical` or `URL#model` (API key in
 * TS_CODE_MODE_SEARCH_API_KEY).
 */
import { isIntIn, quickParse } from "../values/quick-checks.js";
import { createHash } from "node:crypto";
import path from "node:path";
import { z } from "zod";
import { lazy } from "../lazy.js";
import { ValidationError } from "../errors.js";
import type { StorageBackend } from "../storage/protocol.js";
import { EmbedderError, isEmbedder, type Embedder } from "./embedder.js";
import { BlobVectorCache } from "./blob-vector-cache.js";
import { FileVectorCache } from "./file-vector-cache.js";
import { LexicalRanker, type Ranker } from "./lexical.js";
import { OpenAICompatibleEmbedder, type OpenAICompatibleEmbedderOptions } from "./openai.js";
import { SemanticRanker } from "./semantic.js";
import { UseLiteEmbedder } from "./use-lite.js";
import type { VectorCache } from "./vector-cache.js";

export type EmbedderSpec = Embedder | "use-lite" | "lexical" | OpenAICompatibleEmbedderOptions;

export interface SearchOptions {
  /** Default "use-lite" (or what TS_CODE_MODE_SEARCH says). */
  embedder?: EmbedderSpec;
  /** How long a search waits for the model to be ready before ranking by words only. Default 1 s (then the results are marked `indexing`). */
  readyTimeoutMs?: number;
  /** How long a search waits for new entries to be embedded before ranking them by words only. Default 1 s (then the results are marked `indexing`). */
  indexTimeoutMs?: number;
}

export const SEARCH_ENV = "TS_CODE_MODE_SEARCH";
export const SEARCH_API_KEY_ENV = "TS_CODE_MODE_SEARCH_API_KEY";

const EMBEDDER_HELP = `"use-lite", "lexical", { url, model, apiKey? } or an Embedder ({ id, dimensions, embed(texts) })`;

function isEmbedderSpec(v: unknown): v is EmbedderSpec {
  if (v === "use-lite" || v === "lexical" || isEmbedder(v)) return true;
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o["url"] === "string" && typeof o["model"] === "string";
}

const ms = lazy(() => z.number({ error: "must be a number of milliseconds" }).int("must be a whole number of milliseconds").min(0).max(600_000, "must be at most 600000 ms"));

/** Validates the executor's `search` option (unknown keys are errors, like every other option). */
const QUICK_SEARCH_CHECKS = { embedder: isEmbedderSpec, readyTimeoutMs: isIntIn(0, 600_000), indexTimeoutMs: isIntIn(0, 600_000) };

export const searchOptionsSchema = lazy(() => z.strictObject(
  {
    embedder: z.custom<EmbedderSpec>(isEmbedderSpec, `must be ${EMBEDDER_HELP}`).optional(),
    readyTimeoutMs: ms.optional(),
    indexTimeoutMs: ms.optional(),
  },
  { error: "must be an object { embedder?, readyTimeoutMs?, indexTimeoutMs? }" },
));

/**
 * Parses the words the CLI flag `--search` and TS_CODE_MODE_SEARCH use: `use-lite`, `lexical`, or
 * `URL#model` (e.g. `http://localhost:11434/v1#nomic-embed-text`).
 */
export function parseSearchSpec(spec: string, apiKey?: string): "use-lite" | "lexical" | OpenAICompatibleEmbedderOptions {
  const s = spec.trim();
  if (s === "use-lite" || s === "lexical") return s;
  const hash = s.lastIndexOf("#");
  if (/^https?:\/\//i.test(s) && hash > 0 && hash < s.length - 1) {
    const out: OpenAICompatibleEmbedderOptions = { url: s.slice(0, hash), model: s.slice(hash + 1) };
    if (apiKey) out.apiKey = apiKey;
    return out;
  }
  throw new ValidationError(`Invalid search setting ${JSON.stringify(spec)}: expected use-lite, lexical or URL#model (e.g. http://localhost:11434/v1#nomic-embed-text)`);
}

let sharedUseLite: UseLiteEmbedder | null = null;

/** The embedder a spec names; null for lexical-only search. The built-in model is one per process. */
export function createEmbedder(spec: EmbedderSpec): Embedder | null {
  if (spec === "lexical") return null;
  if (spec === "use-lite") return (sharedUseLite ??= new UseLiteEmbedder());
  if (isEmbedder(spec)) return spec;
  return new OpenAICompatibleEmbedder(spec);
}

/** The embedder spec in effect: the option, else TS_CODE_MODE_SEARCH, else the built-in model. */
export function effectiveEmbedderSpec(options: SearchOptions | undefined, env: NodeJS.ProcessEnv = process.env): EmbedderSpec {
  if (options?.embedder !== undefined) return options.embedder;
  const fromEnv = env[SEARCH_ENV];
  if (fromEnv === undefined || fromEnv.trim() === "") return "use-lite";
  try {
    return parseSearchSpec(fromEnv, env[SEARCH_API_KEY_ENV]);
  } catch (err) {
    throw new ValidationError(`${SEARCH_ENV}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Where a storage keeps vectors persistently. A backend with a disk home (`basePath`, e.g.
 * FileStorage) gets `<basePath>/vectors/<space>/<scope...>/`. This is where a Redis-backed cache
 * (`<prefix>:vectors:*`) plugs in, for `storage.toDescriptor().type === "redis"`; until it exists
 * such storages keep vectors in memory only.
 */
export function persistentVectorCache(storage: StorageBackend, space: string, dimensions: number, scope: readonly string[]): VectorCache | undefined {
  if (storage.basePath) return new FileVectorCache(path.join(storage.basePath, "vectors", space, ...scope), dimensions);
  if (storage.blobs) return new BlobVectorCache(storage.blobs, ["vectors", space, ...scope].join(":"), dimensions);
  return undefined;
}

/** One session's search: the embedder and the rankers built on it. */
/** Rankers by storage object (see SearchSetup.ranker); they go when the storage object does. */
const sharedRankers = new WeakMap<StorageBackend, Map<string, Ranker>>();
const embedderKeys = new WeakMap<Embedder, number>();
let nextEmbedderKey = 1;

/** Embedders are told apart by identity: two objects with one id may differ (a test's, an endpoint's key). */
function embedderKey(embedder: Embedder): string {
  let key = embedderKeys.get(embedder);
  if (key === undefined) {
    key = nextEmbedderKey++;
    embedderKeys.set(embedder, key);
  }
  return String(key);
}

/** The missing-model notice is printed once per process, not once per session. */
let modelNoticeShown = false;

export class SearchSetup {
  private constructor(
    readonly embedder: Embedder | null,
    private readonly storage: StorageBackend,
    private readonly options: SearchOptions,
    /** Why the built-in model could not be loaded (a light core install): said at the first search. */
    private readonly missingModel?: string,
  ) {}

  static create(storage: StorageBackend, options: SearchOptions = {}): SearchSetup {
    // The hand-written twin first (src/values/quick-checks.ts): a session start needs no zod.
    const quick = quickParse(options, QUICK_SEARCH_CHECKS);
    const parsed = quick ? { success: true as const } : searchOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message));
      throw new ValidationError(`Invalid search options: ${problems.join("; ")}.`);
    }
    const spec = effectiveEmbedderSpec(options);
    let embedder: Embedder | null;
    try {
      embedder = createEmbedder(spec);
    } catch (err) {
      // The built-in model is an optional peer (a light core install leaves it out): a session
      // still starts, searching by words, and the process says so once. An explicit choice fails loudly.
      if (options.embedder !== undefined || !(err instanceof EmbedderError)) throw err;
      return new SearchSetup(null, storage, options, err.message);
    }
    return new SearchSetup(embedder, storage, options);
  }

  /** Ranker for the storage's workflows (per workspace). */
  workflowsRanker(): Ranker {
    const workspace = this.storage.toDescriptor().workspaceId;
    return this.ranker(workspace === undefined ? ["workflows"] : ["workspaces", workspace, "workflows"]);
  }

  /** Ranker for the skills (per workspace; the same hybrid ranking as workflows). */
  skillsRanker(): Ranker {
    const workspace = this.storage.toDescriptor().workspaceId;
    return this.ranker(workspace === undefined ? ["skills"] : ["workspaces", workspace, "skills"]);
  }

  /** Ranker for the tools loaded from `toolsPath` (cached per folder, so two tool sets sharing a base do not evict each other). */
  toolsRanker(toolsPath: string | undefined): Ranker {
    const id = createHash("sha256").update(path.resolve(toolsPath ?? "")).digest("hex").slice(0, 16);
    return this.ranker(["tools", id]);
  }

  /** Starts loading the model in the background; returns at once. */
  warmUp(): void {
    void this.embedder?.warmUp?.();
  }

  /**
   * One ranker per storage object, scope and settings, shared by every session of the process on
   * that storage: a new session's first search finds the word index and the vectors already built
   * (10,000 workflows take about a second to index). Rankers hold no session state.
   */
  private ranker(scope: string[]): Ranker {
    const { readyTimeoutMs, indexTimeoutMs } = this.options;
    const key = [scope.join("/"), this.embedder ? embedderKey(this.embedder) : this.missingModel ? "lexical, no model" : "lexical", readyTimeoutMs ?? "", indexTimeoutMs ?? ""].join("\0");
    let rankers = sharedRankers.get(this.storage);
    if (!rankers) {
      rankers = new Map();
      sharedRankers.set(this.storage, rankers);
    }
    let ranker = rankers.get(key);
    if (!ranker) {
      ranker = this.newRanker(scope);
      rankers.set(key, ranker);
    }
    return ranker;
  }

  private newRanker(scope: string[]): Ranker {
    if (!this.embedder) return this.missingModel ? lexicalSayingWhy(this.missingModel) : new LexicalRanker();
    const { readyTimeoutMs, indexTimeoutMs } = this.options;
    return new SemanticRanker({
      embedder: this.embedder,
      cache: (space, dimensions) => persistentVectorCache(this.storage, space, dimensions, scope),
      ...(readyTimeoutMs !== undefined ? { readyTimeoutMs } : {}),
      ...(indexTimeoutMs !== undefined ? { indexTimeoutMs } : {}),
    });
  }
}

/**
 * Words-only ranking because the built-in model is missing (an optional peer). The process says so
 * once, at its first search: a session that never searches (`run '1+1'`) says nothing.
 */
function lexicalSayingWhy(reason: string): Ranker {
  const lexical = new LexicalRanker();
  return {
    rank(query, docs, limit) {
      if (!modelNoticeShown) process.stderr.write(`ts-code-mode: search: ${reason}; searching by words only\n`);
      modelNoticeShown = true;
      return lexical.rank(query, docs, limit);
    },
  };
}
