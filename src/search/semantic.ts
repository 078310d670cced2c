/**
 * SemanticRanker: the `Ranker` behind tools.search and workflows.search when an embedder is
 * configured. It fuses meaning (cosine similarity of sentence embeddings) with the lexical score,
 * so "discover which TCP ports are listening" finds `port_scan` while "use ffuf" still finds the
 * one workflow that mentions ffuf.
 *
 *   semantic = 0.7·cos(query, primary) + 0.3·cos(query, secondary)   (primary alone if no secondary)
 *   s        = clamp((semantic − 0.2) / 0.6, 0, 1)                    (USE cosines of unrelated texts sit near 0.1–0.3)
 *   fused    = 0.6·s + 0.4·lexical      (lexical: LexicalRanker's per-word scores, weighted by rarity: idfWeighted)
 *   final    = 0.9 + 0.1·fused   when a word of the query is the document's exact name, else fused
 * A document is returned when lexical > 0 or semantic > 0.2.
 *
 * For a workflow, primary = its description, secondary = the words of its source (text.ts); for a
 * tool, primary = description and tags, secondary = its callables' names and descriptions.
 *
 * Vectors are cached by the sha256 of the embedded text: in memory (LRU) and in a persistent
 * VectorCache per vector space, so an unchanged document is embedded once, ever. The query is
 * embedded while the lexical scores are computed. When the model is not ready within
 * `readyTimeoutMs` (or the embedder fails) the search is ranked lexically and a note is logged;
 * documents still being embedded after `indexTimeoutMs` are ranked by their lexical score alone
 * while embedding continues in the background.
 */
import { createHash } from "node:crypto";
import { dot, normalize, type Embedder } from "./embedder.js";
import {
  byScore,
  prepareFields,
  prepareQuery,
  queryTokens,
  roundScore,
  type PreparedFields,
  type Ranker,
  type ScoredId,
  type SearchDocument,
} from "./lexical.js";
import { LexicalIndex } from "./lexical-index.js";
import { codeWords } from "./text.js";
import { VectorLru, type VectorCache } from "./vector-cache.js";

/** The fusion's constants, exported so tests and docs quote the code rather than a copy. */
export const FUSION = {
  primary: 0.7,
  secondary: 0.3,
  floor: 0.2,
  ceiling: 0.8,
  semantic: 0.6,
  lexical: 0.4,
  exact: 0.9,
} as const;

export interface SemanticRankerOptions {
  embedder: Embedder;
  /**
   * The persistent cache for one vector space (`space` names embedder id + dimensions and is safe
   * as a folder name). Called once per space; undefined keeps vectors in memory only.
   */
  cache?: (space: string, dimensions: number) => VectorCache | undefined;
  /**
   * True (default) when every rank() call gets the complete collection: vectors of texts that are
   * gone are then deleted from the persistent cache (the first search of a process sweeps it).
   */
  collectGarbage?: boolean;
  /** How long a search waits for the query's embedding (model still loading) before ranking lexically. Default 10 s. */
  readyTimeoutMs?: number;
  /** How long a search waits for documents to be embedded before ranking the rest lexically. Default 10 s. */
  indexTimeoutMs?: number;
  /** Memory for cached vectors, in bytes. Default 64 MiB (32,768 vectors of 512 floats). */
  memoryBytes?: number;
  /** Where notes go (model not ready, embedder failed). Default: stderr. */
  log?: (message: string) => void;
}

export const DEFAULT_READY_TIMEOUT_MS = 10_000;
export const DEFAULT_INDEX_TIMEOUT_MS = 10_000;
const DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024;
/** Embedding cost grows with length; the start of a text says what it is about. */
const MAX_PRIMARY_CHARS = 2000;
const MAX_SECONDARY_CHARS = 1500;
/** Texts per embed() call while indexing: progress is saved (and the deadline checked) per chunk. */
const INDEX_CHUNK = 64;
const QUERY_CACHE = 256;

interface Text {
  text: string;
  key: string;
}

/** What a document's texts turned into; rebuilt only when one of its texts changes. */
interface DocState {
  doc: SearchDocument;
  lexical: PreparedFields;
  primary: Text | null;
  secondary: Text | null;
  name: string;
  /** 0.7·primary + 0.3·secondary (or primary alone), once both are embedded in `space`. */
  combined: Float32Array | null;
  /** The vector space `combined` belongs to; null while unresolved. */
  space: string | null;
  /** Index in the current rank() call's documents (rows of the per-token score table). */
  position: number;
}

/** One vector space (embedder id + dimensions): its LRU, persistent cache and indexing state. */
interface Space {
  name: string;
  dimensions: number;
  lru: VectorLru;
  store: VectorCache | undefined;
  inflight: Map<string, Promise<void>>;
  swept: boolean;
  live: Set<string>;
}

const TIMEOUT = Symbol("timeout");

export class SemanticRanker implements Ranker {
  readonly embedder: Embedder;
  private readonly options: Required<Omit<SemanticRankerOptions, "cache" | "embedder">> & Pick<SemanticRankerOptions, "cache">;
  private states = new Map<string, DocState>();
  /** Word postings of the current documents, kept in step with `states`. */
  private readonly index = new LexicalIndex<DocState>();
  /** The states of the previous rank() call, in its order. */
  private order: DocState[] = [];
  private readonly spaces = new Map<string, Space>();
  private readonly queries = new Map<string, Float32Array>();
  private readonly noted = new Set<string>();

  constructor(options: SemanticRankerOptions) {
    this.embedder = options.embedder;
    this.options = {
      cache: options.cache,
      collectGarbage: options.collectGarbage ?? true,
      readyTimeoutMs: options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
      indexTimeoutMs: options.indexTimeoutMs ?? DEFAULT_INDEX_TIMEOUT_MS,
      memoryBytes: options.memoryBytes ?? DEFAULT_MEMORY_BYTES,
      log: options.log ?? ((m) => process.stderr.write(`ts-code-mode: ${m}\n`)),
    };
  }

  /** Starts loading the model (if the embedder loads one) without waiting for it. */
  warmUp(): void {
    void this.embedder.warmUp?.();
  }

  async rank(query: string, docs: readonly SearchDocument[], limit: number): Promise<ScoredId[]> {
    if (query.trim() === "" || docs.length === 0) return [];
    const started = Date.now();
    // The query is embedded (in the model's worker) while the words are scored here.
    const queryVector = this.queryVector(query);
    const q = queryTokens(query);
    const pq = prepareQuery(q);
    const { states, changed } = this.prepare(docs);
    for (let i = 0; i < states.length; i++) states[i]!.position = i;
    const perToken = new Float64Array(states.length * q.length);
    this.index.scoreInto(pq, (s) => s.position, perToken);
    const deadline = started + this.options.indexTimeoutMs;
    // When the vector size is known up front (the built-in model), documents' vectors are read
    // from the cache (or embedded) while the query is embedded — or while the model still loads.
    const known = this.embedder.dimensions > 0 ? this.space(this.embedder.dimensions) : null;
    const early = known ? this.resolveAll(states, known, deadline) : null;
    const qv = await queryVector;
    if (!qv) {
      early?.catch(() => undefined); // keeps indexing in the background; nobody waits for it now
      // Exactly what LexicalRanker returns (the mean of the per-token scores), so a fallback looks like lexical-only mode.
      const scored: ScoredId[] = [];
      for (let i = 0; i < states.length; i++) {
        let sum = 0;
        for (let t = 0; t < q.length; t++) sum += perToken[i * q.length + t]!;
        const score = roundScore(q.length ? sum / q.length : 0);
        if (score > 0) scored.push({ id: states[i]!.doc.id, score });
      }
      return top(scored, limit);
    }
    const space = this.space(qv.length);
    const resolved = early && known === space ? await early : await this.resolveAll(states, space, deadline);
    if (this.options.collectGarbage && (changed || resolved > 0 || !space.swept)) await this.collect(states, space);
    const words = new Set(query.toLowerCase().split(/\s+/).map((w) => w.replace(/^\W+|\W+$/g, "")));
    const lexical = idfWeighted(perToken, states.length, q.length);
    const scored: ScoredId[] = [];
    let pending = 0;
    for (let i = 0; i < states.length; i++) {
      const s = states[i]!;
      const lex = lexical[i]!;
      let fused: number;
      let semantic = 0;
      if (s.space !== space.name) {
        pending++;
        fused = lex; // not embedded yet: words only, this time
      } else {
        semantic = s.combined ? dot(qv, s.combined) : 0;
        const sNorm = Math.min(1, Math.max(0, (semantic - FUSION.floor) / (FUSION.ceiling - FUSION.floor)));
        fused = FUSION.semantic * sNorm + FUSION.lexical * lex;
      }
      if (lex <= 0 && semantic <= FUSION.floor) continue;
      const final = words.has(s.name) ? FUSION.exact + (1 - FUSION.exact) * fused : fused;
      scored.push({ id: s.doc.id, score: roundScore(final) });
    }
    if (pending > 0) {
      this.note("indexing", `search: ${pending} of ${states.length} entries are still being embedded; they were ranked by their words only this time`);
    }
    return top(scored, limit);
  }

  /** The query's unit vector, or null (after a note) when the embedder is not ready in time or fails. */
  private async queryVector(query: string): Promise<Float32Array | null> {
    const cached = this.queries.get(query);
    if (cached) return cached;
    const work = this.embedder.embed([query]).then(([v]) => (v ? normalize(v) : null));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<typeof TIMEOUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMEOUT), this.options.readyTimeoutMs);
      timer.unref();
    });
    try {
      const v = await Promise.race([work, deadline]);
      if (v === TIMEOUT) {
        work.catch(() => undefined); // it may still fail later; nobody is waiting for it any more
        this.note(
          "not-ready",
          `search: the embedding model (${this.embedder.id}) was not ready within ${this.options.readyTimeoutMs} ms; ranked by words only until it is`,
        );
        return null;
      }
      if (!v || v.length === 0) return null;
      if (this.queries.size >= QUERY_CACHE) this.queries.delete(this.queries.keys().next().value!);
      this.queries.set(query, v);
      return v;
    } catch (err) {
      this.note("embed-failed", `search: embedding with ${this.embedder.id} failed, ranked by words only: ${err instanceof Error ? err.message : String(err)}`);
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Per-document state, reused while the document's texts are unchanged (no re-hashing, no
   * re-tokenising, no vector lookups). `changed`: a document was added, edited or removed.
   */
  private prepare(docs: readonly SearchDocument[]): { states: DocState[]; changed: boolean } {
    // The common case, the same documents as last time in the same order: nothing to rebuild.
    const last = this.order;
    if (last.length === docs.length && docs.every((doc, i) => last[i]!.doc.id === doc.id && sameDoc(last[i]!.doc, doc))) {
      return { states: last, changed: false };
    }
    const next = new Map<string, DocState>();
    let reused = 0;
    const states = docs.map((doc) => {
      const old = this.states.get(doc.id);
      const keep = old !== undefined && sameDoc(old.doc, doc);
      if (keep) reused++;
      const state = keep ? old : newState(doc);
      if (!keep) this.index.add(state, state.lexical);
      next.set(doc.id, state);
      return state;
    });
    for (const [id, old] of this.states) if (next.get(id) !== old) this.index.remove(old, old.lexical);
    const changed = reused !== this.states.size || reused !== docs.length;
    this.states = next;
    this.order = states;
    return { states, changed };
  }

  /** Resolves the states not yet resolved in `space`; returns how many needed it. */
  private async resolveAll(states: readonly DocState[], space: Space, deadline: number): Promise<number> {
    const unresolved = states.filter((s) => s.space !== space.name);
    if (unresolved.length) await this.resolve(unresolved, space, deadline);
    return unresolved.length;
  }

  /**
   * Gives each state its combined vector in `space`: 0.7·primary + 0.3·secondary. Cosine is
   * linear, so dot(query, combined) is the weighted semantic score with one product per document.
   * A state whose vectors are not all available yet (still being embedded) stays unresolved.
   */
  private async resolve(states: readonly DocState[], space: Space, deadline: number): Promise<void> {
    const vectors = await this.vectors(states, space, deadline);
    for (const s of states) {
      const p = s.primary ? vectors.get(s.primary.key) : undefined;
      const sec = s.secondary ? vectors.get(s.secondary.key) : undefined;
      if ((s.primary && !p) || (s.secondary && !sec)) continue;
      if (p && sec) {
        const c = new Float32Array(p.length);
        for (let i = 0; i < c.length; i++) c[i] = FUSION.primary * p[i]! + FUSION.secondary * sec[i]!;
        s.combined = c;
      } else s.combined = p ?? null;
      s.space = space.name;
    }
  }

  private space(dimensions: number): Space {
    const name = spaceName(this.embedder.id, dimensions);
    let space = this.spaces.get(name);
    if (!space) {
      space = {
        name,
        dimensions,
        lru: new VectorLru(Math.max(1024, Math.floor(this.options.memoryBytes / (dimensions * 4)))),
        store: this.options.cache?.(name, dimensions),
        inflight: new Map(),
        swept: false,
        live: new Set(),
      };
      this.spaces.set(name, space);
    }
    return space;
  }

  /** Vectors of every document text: memory, then the persistent cache, then the embedder (until the deadline). */
  private async vectors(states: readonly DocState[], space: Space, deadline: number): Promise<Map<string, Float32Array>> {
    const texts = new Map<string, string>();
    for (const s of states) for (const t of [s.primary, s.secondary]) if (t) texts.set(t.key, t.text);
    const found = new Map<string, Float32Array>();
    let missing: string[] = [];
    for (const key of texts.keys()) {
      const v = space.lru.get(key);
      if (v) found.set(key, v);
      else missing.push(key);
    }
    if (missing.length && space.store) {
      try {
        for (const [key, v] of await space.store.getMany(missing)) {
          space.lru.set(key, v);
          found.set(key, v);
        }
      } catch (err) {
        this.note("cache-read", `search: could not read cached vectors (${errorText(err)}); embedding again`);
      }
      missing = missing.filter((k) => !found.has(k));
    }
    if (missing.length === 0) return found;
    const waits = this.embedMissing(space, missing.map((k) => [k, texts.get(k)!]));
    const remaining = deadline - Date.now();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(waits),
      new Promise((resolve) => {
        timer = setTimeout(resolve, Math.max(0, remaining));
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    for (const key of missing) {
      const v = space.lru.get(key);
      if (v) found.set(key, v);
    }
    return found;
  }

  /**
   * Embeds texts not already being embedded, chunk by chunk, saving each chunk to memory and the
   * persistent cache as it completes. Returns a promise per distinct job the caller may wait on.
   */
  private embedMissing(space: Space, entries: Array<[string, string]>): Array<Promise<void>> {
    const waits = new Set<Promise<void>>();
    const fresh: Array<[string, string]> = [];
    for (const [key, text] of entries) {
      const running = space.inflight.get(key);
      if (running) waits.add(running);
      else fresh.push([key, text]);
    }
    for (let i = 0; i < fresh.length; i += INDEX_CHUNK) {
      const chunk = fresh.slice(i, i + INDEX_CHUNK);
      const job = this.embedChunk(space, chunk);
      for (const [key] of chunk) space.inflight.set(key, job);
      void job.finally(() => {
        for (const [key] of chunk) if (space.inflight.get(key) === job) space.inflight.delete(key);
      });
      waits.add(job);
    }
    return [...waits];
  }

  private async embedChunk(space: Space, chunk: Array<[string, string]>): Promise<void> {
    let vectors: Float32Array[];
    try {
      vectors = await this.embedder.embed(chunk.map(([, text]) => text));
    } catch (err) {
      this.note("embed-failed", `search: embedding with ${this.embedder.id} failed, ranked by words only: ${errorText(err)}`);
      return;
    }
    const entries = new Map<string, Float32Array>();
    chunk.forEach(([key], i) => {
      const v = vectors[i];
      if (!v || v.length !== space.dimensions) return;
      const unit = normalize(v);
      space.lru.set(key, unit);
      entries.set(key, unit);
    });
    if (space.store && entries.size) {
      try {
        await space.store.setMany(entries);
      } catch (err) {
        this.note("cache-write", `search: could not save vectors (${errorText(err)}); they are kept in memory`);
      }
    }
  }

  /**
   * Deletes the vectors of texts that are gone: on the first search of the process, everything in
   * the persistent cache that no current document uses (workflows deleted while no process ran,
   * or by another process); afterwards, what the previous search used and this one does not.
   */
  private async collect(states: readonly DocState[], space: Space): Promise<void> {
    const live = new Set<string>();
    for (const s of states) for (const t of [s.primary, s.secondary]) if (t) live.add(t.key);
    const previous = space.live;
    space.live = live;
    let dead: string[];
    if (!space.swept) {
      space.swept = true;
      if (!space.store) return;
      try {
        dead = (await space.store.keys()).filter((k) => !live.has(k) && !space.inflight.has(k));
      } catch (err) {
        this.note("cache-read", `search: could not list cached vectors (${errorText(err)})`);
        return;
      }
    } else {
      dead = [...previous].filter((k) => !live.has(k) && !space.inflight.has(k));
    }
    if (dead.length === 0) return;
    for (const k of dead) space.lru.delete(k);
    try {
      await space.store?.deleteMany(dead);
    } catch (err) {
      this.note("cache-write", `search: could not delete stale vectors (${errorText(err)})`);
    }
  }

  /** Logs a note once per kind and ranker, so a dead endpoint does not flood stderr. */
  private note(kind: string, message: string): void {
    if (this.noted.has(kind)) return;
    this.noted.add(kind);
    this.options.log(message);
  }
}

/**
 * The lexical half of the fusion: LexicalRanker's per-token scores, but each query token weighted
 * by its rarity among the documents, idf = ln(1 + N / df) (df = documents it matches, at least ½),
 * normalised by the weights of all query tokens. "tidy up docker" then counts the one document
 * naming docker above the ones that merely say "up"; a document matching one word of four still
 * scores about a quarter, as in LexicalRanker.
 */
function idfWeighted(perToken: Float64Array, docs: number, tokens: number): Float64Array {
  const weights = new Float64Array(tokens);
  let total = 0;
  for (let t = 0; t < tokens; t++) {
    let df = 0;
    for (let d = 0; d < docs; d++) if (perToken[d * tokens + t]! > 0) df++;
    weights[t] = Math.log(1 + docs / Math.max(df, 0.5));
    total += weights[t]!;
  }
  const out = new Float64Array(docs);
  if (total === 0) return out;
  for (let d = 0; d < docs; d++) {
    let sum = 0;
    for (let t = 0; t < tokens; t++) sum += weights[t]! * perToken[d * tokens + t]!;
    out[d] = sum / total;
  }
  return out;
}

/** The best `limit` results, best first: a full sort only of what can make the cut. */
function top(scored: ScoredId[], limit: number): ScoredId[] {
  if (scored.length > limit * 4) {
    const scores = Float64Array.from(scored, (s) => s.score).sort();
    const cut = scores[scores.length - limit]!;
    scored = scored.filter((s) => s.score >= cut);
  }
  return scored.sort(byScore).slice(0, limit);
}

function newState(doc: SearchDocument): DocState {
  const primary = doc.semantic?.primary.trim().slice(0, MAX_PRIMARY_CHARS) ?? "";
  const rawSecondary = doc.semantic?.secondary ?? "";
  const secondary = (doc.semantic?.secondaryIsCode ? codeWords(rawSecondary) : rawSecondary).trim().slice(0, MAX_SECONDARY_CHARS);
  return {
    doc,
    lexical: prepareFields(doc.fields),
    primary: primary ? { text: primary, key: sha256(primary) } : null,
    secondary: secondary ? { text: secondary, key: sha256(secondary) } : null,
    name: doc.id.toLowerCase(),
    combined: null,
    space: null,
    position: 0,
  };
}

function sameDoc(a: SearchDocument, b: SearchDocument): boolean {
  if (a === b) return true;
  if (a.fields.length !== b.fields.length) return false;
  for (let i = 0; i < a.fields.length; i++) {
    if (a.fields[i]!.text !== b.fields[i]!.text || a.fields[i]!.weight !== b.fields[i]!.weight) return false;
  }
  return (
    a.semantic?.primary === b.semantic?.primary &&
    a.semantic?.secondary === b.semantic?.secondary &&
    a.semantic?.secondaryIsCode === b.semantic?.secondaryIsCode
  );
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** A folder-safe name for a vector space: `<embedder id>-<dimensions>d`. */
export function spaceName(embedderId: string, dimensions: number): string {
  const safe = embedderId.replace(/[^A-Za-z0-9._@-]/g, "_");
  const id = safe === embedderId && safe.length <= 80 && !safe.startsWith(".") ? safe : `${safe.slice(0, 60)}-${sha256(embedderId).slice(0, 8)}`;
  return `${id}-${dimensions}d`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
