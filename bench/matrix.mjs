/**
 * The semantic search's matrix pass: `node bench/matrix.mjs [--large]` against dist/ (build first:
 * npx tsc -p tsconfig.build.json). 10,000 documents of 512 dimensions (100,000 with --large), in
 * the same process and window:
 *   - the float pass alone: one dot product per row of the Float32Array matrix (the JS loop);
 *   - the int8 pass alone: Int8Matrix.scores (WebAssembly SIMD) over the same rows;
 *   - SemanticRanker.rank() with every vector and the query's vector cached, `quantized: false`
 *     (the float pass) and `true` (int8 pass + float re-scoring of the rows that can be in the top 10):
 *     the whole search without the model, lexical scores included.
 * Vectors are synthetic but clustered (200 topics, a document = its topic + noise), so scores
 * spread like a real library's rather than all sitting near 0. Prints medians (ms) and memory.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";

const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist");
const { SemanticRanker } = await import(path.join(DIST, "search/semantic.js"));
const { Int8Matrix } = await import(path.join(DIST, "search/int8-matrix.js"));
const { dot } = await import(path.join(DIST, "search/embedder.js"));

const N = process.argv.includes("--large") ? 100_000 : 10_000;
const DIMS = 512;
const ROUNDS = N > 50_000 ? 9 : 31;

let seed = 12345;
const rand = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
const unit = (v) => {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  return v.map((x) => x / n);
};
const topics = Array.from({ length: 200 }, () => unit(new Float32Array(DIMS).map(rand)));
const vectors = new Map();
const docs = [];
for (let i = 0; i < N; i++) {
  const text = `workflow ${i} of topic ${i % 200}`;
  const t = topics[i % 200];
  vectors.set(text, unit(t.map((x) => x + rand() * 0.06)));
  docs.push({ id: `wf_${i}`, fields: [{ text, weight: 1 }], semantic: { primary: text } });
}
const queries = Array.from({ length: 20 }, (_, k) => `query number ${k}`);
for (const [k, q] of queries.entries()) vectors.set(q, unit(topics[k * 7].map((x) => x + rand() * 0.08)));
const embedder = { id: "bench-synthetic", dimensions: DIMS, embed: async (texts) => texts.map((t) => vectors.get(t) ?? new Float32Array(DIMS)) };

function median(samples) {
  const s = [...samples].sort((a, b) => a - b);
  return s[s.length >> 1];
}
async function time(fn) {
  const samples = [];
  for (let r = 0; r < ROUNDS + 3; r++) {
    const t0 = performance.now();
    await fn(r);
    if (r >= 3) samples.push(performance.now() - t0);
  }
  return median(samples);
}

// The passes alone, over the same rows.
const float = new Float32Array(N * DIMS);
const int8 = new Int8Matrix(DIMS);
[...vectors.values()].slice(0, N).forEach((v, r) => {
  float.set(v, r * DIMS);
  int8.set(r, v);
});
const q = vectors.get(queries[0]);
const out = new Float64Array(N);
const floatPass = await time(() => {
  for (let r = 0; r < N; r++) out[r] = dot(q, float, r * DIMS);
});
const int8Pass = await time(() => int8.scores(q, N));

// The whole search without the model, both ways.
const rows = [];
for (const quantized of [false, true]) {
  const ranker = new SemanticRanker({ embedder, quantized, collectGarbage: false, log: () => {} });
  // Until the index is built (the first search over 2,000+ documents answers by words while it is
  // built in the background) and every query's vector is cached.
  for (let i = 0; ranker.rowsInUse < N || i < 2 * queries.length; i++) {
    await ranker.rank(queries[i % queries.length], docs, 10);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  rows.push([quantized, await time((r) => ranker.rank(queries[r % queries.length], docs, 10))]);
}

const mib = (b) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const lines = [
  [`float pass, ${N.toLocaleString("en")} × ${DIMS} (JS loop)`, floatPass],
  [`int8 pass (WebAssembly SIMD)`, int8Pass],
  [`rank(), query vector cached, quantized: false`, rows[0][1]],
  [`rank(), query vector cached, quantized: true`, rows[1][1]],
];
for (const [name, ms] of lines) {
  process.stdout.write(`${JSON.stringify({ case: name, documents: N, median_ms: Math.round(ms * 1000) / 1000 })}\n`);
  process.stderr.write(`${name.padEnd(52)} ${ms.toFixed(2).padStart(8)} ms\n`);
}
process.stderr.write(`memory: float matrix ${mib(N * DIMS * 4)}, int8 copy ${mib(int8.bytes)} (per-row scales included)\n`);
