/**
 * The first search of a process over a large library that has no word index yet: building that
 * index (and hashing every document for the vector cache) costs about a second at 10,000 documents.
 * This answers at once instead, by scanning each document's short fields — everything but its code
 * (`semantic.secondaryIsCode`) — with the lexical scoring (mean of per-token scores), and the caller
 * builds the full index right after. Results are marked `indexing`: code words are not part of them yet.
 */
import { Slices } from "./slices.js";
import { prepareFields, prepareQuery, roundScore, tokenScoresInto, TopScored, type ScoredId, type SearchDocument } from "./lexical.js";

/** Below this many documents building the full index is quick enough to do before the first answer. */
export const FIRST_ANSWER_SCAN_MIN_DOCS = 2000;

/** Yields to the event loop every few ms (a run or an RPC reply waiting meanwhile waits no longer). */
export async function firstAnswerScan(queryTokens: readonly string[], docs: readonly SearchDocument[], limit: number): Promise<ScoredId[]> {
  const pq = prepareQuery(queryTokens);
  const out = new Float64Array(queryTokens.length);
  const top = new TopScored(limit);
  const slices = new Slices();
  for (const doc of docs) {
    await slices.next();
    const code = doc.semantic?.secondaryIsCode ? doc.semantic.secondary : undefined;
    const short = code === undefined ? doc.fields : doc.fields.filter((f) => f.text !== code);
    const prepared = prepareFields(short);
    // The heaviest weight of every field, as the full index uses, so scores stay on its scale.
    prepared.maxWeight = Math.max(...doc.fields.map((f) => f.weight), 1);
    tokenScoresInto(pq, prepared, out, 0);
    let sum = 0;
    for (let t = 0; t < queryTokens.length; t++) sum += out[t]!;
    const score = roundScore(sum / queryTokens.length);
    if (score > 0) top.offer(doc.id, score);
  }
  return top.results().map((r) => ({ ...r, indexing: true }));
}
