/**
 * The int8 scoring pass (Int8Matrix + SemanticRanker.scoreQuantized): its error bound holds, and
 * the ranker's results with it are exactly those of the float pass — on the real model's vectors of
 * a realistic library and on vectors built to tie closer than int8 can resolve.
 */
import { describe, expect, it } from "vitest";
import type { Embedder } from "../../src/search/embedder.js";
import { Int8Matrix } from "../../src/search/int8-matrix.js";
import type { SearchDocument } from "../../src/search/lexical.js";
import { SemanticRanker } from "../../src/search/semantic.js";
import { UseLiteEmbedder } from "../../src/search/use-lite.js";

/** A deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return n === 0 ? v : v.map((x) => x / n);
}

function dot(a: Float32Array, b: Float32Array, at = 0): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[at + i]!;
  return s;
}

describe("Int8Matrix", () => {
  it("is available on this Node (WebAssembly SIMD), so searches take the int8 pass", () => {
    expect(Int8Matrix.supported).toBe(true);
  });

  it("bounds the error of every approximate dot product (sizes not a multiple of 16, spiky vectors, zero rows)", () => {
    const next = random(7);
    for (const dims of [3, 64, 100, 512, 1536]) {
      const rows = 300;
      const m = new Int8Matrix(dims);
      const vectors: Float32Array[] = [];
      for (let r = 0; r < rows; r++) {
        const v = new Float32Array(dims).map(() => next() * 2 - 1);
        if (r % 7 === 0) v[r % dims] = 40; // one large coordinate: a coarse scale for the rest
        if (r % 11 === 0) v.fill(0);
        vectors.push(r % 11 === 0 ? v : unit(v));
        m.set(r, vectors[r]!);
      }
      for (let t = 0; t < 5; t++) {
        const q = unit(new Float32Array(dims).map(() => next() * 2 - 1));
        const { approx, error } = m.scores(q, rows);
        for (let r = 0; r < rows; r++) {
          const exact = dot(q, vectors[r]!);
          expect(Math.abs(exact - approx[r]!), `dims ${dims} row ${r}`).toBeLessThanOrEqual(error[r]!);
          // And the bound is useful, not a blanket "anything" (spiky rows have a coarse scale by design).
          if (r % 7 !== 0) expect(error[r]!).toBeLessThan(0.05);
        }
      }
    }
  });

  it("keeps rows written before it grows", () => {
    const m = new Int8Matrix(32);
    const first = unit(new Float32Array(32).map((_, i) => i + 1));
    m.set(0, first);
    m.set(5000, unit(new Float32Array(32).fill(1)));
    const { approx, error } = m.scores(first, 1);
    expect(Math.abs(approx[0]! - 1)).toBeLessThanOrEqual(error[0]!);
  });
});

/** Serves fixed vectors by text: the documents' and the queries'. */
class TableEmbedder implements Embedder {
  readonly id = "test-table";
  constructor(
    readonly dimensions: number,
    private readonly table: Map<string, Float32Array>,
  ) {}
  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.table.get(t) ?? new Float32Array(this.dimensions));
  }
}

function docsOf(n: number, describe: (i: number) => string): SearchDocument[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `doc_${String(i).padStart(4, "0")}`,
    fields: [{ text: describe(i), weight: 1 }],
    semantic: { primary: describe(i) },
  }));
}

async function bothWays(embedder: Embedder, docs: SearchDocument[], queries: string[], limit: number): Promise<void> {
  const quantized = new SemanticRanker({ embedder, log: () => {} });
  const float = new SemanticRanker({ embedder, log: () => {}, quantized: false });
  for (const query of queries) {
    const got = await quantized.rank(query, docs, limit);
    const want = await float.rank(query, docs, limit);
    expect(got, query).toEqual(want);
    expect(want.length, query).toBeGreaterThan(0);
  }
  expect(quantized.quantizedScoring).toBe(true);
  expect(float.quantizedScoring).toBe(false);
}

describe("SemanticRanker with int8 scoring", () => {
  it("returns exactly the float pass's results when scores tie closer than int8 resolves", async () => {
    // 600 documents whose vectors differ from a shared base by less than one int8 step, and
    // queries near the base: the approximate order is wrong, only the float re-scoring is right.
    const dims = 128;
    const next = random(3);
    const base = unit(new Float32Array(dims).map(() => next() * 2 - 1));
    const table = new Map<string, Float32Array>();
    const describe = (i: number) => `entry number ${i}`;
    for (let i = 0; i < 600; i++) table.set(describe(i), unit(base.map((x) => x + (next() - 0.5) * 0.02)));
    // Queries at a cosine of about 0.5 to the base: inside the fusion's linear range (0.2–0.8).
    const queries = Array.from({ length: 20 }, (_, k) => `query ${k}`);
    for (const q of queries) table.set(q, unit(base.map((x) => x + (next() - 0.5) * 0.3)));
    await bothWays(new TableEmbedder(dims, table), docsOf(600, describe), queries, 10);
  });

  it("returns exactly the float pass's results when words tie and meaning is below the floor (bounds meet, no float re-scoring)", async () => {
    // Every document says "scan host number N" (the same words for most queries) and has a random
    // vector (cosine near 0, clamped by the fusion); every 50th is near the queries' direction.
    const dims = 512;
    const next = random(11);
    const near = unit(new Float32Array(dims).map(() => next() * 2 - 1));
    const table = new Map<string, Float32Array>();
    const describe = (i: number) => `scan host number ${i} and count open ports`;
    for (let i = 0; i < 1500; i++) {
      const v = new Float32Array(dims).map(() => next() * 2 - 1);
      table.set(describe(i), unit(i % 50 === 0 ? near.map((x, k) => x + 0.6 * v[k]! / Math.sqrt(dims)) : v));
    }
    const queries = ["scan host", "count open ports", "host number 7", "scan"];
    for (const q of queries) table.set(q, unit(near.map((x) => x + (next() - 0.5) * 0.05)));
    await bothWays(new TableEmbedder(dims, table), docsOf(1500, describe), queries, 10);
  });

  it("returns exactly the float pass's results on a library embedded by the real model", async () => {
    const verbs = ["scan", "backup", "resize", "convert", "rotate", "monitor", "report", "sync", "deploy", "check", "clean", "export"];
    const objects = ["open ports", "a database", "images", "csv files", "log files", "disk usage", "tls certificates", "dns records", "docker images", "git history"];
    const places = ["on a host", "in a folder", "for a customer", "every night", "before a release"];
    const describe = (i: number) => `${verbs[i % verbs.length]} ${objects[Math.floor(i / verbs.length) % objects.length]} ${places[Math.floor(i / (verbs.length * objects.length)) % places.length]}`;
    const docs = docsOf(400, describe);
    const queries = ["find which TCP ports are listening", "save the database somewhere safe", "make pictures smaller", "watch how full the disks are", "renew certificates", "tidy up containers", "what changed in the repository", "nightly report"];
    const model = new UseLiteEmbedder();
    // Embed once, then serve the same vectors to both rankers (the model is deterministic anyway).
    const texts = [...new Set(docs.map((d) => d.semantic!.primary)), ...queries];
    const vectors = await model.embed(texts);
    const table = new Map(texts.map((t, i) => [t, vectors[i]!]));
    await bothWays(new TableEmbedder(model.dimensions, table), docs, queries, 10);
  }, 120_000);
});
