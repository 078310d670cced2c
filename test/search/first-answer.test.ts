/**
 * The first search of a process over a large library answers from names and descriptions (no word
 * index, no vector-cache hashing yet) and builds the full index for the next search.
 */
import { describe, expect, it } from "vitest";
import { FIRST_ANSWER_SCAN_MIN_DOCS } from "../../src/search/first-answer.js";
import type { SearchDocument } from "../../src/search/lexical.js";
import { SemanticRanker } from "../../src/search/semantic.js";
import { GatedEmbedder } from "./helpers.js";

function doc(id: string, description: string, source: string): SearchDocument {
  return {
    id,
    fields: [
      { text: id, weight: 3 },
      { text: description, weight: 2 },
      { text: source, weight: 1 },
    ],
    semantic: { primary: description, secondary: source, secondaryIsCode: true },
  };
}

describe("first answer of a large library", () => {
  const docs: SearchDocument[] = Array.from({ length: FIRST_ANSWER_SCAN_MIN_DOCS + 10 }, (_, i) =>
    doc(`wf_backup_${i}`, `Backup a database every night (variant ${i}).`, `export async function run() { return tools.db.dump(${i}); }`),
  );
  docs.push(doc("port_scan", "Scan a host for open TCP ports.", "export async function run() { return tools.nmap.syn_scan(); }"));
  docs.push(doc("net_probe", "Probe the network.", "export async function run() { return tools.ss.listening_sockets(); }"));

  it("answers from short fields at once, marked indexing, then ranks code words once the index is built", async () => {
    const notes: string[] = [];
    const embedder = new GatedEmbedder(); // the model never becomes ready during this test
    const ranker = new SemanticRanker({ embedder, readyTimeoutMs: 20, indexTimeoutMs: 20, log: (m) => notes.push(m) });
    const first = await ranker.rank("tcp ports listening", docs, 5);
    expect(first[0]?.id).toBe("port_scan");
    expect(first.every((r) => r.indexing === true)).toBe(true);
    // Only the code of net_probe says "listening": not part of the first answer.
    expect(first.map((r) => r.id)).not.toContain("net_probe");
    expect(notes.some((n) => n.includes("answered by their names and descriptions"))).toBe(true);

    // The index is built right after the answer, in slices; searches meanwhile answer the same way.
    let second = await ranker.rank("tcp ports listening", docs, 5);
    for (let i = 0; i < 1000 && !second.some((r) => r.id === "net_probe"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      second = await ranker.rank("tcp ports listening", docs, 5);
    }
    expect(second.map((r) => r.id)).toContain("net_probe");
    expect(second.every((r) => r.indexing === true)).toBe(true); // still no vectors: words only, said so
  });

  it("a library below the threshold is indexed fully by its first search", async () => {
    const ranker = new SemanticRanker({ embedder: new GatedEmbedder(), readyTimeoutMs: 20, indexTimeoutMs: 20, log: () => undefined });
    const small = docs.slice(-2);
    const first = await ranker.rank("tcp ports listening", small, 5);
    expect(first.map((r) => r.id)).toContain("net_probe");
  });
});
