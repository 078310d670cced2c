/**
 * The inverted index must give exactly LexicalRanker's per-token scores (it is only a faster way
 * to compute them), also after documents are removed and re-added.
 */
import { describe, expect, it } from "vitest";
import { LexicalIndex } from "../../src/search/lexical-index.js";
import { prepareFields, prepareQuery, queryTokens, tokenScores, type PreparedFields } from "../../src/search/lexical.js";
import { FIXTURE_WORKFLOWS } from "../fixtures/search/workflows.js";

interface Doc {
  id: string;
  fields: PreparedFields;
}

const DOCS: Doc[] = FIXTURE_WORKFLOWS.map((w) => ({
  id: w.name,
  fields: prepareFields([
    { text: w.name, weight: 3 },
    { text: w.description, weight: 2 },
    { text: w.source, weight: 0.5 },
  ]),
}));

const QUERIES = [
  "scan ports",
  "port",
  "portscan",
  "backups of the database",
  "compress logs older than thirty days",
  "tls cert",
  "use ffuf",
  "resize_images",
  "zzz nothing here",
  "a", // only a stop word
  "artifacts save",
  "csv json rows",
];

function viaIndex(index: LexicalIndex<Doc>, docs: Doc[], query: string): number[][] {
  const pq = prepareQuery(queryTokens(query));
  const n = pq.tokens.length;
  const out = new Float64Array(docs.length * n);
  const position = new Map(docs.map((d, i) => [d, i]));
  index.scoreInto(pq, (d) => position.get(d)!, out);
  return docs.map((_, i) => [...out.slice(i * n, (i + 1) * n)]);
}

describe("LexicalIndex", () => {
  it("matches tokenScores for every document and query", () => {
    const index = new LexicalIndex<Doc>();
    for (const d of DOCS) index.add(d, d.fields);
    for (const q of QUERIES) {
      const expected = DOCS.map((d) => tokenScores(queryTokens(q), d.fields));
      expect(viaIndex(index, DOCS, q), q).toEqual(expected);
    }
  });

  it("forgets removed documents and their words", () => {
    const index = new LexicalIndex<Doc>();
    for (const d of DOCS) index.add(d, d.fields);
    const size = index.size;
    const kept = DOCS.filter((d) => d.id !== "dir_bruteforce");
    index.remove(DOCS.find((d) => d.id === "dir_bruteforce")!, DOCS.find((d) => d.id === "dir_bruteforce")!.fields);
    expect(index.size).toBeLessThan(size); // "ffuf" and "wordlist" are gone
    for (const q of QUERIES) expect(viaIndex(index, kept, q), q).toEqual(kept.map((d) => tokenScores(queryTokens(q), d.fields)));
    expect(viaIndex(index, kept, "ffuf").flat().every((x) => x === 0)).toBe(true);
  });
});
