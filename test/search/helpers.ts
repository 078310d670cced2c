/**
 * Embedders for testing the search machinery without the real model: a deterministic bag-of-words
 * embedder (texts sharing words get similar vectors, so rankings are predictable), a wrapper that
 * counts what reaches the wrapped embedder, and one whose readiness the test controls.
 */
import { createHash } from "node:crypto";
import type { Embedder } from "../../src/search/embedder.js";
import { tokenize } from "../../src/search/lexical.js";

/**
 * Each word adds 1 to one coordinate chosen by its hash: cosine then measures shared words.
 * `synonyms` maps a word to another before hashing, to make two texts "mean" the same without
 * sharing a word (what lexical search cannot see and semantic search can).
 */
export class BagOfWordsEmbedder implements Embedder {
  constructor(
    readonly id = "test-bow",
    readonly dimensions = 64,
    private readonly synonyms: Record<string, string> = {},
  ) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => {
      const v = new Float32Array(this.dimensions);
      for (const raw of tokenize(t)) {
        const w = this.synonyms[raw] ?? raw;
        v[createHash("md5").update(w).digest().readUInt32LE(0) % this.dimensions]! += 1;
      }
      return v;
    });
  }
}

/** Counts calls and texts; `texts` lists every text embedded, in order. */
export class CountingEmbedder implements Embedder {
  calls = 0;
  texts: string[] = [];

  constructor(private readonly inner: Embedder) {}

  get id(): string {
    return this.inner.id;
  }

  get dimensions(): number {
    return this.inner.dimensions;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls++;
    this.texts.push(...texts);
    return this.inner.embed(texts);
  }

  async warmUp(): Promise<void> {
    await this.inner.warmUp?.();
  }

  /** Texts embedded other than search queries (the ones a test passes in `queries`). */
  documentTexts(queries: readonly string[]): string[] {
    return this.texts.filter((t) => !queries.includes(t));
  }

  reset(): void {
    this.calls = 0;
    this.texts = [];
  }
}

/** An embedder that is "loading" until `ready()` is called, or that fails with `fail(message)`. */
export class GatedEmbedder implements Embedder {
  readonly id = "test-gated";
  readonly dimensions = 64;
  private open!: () => void;
  private failWith: Error | null = null;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));
  private readonly inner = new BagOfWordsEmbedder("test-gated", 64);

  ready(): void {
    this.open();
  }

  fail(message: string): void {
    this.failWith = new Error(message);
    this.open();
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    await this.gate;
    if (this.failWith) throw this.failWith;
    return this.inner.embed(texts);
  }
}
