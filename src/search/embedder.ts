/**
 * The embedder seam: anything that turns texts into vectors of one fixed size. Semantic search
 * compares a query's vector with each document's by cosine similarity, so two embedders only share
 * cached vectors when they are the same model (`id`) with the same `dimensions`.
 */

export interface Embedder {
  /**
   * Names the vector space: the model and anything that changes its output (version, endpoint).
   * Vectors cached under one id are never compared with another's.
   */
  readonly id: string;
  /** Length of every vector; 0 while not yet known (a remote model answers it with its first reply). */
  readonly dimensions: number;
  /** One vector per text, in order. Vectors need not be normalised; callers normalise them. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /** Start loading in the background. Never rejects; a load failure surfaces from `embed`. */
  warmUp?(): Promise<void>;
}

/** An embedder failed: the model could not load, or a remote endpoint refused or misbehaved. */
export class EmbedderError extends Error {
  override readonly name = "EmbedderError";
}

/** Duck-type check used where options arrive from user code. */
export function isEmbedder(value: unknown): value is Embedder {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Partial<Embedder>;
  return typeof v.id === "string" && typeof v.dimensions === "number" && typeof v.embed === "function";
}

/** Scales `v` to length 1 in place (cosine similarity is then a dot product); zero vectors stay zero. */
export function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  if (sum === 0 || Math.abs(sum - 1) < 1e-6) return v;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i]! *= inv;
  return v;
}

/**
 * Dot product of two vectors of the same length (cosine similarity for unit vectors). With
 * `offset`, `a` against the `a.length` floats of `b` starting there: a row of a matrix, without a view per row.
 */
export function dot(a: Float32Array, b: Float32Array, offset = 0): number {
  const n = Math.min(a.length, b.length - offset);
  // Four independent sums: the hot loop of a search over thousands of documents.
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    s0 += a[i]! * b[offset + i]!;
    s1 += a[i + 1]! * b[offset + i + 1]!;
    s2 += a[i + 2]! * b[offset + i + 2]!;
    s3 += a[i + 3]! * b[offset + i + 3]!;
  }
  for (; i < n; i++) s0 += a[i]! * b[offset + i]!;
  return s0 + s1 + s2 + s3;
}
