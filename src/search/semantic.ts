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
 * documents whose vectors are not ready after `indexTimeoutMs` (reading the cache or embedding)
 * are ranked by their lexical score alone while that work continues in the background, and the
 * results say so (`indexing: true`). So the first search of a store that was never indexed answers
 * at once, by words, and each later search has more of the library ranked by meaning.
 *
 * The documents' combined vectors live in one Float32Array matrix (a row per document, rows of
 * removed documents reused), filled as vectors arrive, so a query is one pass over contiguous
 * memory and allocates nothing per document.
 */
import { createHash } from "node:crypto";
import { count } from "../values/count.js";
import { dot, normalize, type Embedder } from "./embedder.js";
import {
  meanScores,
  prepareFields,
  prepareQuery,
  queryTokens,
  roundScore,
  TopScored,
  type Ranker,
  type ScoredId,
  type SearchDocument,
} from "./lexical.js";
import { DocumentSet, type IndexedDocument } from "./lexical-index.js";
import { FIRST_ANSWER_SCAN_MIN_DOCS, firstAnswerScan } from "./first-answer.js";
import { Int8Matrix } from "./int8-matrix.js";
import { Slices } from "./slices.js";
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
  /**
   * How long a search waits for the query's embedding (model still loading) before ranking by words
   * (results marked `indexing`; the model goes on loading for the next search). Default 1 s.
   */
  readyTimeoutMs?: number;
  /**
   * How long a search waits for documents' vectors (cache reads, embedding) before ranking the rest
   * by their words. Default 1 s; once the query's vector is known, at least a further
   * min(250 ms, indexTimeoutMs), so a model that loaded slowly still leaves time to read the cache.
   */
  indexTimeoutMs?: number;
  /** Memory for cached vectors, in bytes. Default 64 MiB (32,768 vectors of 512 floats). */
  memoryBytes?: number;
  /** Where notes go (model not ready, embedder failed). Default: stderr. */
  log?: (message: string) => void;
  /**
   * Score with int8 copies of the vectors (a WebAssembly SIMD pass), then the float vectors for the
   * few that can be in the top k: the same results, ~10× less time per query at 10,000 documents,
   * 1.25× the matrix memory. Default true (false, or no WebAssembly SIMD: the float pass alone).
   */
  quantized?: boolean;
}

export const DEFAULT_READY_TIMEOUT_MS = 1000;
export const DEFAULT_INDEX_TIMEOUT_MS = 1000;
/** The least time a search gives cached or in-flight vectors once the query vector is there. */
const INDEX_GRACE_MS = 250;
/** Keys read from the persistent cache per request, so documents resolve while a large library loads. */
const CACHE_READ_CHUNK = 1024;
const DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024;
/** Embedding cost grows with length; the start of a text says what it is about. */
const MAX_PRIMARY_CHARS = 2000;
const MAX_SECONDARY_CHARS = 1500;
/** Texts per embed() call while indexing: progress is saved (and the deadline checked) per chunk. */
const INDEX_CHUNK = 64;
/** States resolved (matrix rows written) between two chances for the event loop to run. */
const RESOLVE_CHUNK = 256;
/** Recent queries' vectors kept (an agent often repeats a search). */
const QUERY_CACHE = 256;
/**
 * The model's cost grows with the tokens of a text (about 1 ms each here, worse than linearly for
 * long ones): a query is embedded from its start only. Its words all count lexically (MAX_QUERY_*).
 */
export const MAX_QUERY_EMBED_CHARS = 500;

interface Text {
  text: string;
  key: string;
}

/** What a document's texts turned into; rebuilt only when one of its texts changes. */
interface DocState extends IndexedDocument {
  primary: Text | null;
  secondary: Text | null;
  name: string;
  /** Row of the matrix holding 0.7·primary + 0.3·secondary (or primary alone), once both are embedded in `space`; -1 before. */
  row: number;
  /** The vector space of the row; null while unresolved. */
  space: string | null;
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
  /** The documents of the last search, prepared once each, with their word postings. */
  private readonly docs = new DocumentSet<DocState>(newState, (s) => this.freeRow(s));
  private readonly spaces = new Map<string, Space>();
  private readonly queries = new Map<string, Float32Array>();
  /** Query embeddings under way (at most a few: one per concurrent search), shared by prepare() and rank(). */
  private readonly embedding = new Map<string, Promise<Float32Array | null>>();
  private readonly noted = new Set<string>();
  /** The combined vectors, `dims` floats per row, in the space `matrixSpace`. */
  private matrix = new Float32Array(0);
  private matrixSpace: string | null = null;
  private dims = 0;
  private rowsUsed = 0;
  /** The matrix's rows quantised to int8, when `quantized` (same row numbers). */
  private int8: Int8Matrix | null = null;
  private readonly freeRows: number[] = [];
  /** A search has built the word index (or scheduled it): later searches use it, never the first-answer scan. */
  private everIndexed = false;
  /** The background build of the word index after a first answer, while it runs (searches meanwhile answer the same way). */
  private building: Promise<void> | null = null;
  /** The last query embedding failed (rather than not being ready yet). */
  private embedderFailed = false;

  constructor(options: SemanticRankerOptions) {
    this.embedder = options.embedder;
    this.options = {
      cache: options.cache,
      collectGarbage: options.collectGarbage ?? true,
      readyTimeoutMs: options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
      indexTimeoutMs: options.indexTimeoutMs ?? DEFAULT_INDEX_TIMEOUT_MS,
      memoryBytes: options.memoryBytes ?? DEFAULT_MEMORY_BYTES,
      log: options.log ?? ((m) => process.stderr.write(`ts-code-mode: ${m}\n`)),
      quantized: options.quantized ?? true,
    };
  }

  /**
   * Matrix rows holding a document's vectors now: at most one per current document. Vectors that
   * arrive for a document that changed (or left) meanwhile never take one.
   */
  get rowsInUse(): number {
    return this.rowsUsed - this.freeRows.length;
  }

  /** True while queries are scored from the int8 copy of the vectors (then re-scored exactly), false on the float pass alone. */
  get quantizedScoring(): boolean {
    return this.int8 !== null;
  }

  /** Starts loading the model (if the embedder loads one) without waiting for it. */
  warmUp(): void {
    void this.embedder.warmUp?.();
  }

  async rank(query: string, docs: readonly SearchDocument[], limit: number): Promise<ScoredId[]> {
    if (query.trim() === "" || docs.length === 0) return [];
    if (docs.length >= FIRST_ANSWER_SCAN_MIN_DOCS && (!this.everIndexed || this.building)) {
      // First search of this process over a large library (or one while its word index is being
      // built): answer from the short fields now. The word index is built in the background, in
      // slices, then the vectors are started (the model loads meanwhile) for the next search.
      this.everIndexed = true;
      const answer = await firstAnswerScan(queryTokens(query), docs, limit);
      if (!this.building) {
        void this.embedder.warmUp?.();
        const building = this.docs.prepare(docs).then(
          () => void this.rankIndexed(query, docs, limit).catch(() => undefined),
          () => undefined,
        );
        this.building = building;
        void building.finally(() => {
          if (this.building === building) this.building = null;
        });
      }
      this.note("first-answer", `search: the first search of ${count(docs.length, "entry", "entries")} was answered by their names and descriptions while the index is built`);
      return answer;
    }
    this.everIndexed = true;
    return this.rankIndexed(query, docs, limit);
  }

  private async rankIndexed(query: string, docs: readonly SearchDocument[], limit: number): Promise<ScoredId[]> {
    const started = Date.now();
    // The query is embedded (in the model's worker) while the words are scored here.
    const queryVector = this.queryVector(query);
    const q = queryTokens(query);
    const pq = prepareQuery(q);
    // New documents are prepared in slices (runs and RPC replies go on meanwhile), then taken at once.
    await this.docs.prepare(docs);
    const { states, changed } = this.docs.update(docs);
    this.docs.dropPending();
    const perToken = new Float64Array(states.length * q.length);
    this.docs.scoreInto(pq, perToken);
    const budget = this.options.indexTimeoutMs;
    const deadline = started + budget;
    // When the vector size is known up front (the built-in model), documents' vectors are read
    // from the cache (or embedded) while the query is embedded — or while the model still loads.
    const known = this.embedder.dimensions > 0 ? this.space(this.embedder.dimensions) : null;
    const early = known ? this.resolveAll(states, known, deadline) : null;
    const qv = await queryVector;
    if (!qv) {
      early?.catch(() => undefined); // keeps indexing in the background; nobody waits for it now
      // Exactly what LexicalRanker returns (the mean of the per-token scores), so a fallback looks like lexical-only mode.
      const results = meanScores(states, perToken, q.length, limit).results();
      // Still loading (not failed): the results say that meaning is not part of them yet.
      return this.embedderFailed ? results : marked(results);
    }
    const space = this.space(qv.length);
    let resolved = early && known === space ? await early : await this.resolveAll(states, space, deadline);
    // The query vector may have come late (model loading): vectors already on their way get a little longer.
    const later = Math.max(deadline, Date.now() + Math.min(INDEX_GRACE_MS, budget));
    if (Date.now() < later && states.some((s) => s.space !== space.name)) resolved += await this.resolveAll(states, space, later);
    if (this.options.collectGarbage && (changed || resolved > 0 || !space.swept)) await this.collect(states, space);
    const words = new Set(query.toLowerCase().split(/\s+/).map((w) => w.replace(/^\W+|\W+$/g, "")));
    const lexical = idfWeighted(perToken, states.length, q.length);
    const quantized = this.int8 !== null && this.matrixSpace === space.name;
    const { top, pending } = quantized ? this.scoreQuantized(states, lexical, qv, space, words, limit) : this.scoreFloat(states, lexical, qv, space, words, limit);
    if (pending > 0) {
      this.note("indexing", `search: ${pending} of ${count(states.length, "entry", "entries")} ${pending === 1 ? "is" : "are"} still being embedded; ${pending === 1 ? "it was" : "they were"} ranked by their words only this time`);
      return marked(top.results());
    }
    return top.results();
  }

  /** The score of one document from its semantic and lexical parts (monotone in `semantic`). */
  private static final(semantic: number, lex: number, exactName: boolean): number {
    const sNorm = Math.min(1, Math.max(0, (semantic - FUSION.floor) / (FUSION.ceiling - FUSION.floor)));
    const fused = FUSION.semantic * sNorm + FUSION.lexical * lex;
    return SemanticRanker.withExactName(fused, exactName);
  }

  /** A score lifted above every other when the query names the document exactly (also a words-only score: no vector yet). */
  private static withExactName(score: number, exactName: boolean): number {
    return exactName ? FUSION.exact + (1 - FUSION.exact) * score : score;
  }

  /** Every document scored with the float vectors: one dot product per document. */
  private scoreFloat(
    states: readonly DocState[],
    lexical: Float64Array,
    qv: Float32Array,
    space: Space,
    words: ReadonlySet<string>,
    limit: number,
  ): { top: TopScored; pending: number } {
    const top = new TopScored(limit);
    let pending = 0;
    const matrix = this.matrix;
    const dims = this.dims;
    for (let i = 0; i < states.length; i++) {
      const s = states[i]!;
      const lex = lexical[i]!;
      if (s.space !== space.name || s.row < 0) {
        pending++; // not embedded yet: words only, this time
        if (lex > 0) top.offer(s.doc.id, roundScore(SemanticRanker.withExactName(lex, words.has(s.name))));
        continue;
      }
      const semantic = dot(qv, matrix, s.row * dims);
      if (lex <= 0 && semantic <= FUSION.floor) continue;
      top.offer(s.doc.id, roundScore(SemanticRanker.final(semantic, lex, words.has(s.name))));
    }
    return { top, pending };
  }

  /**
   * The same results as scoreFloat, from one SIMD pass over the int8 rows: each document's score is
   * bounded from the approximate dot product and its error bound; only documents whose upper bound
   * reaches the k-th best lower bound (rounded as results are) can be in the top k, and only those
   * are scored with the float vectors. Rounding is monotone, so a document left out scores strictly
   * below k others.
   */
  private scoreQuantized(
    states: readonly DocState[],
    lexical: Float64Array,
    qv: Float32Array,
    space: Space,
    words: ReadonlySet<string>,
    limit: number,
  ): { top: TopScored; pending: number } {
    const int8 = this.int8!;
    const { approx, error } = int8.scores(qv, this.rowsUsed);
    const upper = new Float64Array(states.length).fill(-Infinity);
    // The score itself when the bounds meet (no float dot needed: the fusion clamps, or no vector yet).
    const known = new Float64Array(states.length).fill(NaN);
    const lowers = new KthLargest(limit);
    let pending = 0;
    for (let i = 0; i < states.length; i++) {
      const s = states[i]!;
      const lex = lexical[i]!;
      const exactName = words.has(s.name);
      if (s.space !== space.name || s.row < 0) {
        pending++;
        if (lex > 0) {
          upper[i] = known[i] = SemanticRanker.withExactName(lex, exactName);
          lowers.offer(upper[i]!);
        }
        continue;
      }
      const a = approx[s.row]!;
      const e = error[s.row]!;
      if (lex <= 0 && a + e <= FUSION.floor) continue; // cannot pass the semantic floor
      upper[i] = SemanticRanker.final(a + e, lex, exactName);
      if (lex > 0 || a - e > FUSION.floor) {
        const lower = SemanticRanker.final(a - e, lex, exactName);
        lowers.offer(lower);
        // Monotone: a score between two equal bounds is that value (e.g. every semantic below the floor).
        if (lower === upper[i]) known[i] = lower;
      }
    }
    const threshold = roundScore(lowers.value());
    const top = new TopScored(limit);
    const matrix = this.matrix;
    const dims = this.dims;
    for (let i = 0; i < states.length; i++) {
      if (upper[i] === -Infinity || roundScore(upper[i]!) < threshold) continue;
      const s = states[i]!;
      const lex = lexical[i]!;
      if (!Number.isNaN(known[i]!)) {
        top.offer(s.doc.id, roundScore(known[i]!));
        continue;
      }
      const semantic = dot(qv, matrix, s.row * dims);
      if (lex <= 0 && semantic <= FUSION.floor) continue;
      top.offer(s.doc.id, roundScore(SemanticRanker.final(semantic, lex, words.has(s.name))));
    }
    return { top, pending };
  }

  /**
   * Finds or makes the vectors of every document, with no deadline: what `ts-code-mode workflows
   * index` runs so the first search of a session finds everything indexed. `onProgress` is called
   * about twice a second and once at the end. Returns how many documents have vectors.
   */
  async index(docs: readonly SearchDocument[], onProgress?: (indexed: number, total: number) => void): Promise<{ indexed: number; total: number }> {
    await this.docs.prepare(docs);
    const { states } = this.docs.update(docs);
    this.docs.dropPending();
    let dimensions = this.embedder.dimensions;
    if (dimensions === 0) dimensions = (await this.embedder.embed(["index"]))[0]?.length ?? 0;
    if (dimensions === 0) return { indexed: 0, total: states.length };
    const space = this.space(dimensions);
    const count = () => states.reduce((n, s) => n + (s.space === space.name ? 1 : 0), 0);
    const timer = onProgress ? setInterval(() => onProgress(count(), states.length), 500) : undefined;
    try {
      await this.fill(
        states.filter((s) => s.space !== space.name),
        space,
      );
    } finally {
      clearInterval(timer);
    }
    const indexed = count();
    onProgress?.(indexed, states.length);
    return { indexed, total: states.length };
  }

  /** The query's unit vector, or null (after a note) when the embedder is not ready in time or fails. */
  /**
   * Starts embedding `query` without waiting: a caller that still has to list the documents (a
   * library reading its store) overlaps the two, and rank() then takes the same embedding.
   */
  prepare(query: string): void {
    // Not before the first search of the process: that one may be answered from the short fields
    // at once (a large library) and must not wait on, or keep the process alive for, the model.
    if (!this.everIndexed || this.building) return;
    const q = query.slice(0, MAX_QUERY_EMBED_CHARS);
    if (q.trim() === "" || this.queries.has(q)) return;
    this.embedQuery(q).catch(() => undefined); // rank() reports a failure
  }

  /** The normalized embedding of `query` (already cut to MAX_QUERY_EMBED_CHARS), one embed() per query at a time. */
  private embedQuery(query: string): Promise<Float32Array | null> {
    let work = this.embedding.get(query);
    if (!work) {
      work = this.embedder.embed([query]).then(([raw]) => {
        const v = raw ? normalize(raw) : null;
        if (v && v.length > 0) {
          if (this.queries.size >= QUERY_CACHE) this.queries.delete(this.queries.keys().next().value!);
          this.queries.set(query, v);
        }
        return v;
      });
      this.embedding.set(query, work);
      const done = () => void this.embedding.delete(query);
      work.then(done, done);
    }
    return work;
  }

  private async queryVector(fullQuery: string): Promise<Float32Array | null> {
    // Keyed by what is embedded: the cache holds at most QUERY_CACHE × MAX_QUERY_EMBED_CHARS characters.
    const query = fullQuery.slice(0, MAX_QUERY_EMBED_CHARS);
    const cached = this.queries.get(query);
    if (cached) {
      // Least recently used first out: an agent's repeated queries stay cached.
      this.queries.delete(query);
      this.queries.set(query, cached);
      return cached;
    }
    const work = this.embedQuery(query);
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
      this.embedderFailed = false;
      return v && v.length > 0 ? v : null; // embedQuery cached it
    } catch (err) {
      this.embedderFailed = true;
      this.note("embed-failed", `search: embedding with ${this.embedder.id} failed, ranked by words only: ${err instanceof Error ? err.message : String(err)}`);
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Gives the states not yet resolved in `space` their matrix rows, waiting for their vectors (memory,
   * then the persistent cache, then the embedder) until `deadline`. The work goes on in the
   * background after the deadline, resolving states as vectors arrive. Returns how many needed it.
   */
  private async resolveAll(states: readonly DocState[], space: Space, deadline: number): Promise<number> {
    const unresolved = states.filter((s) => s.space !== space.name);
    if (unresolved.length === 0) return 0;
    const work = this.fill(unresolved, space);
    const remaining = deadline - Date.now();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      work,
      new Promise((resolve) => {
        timer = setTimeout(resolve, Math.max(0, remaining));
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    return unresolved.length;
  }

  /**
   * Finds (or makes) the vectors of `states`' texts, resolving states as they become complete. When
   * a chunk of vectors arrives only the states using its texts are looked at (`users`), so filling
   * 10,000 documents chunk by chunk costs time in proportion to the documents, not their square.
   */
  private async fill(states: readonly DocState[], space: Space): Promise<void> {
    const slices = new Slices();
    const texts = new Map<string, string>();
    const users = new Map<string, DocState[]>();
    for (const s of states) {
      await slices.next();
      for (const t of [s.primary, s.secondary]) {
        if (!t) continue;
        texts.set(t.key, t.text);
        const list = users.get(t.key);
        if (list) list.push(s);
        else users.set(t.key, [s]);
      }
    }
    const usersOf = (keys: Iterable<string>): DocState[] => {
      const out = new Set<DocState>();
      for (const k of keys) for (const s of users.get(k) ?? []) out.add(s);
      return [...out];
    };
    const found = new Map<string, Float32Array>();
    const waits: Array<Promise<unknown>> = [];
    const waited: string[] = [];
    const missing: string[] = [];
    for (const key of texts.keys()) {
      await slices.next();
      const v = space.lru.get(key);
      const running = v ? undefined : space.inflight.get(key);
      if (v) found.set(key, v);
      else if (running) {
        waits.push(running);
        waited.push(key);
      } else missing.push(key);
    }
    for (let i = 0; i < states.length; i += RESOLVE_CHUNK) {
      await slices.next();
      this.resolveFrom(states.slice(i, i + RESOLVE_CHUNK), found, space);
    }
    // Like lengths together: the model pads each batch to its longest text, so a batch of short
    // descriptions does not pay for one long source.
    const byLength = (a: string, b: string) => texts.get(a)!.length - texts.get(b)!.length;
    const embed = (keys: string[]) => {
      for (const job of this.embedMissing(space, keys.sort(byLength).map((k) => [k, texts.get(k)!]))) {
        waits.push(
          job.then((entries) => {
            for (const [k, v] of entries) found.set(k, v);
            this.resolveFrom(usersOf(entries.keys()), found, space);
          }),
        );
      }
    };
    // The persistent cache, a chunk at a time, each chunk marked in flight until its misses are
    // handed to the embedder (in the same tick), so a concurrent search waits instead of repeating it.
    for (let i = 0; i < missing.length; i += CACHE_READ_CHUNK) {
      const chunk = missing.slice(i, i + CACHE_READ_CHUNK);
      if (!space.store) {
        embed(chunk);
        continue;
      }
      const read = this.readCache(space, chunk);
      const marker = read.then(() => undefined);
      for (const key of chunk) space.inflight.set(key, marker);
      const got = await read;
      for (const key of chunk) if (space.inflight.get(key) === marker) space.inflight.delete(key);
      for (const [k, v] of got) found.set(k, v);
      embed(chunk.filter((k) => !got.has(k)));
      this.resolveFrom(usersOf(got.keys()), found, space);
    }
    await Promise.allSettled(waits);
    for (const key of waited) {
      const v = space.lru.get(key);
      if (v) found.set(key, v);
    }
    this.resolveFrom(states, found, space);
  }

  private async readCache(space: Space, keys: string[]): Promise<Map<string, Float32Array>> {
    try {
      const got = await space.store!.getMany(keys);
      for (const [key, v] of got) space.lru.set(key, v);
      return got;
    } catch (err) {
      this.note("cache-read", `search: could not read cached vectors (${errorText(err)}); embedding again`);
      return new Map();
    }
  }

  /**
   * Writes 0.7·primary + 0.3·secondary into a matrix row for each state whose vectors are all in
   * `found` (cosine is linear, so dot(query, row) is the weighted semantic score). States that were
   * replaced meanwhile (their document changed) are skipped: their rows would never be freed.
   */
  private resolveFrom(states: readonly DocState[], found: ReadonlyMap<string, Float32Array>, space: Space): void {
    this.useSpace(space);
    const dims = this.dims;
    for (const s of states) {
      if (s.space === space.name || this.docs.get(s.doc.id) !== s) continue;
      const p = s.primary ? found.get(s.primary.key) : undefined;
      const sec = s.secondary ? found.get(s.secondary.key) : undefined;
      if ((s.primary && !p) || (s.secondary && !sec)) continue;
      const row = this.takeRow();
      const m = this.matrix;
      const at = row * dims;
      if (p && sec) for (let i = 0; i < dims; i++) m[at + i] = FUSION.primary * p[i]! + FUSION.secondary * sec[i]!;
      else if (p) m.set(p.subarray(0, dims), at);
      else m.fill(0, at, at + dims);
      this.int8?.set(row, m, at);
      s.row = row;
      s.space = space.name;
    }
  }

  /** The matrix holds one space's vectors; a new space (another vector size) starts it over. */
  private useSpace(space: Space): void {
    if (this.matrixSpace === space.name) return;
    this.matrixSpace = space.name;
    this.dims = space.dimensions;
    this.matrix = new Float32Array(0);
    this.int8 = this.options.quantized && Int8Matrix.supported ? new Int8Matrix(space.dimensions) : null;
    this.rowsUsed = 0;
    this.freeRows.length = 0;
    for (const s of this.docs.values()) {
      s.row = -1;
      s.space = null;
    }
  }

  private takeRow(): number {
    const free = this.freeRows.pop();
    if (free !== undefined) return free;
    const row = this.rowsUsed++;
    if ((row + 1) * this.dims > this.matrix.length) {
      // Doubling: amortised O(1) per row, and the matrix is never copied per query.
      const grown = new Float32Array(Math.max(1024, (row + 1) * 2) * this.dims);
      grown.set(this.matrix);
      this.matrix = grown;
    }
    return row;
  }

  private freeRow(s: DocState): void {
    if (s.row >= 0 && s.space === this.matrixSpace) this.freeRows.push(s.row);
    s.row = -1;
    s.space = null;
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

  /**
   * Embeds texts not already being embedded, chunk by chunk, saving each chunk to memory and the
   * persistent cache as it completes. Returns a promise per chunk, resolving to its vectors.
   */
  private embedMissing(space: Space, entries: Array<[string, string]>): Array<Promise<Map<string, Float32Array>>> {
    const jobs: Array<Promise<Map<string, Float32Array>>> = [];
    for (let i = 0; i < entries.length; i += INDEX_CHUNK) {
      const chunk = entries.slice(i, i + INDEX_CHUNK);
      const job = this.embedChunk(space, chunk);
      const marker = job.then(() => undefined);
      for (const [key] of chunk) space.inflight.set(key, marker);
      void marker.finally(() => {
        for (const [key] of chunk) if (space.inflight.get(key) === marker) space.inflight.delete(key);
      });
      jobs.push(job);
    }
    return jobs;
  }

  private async embedChunk(space: Space, chunk: Array<[string, string]>): Promise<Map<string, Float32Array>> {
    const entries = new Map<string, Float32Array>();
    let vectors: Float32Array[];
    try {
      vectors = await this.embedder.embed(chunk.map(([, text]) => text));
    } catch (err) {
      this.note("embed-failed", `search: embedding with ${this.embedder.id} failed, ranked by words only: ${errorText(err)}`);
      return entries;
    }
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
    return entries;
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

/** The k-th largest of the numbers offered (−Infinity while fewer than k were): a bounded min-heap. */
class KthLargest {
  private readonly heap: number[] = [];

  constructor(private readonly k: number) {}

  offer(x: number): void {
    const h = this.heap;
    if (h.length < this.k) {
      h.push(x);
      for (let i = h.length - 1; i > 0; ) {
        const p = (i - 1) >> 1;
        if (h[p]! <= h[i]!) break;
        [h[p], h[i]] = [h[i]!, h[p]!];
        i = p;
      }
    } else if (this.k > 0 && x > h[0]!) {
      h[0] = x;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l]! < h[m]!) m = l;
        if (r < h.length && h[r]! < h[m]!) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
  }

  value(): number {
    if (this.k <= 0) return Infinity;
    return this.heap.length < this.k ? -Infinity : this.heap[0]!;
  }
}

/** The same results, each saying that the semantic index was still being built when they were ranked. */
function marked(results: ScoredId[]): ScoredId[] {
  return results.map((r) => ({ ...r, indexing: true }));
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
    row: -1,
    space: null,
    position: 0,
  };
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
