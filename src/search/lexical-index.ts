/**
 * An inverted index over prepared documents, so that scoring a query's words costs time in
 * proportion to the documents containing them rather than to the size of the library. It computes
 * exactly LexicalRanker's per-token scores (`tokenScoresInto`): for each query token, the heaviest
 * field weight where it occurs, or half of one where only a prefix matches, over the document's
 * heaviest weight. Documents are added and removed as they change; nothing is rebuilt per search.
 */
import type { PreparedFields, PreparedQuery } from "./lexical.js";

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
          const i = position(doc) * n + q;
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
