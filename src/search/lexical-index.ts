/**
 * An inverted index over prepared documents, so that scoring a query's words costs time in
 * proportion to the documents containing them rather than to the size of the library. It computes
 * exactly LexicalRanker's per-token scores (`tokenScoresInto`): for each query token, the heaviest
 * field weight where it occurs, or half of one where only a prefix matches, over the document's
 * heaviest weight. Documents are added and removed as they change; nothing is rebuilt per search.
 */
import type { PreparedFields, PreparedQuery, SearchDocument } from "./lexical.js";
import { SLICE_MS, Slices } from "./slices.js";

export class LexicalIndex<D> {
  /** token → document → best normalised field weight for that token. */
  private readonly postings = new Map<string, Map<D, number>>();
  /** All tokens, sorted, for "field token starts with the query token"; rebuilt lazily after a change. */
  private sorted: string[] | null = null;

  get size(): number {
    return this.postings.size;
  }

  add(doc: D, fields: PreparedFields): void {
    for (const f of fields.fields) {
      const w = f.weight / fields.maxWeight;
      for (const t of f.tokens) {
        let docs = this.postings.get(t);
        if (!docs) {
          docs = new Map();
          this.postings.set(t, docs);
          this.sorted = null;
        }
        if ((docs.get(doc) ?? 0) < w) docs.set(doc, w);
      }
    }
  }

  remove(doc: D, fields: PreparedFields): void {
    for (const f of fields.fields) {
      for (const t of f.tokens) {
        const docs = this.postings.get(t);
        if (!docs) continue;
        docs.delete(doc);
        if (docs.size === 0) {
          this.postings.delete(t);
          this.sorted = null;
        }
      }
    }
  }

  /**
   * Writes each document's per-token scores to `out[position(doc) * tokens + t]` (`out` starts
   * zeroed; documents matching nothing are left at 0).
   */
  scoreInto(query: PreparedQuery, position: (doc: D) => number, out: Float64Array): void {
    const n = query.tokens.length;
    for (let q = 0; q < n; q++) {
      const t = query.tokens[q]!;
      const raise = (docs: Map<D, number> | undefined, factor: number) => {
        if (!docs) return;
        for (const [doc, w] of docs) {
          const at = position(doc);
          if (at < 0) continue; // prepared ahead of its set (DocumentSet.prepare), not part of this search
          const i = at * n + q;
          if (out[i]! < w * factor) out[i] = w * factor;
        }
      };
      if (t.length >= 3) {
        // Prefix matches first, then exact ones overwrite them where heavier.
        for (const token of this.tokensStartingWith(t)) if (token !== t) raise(this.postings.get(token), 0.5);
        for (const p of query.prefixes[q]!) raise(this.postings.get(p), 0.5);
      }
      raise(this.postings.get(t), 1);
    }
  }

  private *tokensStartingWith(prefix: string): Generator<string> {
    this.sorted ??= [...this.postings.keys()].sort();
    const sorted = this.sorted;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < sorted.length && sorted[i]!.startsWith(prefix); i++) yield sorted[i]!;
  }
}

/** What a ranker keeps per document: the document, its prepared words, and its place in the last search. */
export interface IndexedDocument {
  doc: SearchDocument;
  lexical: PreparedFields;
  /** Index in the current search's documents (rows of the per-token score table); -1 while outside the set. */
  position: number;
}

/**
 * The documents a ranker saw last, each prepared once and kept in the word index while it is
 * unchanged: a search over the same 10,000 documents rebuilds nothing, and a changed document costs
 * only its own re-preparation. New documents are prepared ahead of `update` by `prepare`, in
 * slices of a few ms, so building the index of a large library never blocks the event loop.
 */
export class DocumentSet<S extends IndexedDocument> {
  private byId = new Map<string, S>();
  private readonly index = new LexicalIndex<S>();
  /** States made by `prepare` (already in the word index, position -1) that `update` has not taken yet. */
  private readonly pending = new Map<SearchDocument, S>();
  /** `prepare` calls running now; their states must not be dropped under them. */
  private preparing = 0;
  /** The states of the previous update, in its order. */
  order: S[] = [];
  /** The documents of the previous update when they came as a frozen array. */
  private lastDocs: readonly SearchDocument[] | null = null;

  constructor(
    private readonly make: (doc: SearchDocument) => S,
    /** Called for a state that left the set (its document was removed or changed). */
    private readonly dropped: (state: S) => void = () => undefined,
  ) {}

  get(id: string): S | undefined {
    return this.byId.get(id);
  }

  values(): IterableIterator<S> {
    return this.byId.values();
  }

  /** True when `update(docs)` has nothing to rebuild: the same documents as last time, in order. */
  private unchanged(docs: readonly SearchDocument[]): boolean {
    // A frozen array the last update took (a library's memoised listing) cannot have changed since.
    if (docs === this.lastDocs) return true;
    const last = this.order;
    return last.length === docs.length && docs.every((doc, i) => last[i]!.doc.id === doc.id && sameDocument(last[i]!.doc, doc));
  }

  /**
   * Makes the states `update(docs)` will need, yielding to the event loop every `sliceMs`. Cheap
   * when nothing changed. Two concurrent calls share the work (each skips what the other made).
   */
  async prepare(docs: readonly SearchDocument[], sliceMs = SLICE_MS): Promise<void> {
    if (this.unchanged(docs)) return;
    this.preparing++;
    try {
      await this.prepareSliced(docs, sliceMs);
    } finally {
      this.preparing--;
    }
  }

  private async prepareSliced(docs: readonly SearchDocument[], sliceMs: number): Promise<void> {
    const slices = new Slices(sliceMs);
    for (const doc of docs) {
      await slices.next();
      const old = this.byId.get(doc.id);
      if ((old !== undefined && sameDocument(old.doc, doc)) || this.pending.has(doc)) continue;
      const state = this.make(doc);
      state.position = -1;
      this.index.add(state, state.lexical);
      this.pending.set(doc, state);
    }
  }

  /** The states of `docs`, in order, with positions set. `changed`: a document was added, edited or removed. */
  update(docs: readonly SearchDocument[]): { states: S[]; changed: boolean } {
    // The common case, the same documents as last time in the same order: nothing to rebuild.
    if (this.unchanged(docs)) {
      if (Object.isFrozen(docs)) this.lastDocs = docs;
      return { states: this.order, changed: false };
    }
    const next = new Map<string, S>();
    let reused = 0;
    const states = docs.map((doc) => {
      const old = this.byId.get(doc.id);
      if (old !== undefined && sameDocument(old.doc, doc)) {
        reused++;
        next.set(doc.id, old);
        return old;
      }
      let state = this.pending.get(doc);
      if (state) this.pending.delete(doc);
      else {
        state = this.make(doc);
        this.index.add(state, state.lexical);
      }
      next.set(doc.id, state);
      return state;
    });
    for (const [id, old] of this.byId) {
      if (next.get(id) === old) continue;
      old.position = -1;
      this.index.remove(old, old.lexical);
      this.dropped(old);
    }
    const changed = reused !== this.byId.size || reused !== docs.length;
    this.byId = next;
    this.order = states;
    this.lastDocs = Object.isFrozen(docs) ? docs : null;
    for (let i = 0; i < states.length; i++) states[i]!.position = i;
    return { states, changed };
  }

  /**
   * Forgets prepared states no update took (their documents changed again before a search used
   * them), so the word index holds only the set. A no-op while a `prepare` runs (its update takes them).
   */
  dropPending(): void {
    if (this.preparing > 0) return;
    for (const state of this.pending.values()) this.index.remove(state, state.lexical);
    this.pending.clear();
  }

  /** Per-token scores of the last update's documents: `out[position * tokens + t]`. */
  scoreInto(query: PreparedQuery, out: Float64Array): void {
    this.index.scoreInto(query, (s) => s.position, out);
  }
}

/** Same id is assumed; same texts, weights and semantic texts mean nothing to re-prepare. */
export function sameDocument(a: SearchDocument, b: SearchDocument): boolean {
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
