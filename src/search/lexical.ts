/**
 * Lexical ranking shared by tools.search and workflows.search. It is the seam the semantic search
 * plugs into: a `Ranker` takes documents with weighted fields and returns scored ids.
 */

export interface SearchDocument {
  id: string;
  /** Field text and weight; exact identifier matches on heavier fields rank higher. */
  fields: Array<{ text: string; weight: number }>;
}

export interface ScoredId {
  id: string;
  score: number;
}

export interface Ranker {
  rank(query: string, docs: readonly SearchDocument[], limit: number): Promise<ScoredId[]>;
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
  if (t.length > 3 && t.endsWith("es")) return t.slice(0, -2);
  if (t.length > 3 && t.endsWith("s")) return t.slice(0, -1);
  if (t.length > 3 && t.endsWith("ed")) return t.slice(0, -2);
  return t;
}

/**
 * Score = sum over query tokens of the best field weight in which the token (or its stem, or a
 * prefix of length >= 3) appears, normalised by the number of query tokens to 0..1.
 */
export function lexicalScore(query: string, doc: SearchDocument): number {
  const q = tokenize(query);
  if (q.length === 0) return 0;
  const maxWeight = Math.max(...doc.fields.map((f) => f.weight), 1);
  const fieldTokens = doc.fields.map((f) => ({ weight: f.weight, tokens: new Set(tokenize(f.text).map(stem)) }));
  let total = 0;
  for (const raw of q) {
    const t = stem(raw);
    let best = 0;
    for (const f of fieldTokens) {
      if (f.tokens.has(t)) best = Math.max(best, f.weight);
      else if (t.length >= 3) {
        for (const ft of f.tokens) {
          if (ft.startsWith(t) || (ft.length >= 3 && t.startsWith(ft))) {
            best = Math.max(best, f.weight * 0.5);
            break;
          }
        }
      }
    }
    total += best / maxWeight;
  }
  return total / q.length;
}

export class LexicalRanker implements Ranker {
  async rank(query: string, docs: readonly SearchDocument[], limit: number): Promise<ScoredId[]> {
    return docs
      .map((d) => ({ id: d.id, score: Math.round(lexicalScore(query, d) * 1000) / 1000 }))
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
      .slice(0, limit);
  }
}
