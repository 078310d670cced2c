/**
 * What keeps search fast at 10,000 entries must not change what it returns: the bounded top-k
 * equals a full sort, word-index preparation in slices equals building it at once (and lets the
 * event loop run), vectors that arrive for a document that changed meanwhile are never used, a
 * query is embedded from its start only, and sessions on one storage share their ranker.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SearchSetup } from "../../src/search/config.js";
import type { Embedder } from "../../src/search/embedder.js";
import { DocumentSet, type IndexedDocument } from "../../src/search/lexical-index.js";
import {
  byScore,
  LexicalRanker,
  prepareFields,
  prepareQuery,
  queryTokens,
  topScored,
  TopScored,
  type ScoredId,
  type SearchDocument,
} from "../../src/search/lexical.js";
import { MAX_QUERY_EMBED_CHARS, SemanticRanker } from "../../src/search/semantic.js";
import { FileStorage } from "../../src/storage/file/index.js";
import { FIXTURE_WORKFLOWS } from "../fixtures/search/workflows.js";
import { BagOfWordsEmbedder, CountingEmbedder } from "./helpers.js";

function doc(id: string, description: string, source: string): SearchDocument {
  return {
    id,
    fields: [
      { text: id, weight: 3 },
      { text: description, weight: 2 },
      { text: source, weight: 0.5 },
    ],
    semantic: { primary: description, secondary: source, secondaryIsCode: true },
  };
}

const FIXTURE_DOCS = FIXTURE_WORKFLOWS.map((w) => doc(w.name, w.description, w.source));

describe("TopScored", () => {
  it("keeps exactly what topScored (a full sort by score, then id) keeps, in its order, also with many ties", () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (let round = 0; round < 50; round++) {
      // Few distinct scores, so most results tie and the id decides; ids in no particular order.
      const all: ScoredId[] = Array.from({ length: 300 }, (_, i) => ({ id: `doc_${Math.floor(rand() * 1e6)}_${i}`, score: Math.round(rand() * 5) / 5 }));
      for (const limit of [1, 3, 10, 299, 300, 500]) {
        const top = new TopScored(limit);
        for (const s of all) top.offer(s.id, s.score);
        expect(top.results(), `round ${round}, limit ${limit}`).toEqual(topScored([...all], limit));
        expect(top.results()).toEqual([...all].sort(byScore).slice(0, limit));
      }
    }
  });
});

describe("rankers with a small limit return the start of the full ranking", () => {
  const queries = ["scan ports", "backups of the database", "use ffuf", "csv json rows", "tls cert", "resize images", "host"];
  // Many documents with the same texts under shuffled names: their scores tie and the name decides.
  const TEMPLATES = FIXTURE_DOCS.slice(0, 5);
  const DOCS = [
    ...FIXTURE_DOCS,
    ...Array.from({ length: 200 }, (_, i) => {
      const t = TEMPLATES[i % TEMPLATES.length]!;
      return doc(`copy_${(i * 7919) % 1000}_${t.id}`, t.semantic!.primary, t.semantic!.secondary!);
    }),
  ];

  it("lexical", async () => {
    const ranker = new LexicalRanker();
    let tied = 0;
    for (const q of queries) {
      const full = await ranker.rank(q, DOCS, DOCS.length);
      if (full.length > 10 && full[9]!.score === full[10]!.score) tied++;
      expect(await ranker.rank(q, DOCS, 10), q).toEqual(full.slice(0, 10));
    }
    expect(tied).toBeGreaterThan(1); // the cut fell among equal scores
  });

  it("semantic", async () => {
    const ranker = new SemanticRanker({ embedder: new BagOfWordsEmbedder(), log: () => undefined });
    let tied = 0;
    for (const q of queries) {
      const full = await ranker.rank(q, DOCS, DOCS.length);
      if (full.length > 10 && full[9]!.score === full[10]!.score) tied++;
      expect(await ranker.rank(q, DOCS, 10), q).toEqual(full.slice(0, 10));
    }
    expect(tied).toBeGreaterThan(1); // the cut fell among equal scores
  });
});

describe("DocumentSet.prepare", () => {
  function counted(): { set: DocumentSet<IndexedDocument>; made: () => number } {
    let made = 0;
    const set = new DocumentSet<IndexedDocument>((d) => (made++, { doc: d, lexical: prepareFields(d.fields), position: 0 }));
    return { set, made: () => made };
  }

  function scores(set: DocumentSet<IndexedDocument>, count: number, query: string): number[] {
    const pq = prepareQuery(queryTokens(query));
    const out = new Float64Array(count * pq.tokens.length);
    set.scoreInto(pq, out);
    return [...out];
  }

  it("lets the event loop run between slices, and update takes the prepared states without making them again", async () => {
    const { set, made } = counted();
    let turned = false;
    setImmediate(() => (turned = true));
    await set.prepare(FIXTURE_DOCS, 0); // a zero-length slice: a turn of the event loop after every document
    expect(turned).toBe(true);
    expect(made()).toBe(FIXTURE_DOCS.length);
    set.update(FIXTURE_DOCS);
    expect(made()).toBe(FIXTURE_DOCS.length);

    const direct = counted().set;
    direct.update(FIXTURE_DOCS);
    for (const q of ["scan ports", "use ffuf", "database"]) expect(scores(set, FIXTURE_DOCS.length, q), q).toEqual(scores(direct, FIXTURE_DOCS.length, q));
  });

  it("prepared documents take no part in a search until an update takes them, and are dropped if none does", async () => {
    const { set } = counted();
    const first = FIXTURE_DOCS.slice(0, 3);
    set.update(first);
    const before = scores(set, first.length, "use ffuf");
    const ffuf = FIXTURE_DOCS.find((d) => d.fields.some((f) => f.text.includes("ffuf")))!;
    expect(first).not.toContain(ffuf);
    await set.prepare([...first, ffuf], 0);
    // The prepared "ffuf" document is in the word index, but not in the set the scores are for.
    expect(scores(set, first.length, "use ffuf")).toEqual(before);
    set.dropPending();
    set.update([...first, ffuf]);
    const after = scores(set, first.length + 1, "use ffuf");
    expect(after.slice(-2).some((x) => x > 0)).toBe(true);
  });
});

/** An embedder whose document batches wait until the test releases them; queries pass at once. */
class HeldEmbedder implements Embedder {
  readonly id = "test-held";
  readonly dimensions = 64;
  readonly inner = new BagOfWordsEmbedder("test-held", 64);
  private readonly held: Array<() => void> = [];
  texts: string[] = [];

  async embed(texts: string[]): Promise<Float32Array[]> {
    this.texts.push(...texts);
    if (texts.length > 1) await new Promise<void>((resolve) => this.held.push(resolve));
    return this.inner.embed(texts);
  }

  get waiting(): number {
    return this.held.length;
  }

  release(): void {
    for (const go of this.held.splice(0)) go();
  }
}

describe("stale vectors", () => {
  it("vectors that arrive for a document edited meanwhile are not used for it; its new text is embedded", async () => {
    const embedder = new HeldEmbedder();
    const ranker = new SemanticRanker({ embedder, indexTimeoutMs: 20, readyTimeoutMs: 1000, log: () => undefined });
    const old = [doc("greet", "Say hello to someone", "return 'hello'"), doc("port_scan", "Scan a host for open TCP ports", "tools.nmap.scan()")];
    const first = await ranker.rank("hello", old, 5);
    expect(first.every((r) => r.indexing)).toBe(true); // the vectors are held
    expect(embedder.waiting).toBeGreaterThan(0);

    // greet is rewritten to be about ports while its old vectors are still on their way.
    const edited = [doc("greet", "List the listening TCP ports of a host", "tools.ss.listening()"), old[1]!];
    await ranker.rank("hello", edited, 5);
    embedder.release();
    let hits = await ranker.rank("listening tcp ports", edited, 5);
    for (let i = 0; i < 100 && hits.some((r) => r.indexing); i++) {
      embedder.release();
      await new Promise((resolve) => setTimeout(resolve, 5));
      hits = await ranker.rank("listening tcp ports", edited, 5);
    }
    expect(hits.some((r) => r.indexing)).toBe(false);
    expect(embedder.texts).toContain("List the listening TCP ports of a host");
    expect(ranker.rowsInUse).toBe(edited.length); // the old greet's vectors took no row

    // Its score is what a ranker that never saw the old text gives it.
    const fresh = new SemanticRanker({ embedder: new BagOfWordsEmbedder("test-held", 64), log: () => undefined });
    expect(hits).toEqual(await fresh.rank("listening tcp ports", edited, 5));
  });
});

describe("query embedding", () => {
  it("embeds a long query from its start only, and keeps recent query vectors (least recently used out)", async () => {
    const counting = new CountingEmbedder(new BagOfWordsEmbedder());
    const ranker = new SemanticRanker({ embedder: counting, log: () => undefined });
    await ranker.rank("warm", FIXTURE_DOCS, 3);
    counting.reset();
    const long = `scan ports ${"word ".repeat(5000)}`;
    await ranker.rank(long, FIXTURE_DOCS, 3);
    expect(counting.texts).toEqual([long.slice(0, MAX_QUERY_EMBED_CHARS)]);

    // 256 queries are kept; one used again stays while the oldest of the others go.
    counting.reset();
    await ranker.rank("query kept", FIXTURE_DOCS, 3);
    for (let i = 0; i < 300; i++) {
      await ranker.rank(`query ${i}`, FIXTURE_DOCS, 3);
      await ranker.rank("query kept", FIXTURE_DOCS, 3);
    }
    expect(counting.texts.filter((t) => t === "query kept")).toEqual(["query kept"]);
  });
});

describe("SearchSetup", () => {
  let base: string;
  beforeEach(async () => {
    base = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-scale-"));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true, maxRetries: 5 });
  });

  it("gives every session on one storage the same ranker (the index is built once per process), and others their own", () => {
    const storage = new FileStorage({ basePath: base });
    const other = new FileStorage({ basePath: path.join(base, "other") });
    const embedder = new BagOfWordsEmbedder();
    const a = SearchSetup.create(storage, { embedder });
    const b = SearchSetup.create(storage, { embedder });
    expect(b.workflowsRanker()).toBe(a.workflowsRanker());
    expect(b.skillsRanker()).toBe(a.skillsRanker());
    expect(a.skillsRanker()).not.toBe(a.workflowsRanker());
    expect(SearchSetup.create(other, { embedder }).workflowsRanker()).not.toBe(a.workflowsRanker());
    expect(SearchSetup.create(storage, { embedder: new BagOfWordsEmbedder() }).workflowsRanker()).not.toBe(a.workflowsRanker());
    expect(SearchSetup.create(storage, { embedder, indexTimeoutMs: 5 }).workflowsRanker()).not.toBe(a.workflowsRanker());
    const lexical = SearchSetup.create(storage, { embedder: "lexical" }).workflowsRanker();
    expect(lexical).toBeInstanceOf(LexicalRanker);
    expect(SearchSetup.create(storage, { embedder: "lexical" }).workflowsRanker()).toBe(lexical);
  });
});
