/**
 * Lexical ranking shared by tools.search and workflows.search. It is the seam the semantic search
 * plugs into: a `Ranker` takes documents with weighted fields and returns scored ids.
 */
import { DocumentSet, type IndexedDocument } from "./lexical-index.js";

export interface SearchDocument {
  id: string;
  /** Field text and weight; exact identifier matches on heavier fields rank higher. */
  fields: Array<{ text: string; weight: number }>;
  /**
   * Texts a semantic ranker embeds: `primary` (what the thing is for: a description) and an
   * optional `secondary` (how it does it: sub-command descriptions, or source code when
   * `secondaryIsCode`, which the ranker reduces to its words). Lexical ranking ignores them.
   */
  semantic?: { primary: string; secondary?: string; secondaryIsCode?: boolean };
}

export interface ScoredId {
  id: string;
  score: number;
  /**
   * Set on every result of a search that ran while the semantic index was still being built:
   * documents not yet embedded were ranked by their words only this time (better results follow
   * as indexing continues in the background).
   */
  indexing?: boolean;
}

export interface Ranker {
  rank(query: string, docs: readonly SearchDocument[], limit: number): Promise<ScoredId[]>;
  /** Starts what a search of `query` needs before the documents are known (the semantic ranker embeds it), so listing them overlaps it. */
  prepare?(query: string): void;
  /** Builds whatever index the ranker keeps for `docs` ahead of a search (the semantic ranker's vectors). */
  index?(docs: readonly SearchDocument[], onProgress?: (indexed: number, total: number) => void): Promise<{ indexed: number; total: number }>;
}

const STOP = new Set(["a", "an", "the", "to", "of", "and", "or", "for", "in", "on", "with", "by", "is", "it", "from", "as", "at", "be", "this", "that"]);

/** Split into lowercase word tokens; also splits snake_case and camelCase identifiers. */
export function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t.length > 0 && !STOP.has(t));
}

function stem(t: string): string {
  if (t.length > 4 && t.endsWith("ing")) return t.slice(0, -3);
  // "-es" is a plural ending only after s, x, z, ch, sh (boxes, classes, patches); elsewhere the e
  // belongs to the word (issues → issue, files → file), so "issue" and "issues" meet.
  if (t.length > 3 && /(?:[sxz]|ch|sh)es$/.test(t)) return t.slice(0, -2);
  if (t.length > 3 && t.endsWith("s")) return t.slice(0, -1);
  if (t.length > 3 && t.endsWith("ed")) return t.slice(0, -2);
  return t;
}

/** A document's fields tokenised once, so that many queries (or many documents) score cheaply. */
export interface PreparedFields {
  maxWeight: number;
  /** `sorted`: the tokens in order, made on the first prefix lookup (the word index needs none; 10,000 documents add up). */
  fields: Array<{ weight: number; tokens: Set<string>; sorted?: string[] }>;
}

export function prepareFields(fields: SearchDocument["fields"]): PreparedFields {
  return {
    maxWeight: Math.max(...fields.map((f) => f.weight), 1),
    fields: fields.map((f) => {
      const tokens = new Set<string>();
      for (const t of tokenize(f.text)) tokens.add(stem(t));
      return { weight: f.weight, tokens };
    }),
  };
}

/**
 * Bounds on a query, whoever sends it (an agent's tools.search, an MCP client): scoring costs grow
 * with tokens × documents and prefix matching with the square of a token's length, so a query of
 * 30 million characters must not reach them. Beyond these a query is cut (it still ranks by its start).
 */
export const MAX_QUERY_CHARS = 10_000;
export const MAX_QUERY_TOKENS = 64;
export const MAX_TOKEN_CHARS = 64;

/** The stemmed tokens of a query, in the form `scorePrepared` takes; bounded by the MAX_QUERY_* limits. */
export function queryTokens(query: string): string[] {
  return tokenize(query.slice(0, MAX_QUERY_CHARS))
    .slice(0, MAX_QUERY_TOKENS)
    .map((t) => stem(t.slice(0, MAX_TOKEN_CHARS)));
}

/**
 * Score = sum over query tokens of the best field weight in which the token appears, or half of it
 * when only a prefix matches (a field token starting with the query token, or a field token of
 * length >= 3 that the query token starts with), normalised by the number of query tokens to 0..1.
 */
export function scorePrepared(query: readonly string[], doc: PreparedFields): number {
  if (query.length === 0) return 0;
  let total = 0;
  for (const s of tokenScores(query, doc)) total += s;
  return total / query.length;
}

/** Query tokens with their prefixes (length 3 up to one short of the token) computed once per search. */
export interface PreparedQuery {
  tokens: readonly string[];
  prefixes: ReadonlyArray<readonly string[]>;
}

export function prepareQuery(tokens: readonly string[]): PreparedQuery {
  return { tokens, prefixes: tokens.map((t) => Array.from({ length: Math.max(0, t.length - 3) }, (_, i) => t.slice(0, i + 3))) };
}

/** Per query token: the best field weight it matches (half for a prefix match) over the heaviest weight, 0..1. */
export function tokenScores(query: readonly string[], doc: PreparedFields): number[] {
  const out = new Array<number>(query.length);
  tokenScoresInto(prepareQuery(query), doc, out, 0);
  return out;
}

/** `tokenScores` written into `out` from `offset`: no allocation per document when ranking many. */
export function tokenScoresInto(query: PreparedQuery, doc: PreparedFields, out: { [i: number]: number }, offset: number): void {
  for (let q = 0; q < query.tokens.length; q++) {
    const t = query.tokens[q]!;
    let best = 0;
    for (const f of doc.fields) {
      if (f.weight <= best) continue;
      if (f.tokens.has(t)) best = f.weight;
      else if (t.length >= 3 && f.weight * 0.5 > best && hasPrefixMatch(t, query.prefixes[q]!, f)) best = f.weight * 0.5;
    }
    out[offset + q] = best / doc.maxWeight;
  }
}

/**
 * A field token starting with `t` (binary search in the sorted tokens), or a field token of length
 * >= 3 that `t` starts with (direct lookups of t's prefixes).
 */
function hasPrefixMatch(t: string, prefixes: readonly string[], f: PreparedFields["fields"][number]): boolean {
  const sorted = (f.sorted ??= [...f.tokens].sort());
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  if (lo < sorted.length && sorted[lo]!.startsWith(t)) return true;
  for (const p of prefixes) if (f.tokens.has(p)) return true;
  return false;
}

export function lexicalScore(query: string, doc: SearchDocument): number {
  return scorePrepared(queryTokens(query), prepareFields(doc.fields));
}

/** Rounded to three decimals, like every score the rankers return. */
export function roundScore(score: number): number {
  return Math.round(score * 1000) / 1000;
}

/** Best first; ties by id so results are stable. */
export function byScore(a: ScoredId, b: ScoredId): number {
  return b.score - a.score || a.id.localeCompare(b.id);
}

/** The best `limit` documents by the mean of their per-token scores (LexicalRanker's score); zero scores left out. */
export function meanScores(states: readonly IndexedDocument[], perToken: Float64Array, tokens: number, limit: number): TopScored {
  const top = new TopScored(limit);
  for (let i = 0; i < states.length; i++) {
    let sum = 0;
    for (let t = 0; t < tokens; t++) sum += perToken[i * tokens + t]!;
    const score = roundScore(sum / tokens);
    if (score > 0) top.offer(states[i]!.doc.id, score);
  }
  return top;
}

/**
 * Score = the mean of the per-token scores (see scorePrepared). Documents are prepared once and kept
 * in a word index while unchanged, so a search costs time in proportion to the documents containing
 * the query's words, not to the library.
 */
export class LexicalRanker implements Ranker {
  private readonly docs = new DocumentSet<IndexedDocument>((doc) => ({ doc, lexical: prepareFields(doc.fields), position: 0 }));

  async rank(query: string, docs: readonly SearchDocument[], limit: number): Promise<ScoredId[]> {
    const q = queryTokens(query);
    if (q.length === 0 || docs.length === 0) return [];
    // New documents are prepared in slices (the event loop keeps running), then taken at once.
    await this.docs.prepare(docs);
    const { states } = this.docs.update(docs);
    this.docs.dropPending();
    const perToken = new Float64Array(states.length * q.length);
    this.docs.scoreInto(prepareQuery(q), perToken);
    return meanScores(states, perToken, q.length, limit).results();
  }
}

/** The best `limit` results, best first: a full sort only of what can make the cut. */
export function topScored(scored: ScoredId[], limit: number): ScoredId[] {
  if (scored.length > limit * 4) {
    const scores = Float64Array.from(scored, (s) => s.score).sort();
    const cut = scores[scores.length - limit]!;
    scored = scored.filter((s) => s.score >= cut);
  }
  return scored.sort(byScore).slice(0, limit);
}

/**
 * The best `limit` of (id, score) pairs offered one at a time, in `byScore` order: what
 * `topScored(all, limit)` returns, without an object per offered pair or a sort of them all. A
 * bounded heap with the worst kept result at its root; an offer that cannot make the cut costs one
 * comparison.
 */
export class TopScored {
  private readonly ids: string[] = [];
  private readonly scores: number[] = [];

  constructor(private readonly limit: number) {}

  offer(id: string, score: number): void {
    const n = this.ids.length;
    if (n < this.limit) {
      this.ids.push(id);
      this.scores.push(score);
      this.up(n);
    } else if (n > 0 && (score > this.scores[0]! || (score === this.scores[0]! && id.localeCompare(this.ids[0]!) < 0))) {
      this.ids[0] = id;
      this.scores[0] = score;
      this.down(0);
    }
  }

  /** The kept pairs, best first. */
  results(): ScoredId[] {
    return this.ids.map((id, i) => ({ id, score: this.scores[i]! })).sort(byScore);
  }

  /** Heap slot `a` holds a worse result than slot `b` (lower score; on a tie, the later id). */
  private worse(a: number, b: number): boolean {
    const sa = this.scores[a]!;
    const sb = this.scores[b]!;
    return sa < sb || (sa === sb && this.ids[a]!.localeCompare(this.ids[b]!) > 0);
  }

  private swap(a: number, b: number): void {
    [this.ids[a], this.ids[b]] = [this.ids[b]!, this.ids[a]!];
    [this.scores[a], this.scores[b]] = [this.scores[b]!, this.scores[a]!];
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.ids.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < n && this.worse(l, worst)) worst = l;
      if (r < n && this.worse(r, worst)) worst = r;
      if (worst === i) return;
      this.swap(i, worst);
      i = worst;
    }
  }
}
