/**
 * Search benchmarks: `node bench/search.mjs [--strict] [--quick]` against an existing dist/
 * (build first: npx tsc -p tsconfig.build.json).
 *
 *   stdout: one JSON line per case (same shape as bench/run.mjs)
 *   stderr: the aligned table, then checks that are counts rather than times
 *
 * Cases, with the built-in model (Universal Sentence Encoder Lite, loaded offline):
 *   - model load in a new process (worker start, weights, warm-up), and the first search in a new
 *     process on an already indexed store, load included; both in child processes;
 *   - embedding one query;
 *   - a search over 10,000 stored workflows whose vectors are cached, query embedding included.
 *     Their vectors are synthetic (embedding 20,000 texts with the model takes minutes); the work a
 *     search does with them is exactly the same;
 *   - indexing 1,000 new workflows (real embeddings of descriptions and code words);
 *   - re-opening a session on an indexed store: how many texts it embeds again (must be 0);
 *   - session.run("1 + 1") latency (median, p99, longest event-loop block) idle and while the host
 *     builds the index of 10,001 new workflows in the background (word index, then embeddings).
 * py-code-mode's first search (~5.8 s, its own measurement) is printed as a reference row.
 * `--quick` indexes 200 workflows instead of 1,000 and takes fewer samples.
 */
import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { measure, printJsonLine, printTable, resultRow, syntheticThenReal, timed, untilIndexed, withTempDir, benchArgs } from "./lib.mjs";

const SELF = fileURLToPath(import.meta.url);
const DIST = path.resolve(path.dirname(SELF), "../dist/index.js");

const lib = await import(DIST).catch((err) => {
  process.stderr.write(`bench: cannot load ../dist/index.js (${err.message}); build first: npx tsc -p tsconfig.build.json\n`);
  process.exit(2);
});
const { FileStorage, InProcessExecutor, SearchSetup, SemanticRanker, Session, UseLiteEmbedder, WorkflowLibrary } = lib;

// ---- workloads ---------------------------------------------------------------------------------

const VERBS = ["scan", "backup", "resize", "convert", "rotate", "monitor", "report", "sync", "deploy", "check", "clean", "export", "import", "notify", "summarize"];
const OBJECTS = ["open ports", "a database", "images", "csv files", "log files", "disk usage", "tls certificates", "dns records", "docker images", "user signups", "web pages", "git history", "cloud buckets", "cron jobs", "api latency"];
const PLACES = ["on a host", "in a folder", "for a customer", "every night", "on the staging cluster", "for the team", "before a release", "across regions"];

/** A plausible, distinct workflow: description from templates, a short source that calls a tool. */
function syntheticWorkflow(i) {
  const v = VERBS[i % VERBS.length];
  const o = OBJECTS[Math.floor(i / VERBS.length) % OBJECTS.length];
  const p = PLACES[Math.floor(i / (VERBS.length * OBJECTS.length)) % PLACES.length];
  const description = `${v[0].toUpperCase()}${v.slice(1)} ${o} ${p} (variant ${i}).`;
  const tool = o.split(" ").at(-1).replace(/[^a-z]/g, "");
  const source = `/** ${description} */\nexport async function run({ target, limit = ${i % 50} }: { target: string; limit?: number }) {\n  const out = await tools.${tool}.${v}({ target, limit });\n  await artifacts.save(\`${v}/\${target}-${i}.txt\`, out);\n  return out.split("\\n").length;\n}\n`;
  return { name: `wf_${v}_${i}`, description, source };
}

/**
 * A WorkflowStore in a Map: the search cost without any storage's own listing cost. Records are
 * handed out frozen, as FileStorage's catalogue and Redis's cached listing do, so the library
 * derives their details once per record version, not per search.
 */
class MapStore {
  records = new Map();
  async save(r) {
    this.records.set(r.name, Object.freeze({ ...r, params: Object.freeze(r.params.map((p) => Object.freeze({ ...p }))) }));
  }
  async get(n) {
    return this.records.get(n) ?? null;
  }
  async list() {
    return [...this.records.values()];
  }
  async delete(n) {
    return this.records.delete(n);
  }
}

function record(w) {
  const now = new Date().toISOString();
  return { name: w.name, source: w.source, description: w.description, params: [{ name: "target", type: "string", required: true }], createdAt: now, updatedAt: now };
}


function counting(inner) {
  const e = { id: inner.id, dimensions: inner.dimensions, texts: 0, embed: async (t) => ((e.texts += t.length), inner.embed(t)) };
  return e;
}

const QUERIES = ["find open ports on a host", "back up the database every night", "shrink pictures", "which certificates expire soon", "tidy up old logs", "how many users signed up", "sync files to the cloud", "check api response times"];

// ---- child processes ---------------------------------------------------------------------------

/** Runs this script as `--child <mode> <dir>` and returns the JSON it prints. */
function child(mode, dir) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const env = { ...process.env };
    delete env.TS_CODE_MODE_SEARCH;
    const p = spawn(process.execPath, [SELF, "--child", mode, dir], { stdio: ["ignore", "pipe", "pipe"], env });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("error", reject);
    p.on("close", (code) => {
      if (code !== 0) return reject(new Error(`bench child ${mode} exited ${code}: ${err}`));
      resolve({ ...JSON.parse(out.trim()), wallMs: performance.now() - t0 });
    });
  });
}

async function childMain(mode, dir) {
  if (mode === "rss") {
    // A session with search enabled (the default) that runs code but never searches, then one search.
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new InProcessExecutor() });
    await session.start();
    await session.run("1 + 1");
    globalThis.gc?.();
    const startedRss = process.memoryUsage().rss;
    const loadedAtStart = UseLiteEmbedder.workerStarted();
    await session.searchWorkflows("discover which TCP ports are listening");
    const searchedRss = process.memoryUsage().rss;
    await session.close();
    process.stdout.write(JSON.stringify({ startedRss, searchedRss, loadedAtStart }));
  } else if (mode === "first-unindexed") {
    // A new process, a store whose workflows were never embedded: the first search must answer by words at once.
    const t0 = performance.now();
    const storage = new FileStorage({ basePath: dir });
    const library = new WorkflowLibrary(storage.workflows, { ranker: SearchSetup.create(storage, { embedder: "use-lite" }).workflowsRanker() });
    const hits = await library.search("discover which TCP ports are listening");
    const firstMs = performance.now() - t0;
    process.stdout.write(JSON.stringify({ firstMs, indexing: hits.some((h) => h.indexing), count: hits.length }));
  } else if (mode === "responsive") {
    // session.run("1 + 1") every 5 ms, first with nothing else going on, then while the first search
    // of 10,001 never-embedded workflows answers and the host builds the word index and embeds them.
    const { monitorEventLoopDelay } = await import("node:perf_hooks");
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new InProcessExecutor() });
    await session.start();
    await session.listWorkflows(); // the catalogue is loaded; what follows is search work only
    const paced = async (ms) => {
      const samples = [];
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const end = performance.now() + ms;
      while (performance.now() < end) {
        const t = performance.now();
        const r = await session.run("1 + 1");
        samples.push(performance.now() - t);
        if (r.error) throw new Error(r.error.message);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      loop.disable();
      return { samples, maxBlockMs: loop.max / 1e6 };
    };
    await paced(300); // warm-up
    const idle = await paced(2000);
    const t0 = performance.now();
    let answeredMs = 0;
    const search = session.searchWorkflows("discover which TCP ports are listening").then((hits) => ((answeredMs = performance.now() - t0), hits));
    const busy = await paced(5000);
    const hits = await search;
    const { readdir } = await import("node:fs/promises");
    let vectorsWritten = 0;
    for (const space of await readdir(path.join(dir, "vectors")).catch(() => [])) vectorsWritten += (await readdir(path.join(dir, "vectors", space, "workflows")).catch(() => [])).length;
    process.stdout.write(JSON.stringify({ idle, busy, answeredMs, indexing: hits.some((h) => h.indexing), vectorsWritten }));
  } else if (mode === "load") {
    const t0 = performance.now();
    await new UseLiteEmbedder().ready();
    process.stdout.write(JSON.stringify({ loadMs: performance.now() - t0 }));
  } else if (mode === "first-search") {
    // A new process opening an indexed store: everything from here on is what its first search costs.
    const t0 = performance.now();
    const storage = new FileStorage({ basePath: dir });
    const setup = SearchSetup.create(storage, { embedder: "use-lite" });
    setup.warmUp(); // what a session start does
    let readyMs = 0;
    void setup.embedder.ready().then(() => (readyMs = performance.now() - t0));
    const library = new WorkflowLibrary(storage.workflows, { ranker: setup.workflowsRanker() });
    const hits = await library.search("discover which TCP ports are listening");
    const firstSearchMs = performance.now() - t0;
    const t1 = performance.now();
    await storage.workflows.list();
    const listMs = performance.now() - t1;
    process.stdout.write(JSON.stringify({ firstSearchMs, readyMs, listMs, first: hits[0]?.name }));
  }
  process.exit(0);
}

// ---- main --------------------------------------------------------------------------------------

const { values: argv, positionals } = benchArgs(import.meta.url, { options: { strict: { type: "boolean" }, quick: { type: "boolean" }, child: { type: "string" } }, allowPositionals: true });
if (argv.child) await childMain(argv.child, positionals[0]);

const quick = Boolean(argv.quick);
const rows = [];
const checks = [];
function add(name, samples, budgetMs, executor = "use-lite") {
  const row = resultRow({ name, executor, iterations: samples.length, samples, budgetMs });
  rows.push(row);
  printJsonLine(row);
}

await withTempDir("ts-code-mode-bench-search-", async (dir) => {
  // Model load, in fresh processes (the model is loaded once per process).
  const loads = [];
  for (let i = 0; i < (quick ? 3 : 5); i++) loads.push((await child("load", dir)).loadMs);
  add("model load (new process: worker, weights, warm-up)", loads, 400);

  const model = new UseLiteEmbedder();
  await model.ready();
  let q = 0;
  add("embed one query", await measure(() => timed(() => model.embed([`${QUERIES[q++ % QUERIES.length]} ${q}`])), { iterations: quick ? 30 : 100, warmup: 5 }), null);

  // 10,000 stored workflows, vectors cached (synthetic), query embedded by the real model.
  const store = new MapStore();
  for (let i = 0; i < 10_000; i++) await store.save(record(syntheticWorkflow(i)));
  const ranker = new SemanticRanker({ embedder: syntheticThenReal(model), indexTimeoutMs: 600_000 });
  const big = new WorkflowLibrary(store, { ranker });
  await untilIndexed((i) => big.search(`warm up the index ${i}`));
  const docs = (await store.list()).map((r) => ({
    id: r.name,
    fields: [
      { text: r.name, weight: 3 },
      { text: r.description, weight: 2 },
      { text: "target", weight: 1.5 },
      { text: r.source, weight: 0.5 },
    ],
    semantic: { primary: r.description, secondary: r.source, secondaryIsCode: true },
  }));
  // These documents differ from the library's (no parameter field): the ranker indexes them first.
  await untilIndexed((i) => ranker.rank(`warm up the index ${i}`, docs, 10));
  q = 0;
  add(
    "search 10,000 workflows, vectors cached (ranker; query embedding included)",
    await measure(() => timed(() => ranker.rank(`${QUERIES[q++ % QUERIES.length]} ${q}`, docs, 10)), { iterations: quick ? 10 : 30, warmup: 3 }),
    10,
  );
  // q goes on counting: new queries, so each embeds its query as above (the ranker caches query vectors).
  add(
    "search 10,000 workflows via WorkflowLibrary.search (in-memory store)",
    await measure(() => timed(() => big.search(`${QUERIES[q++ % QUERIES.length]} ${q}`)), { iterations: quick ? 5 : 15, warmup: 2 }),
    null,
  );

  // Indexing new workflows with the real model, into a FileStorage (vectors written to disk).
  const count = quick ? 200 : 1000;
  const base = path.join(dir, "indexed");
  await mkdir(base, { recursive: true });
  const storage = new FileStorage({ basePath: base });
  for (let i = 0; i < count; i++) await storage.workflows.save(record(syntheticWorkflow(i)));
  await storage.workflows.save(record(portScanFixture()));
  const indexer = counting(model);
  const lib1 = new WorkflowLibrary(storage.workflows, { ranker: SearchSetup.create(storage, { embedder: indexer, indexTimeoutMs: 600_000 }).workflowsRanker() });
  const indexMs = await timed(() => lib1.search("warm up the index"));
  add(`index ${count} new workflows (real embeddings, first search)`, [indexMs], null);
  checks.push(`indexing: ${indexer.texts - 1} texts embedded for ${count + 1} workflows, ${(indexMs / (count + 1)).toFixed(1)} ms per workflow`);

  // Re-opening a session on the indexed store: nothing may be embedded again.
  const reopened = counting(model);
  const lib2 = new WorkflowLibrary(storage.workflows, { ranker: SearchSetup.create(storage, { embedder: reopened }).workflowsRanker() });
  const reopenMs = await timed(() => lib2.search("discover which TCP ports are listening"));
  add(`re-open an indexed store of ${count + 1} + first search`, [reopenMs], null);
  checks.push(`re-open: ${reopened.texts - 1} texts embedded again (must be 0) — ${reopened.texts - 1 === 0 ? "ok" : "FAILED"}`);

  // First search in a new process, model load included, on the store indexed above.
  const firsts = [];
  let firstHit = "";
  for (let i = 0; i < (quick ? 3 : 5); i++) {
    const r = await child("first-search", base);
    firsts.push(r.firstSearchMs);
    firstHit = r.first;
    checks.push(
      `first search in a new process #${i + 1}: ${r.firstSearchMs.toFixed(0)} ms (model ready at ${r.readyMs.toFixed(0)} ms; ` +
        `listing the ${count + 1} stored workflows alone takes ${r.listMs.toFixed(0)} ms); ${r.wallMs.toFixed(0)} ms including node start and import`,
    );
  }
  add(`first search in a new process, load included (${count + 1} workflows)`, firsts, 600);
  checks.push(`first search found: ${firstHit} (expected port_scan)`);
  add("py-code-mode first search (reference, its own measurement)", [5800], null, "py-code-mode");

  // Host RSS after a session start with search enabled but unused (target <= 80 MiB), and after a first search.
  const rssBase = path.join(dir, "rss");
  await mkdir(rssBase, { recursive: true });
  await new FileStorage({ basePath: rssBase }).workflows.save(record(portScanFixture()));
  const started = [];
  const searched = [];
  for (let i = 0; i < (quick ? 3 : 5); i++) {
    const r = await child("rss", rssBase);
    started.push(r.startedRss / 1048576);
    searched.push(r.searchedRss / 1048576);
    if (r.loadedAtStart) checks.push("rss: the model was loaded by a session start — FAILED");
  }
  add("host RSS (MiB) after session start, search enabled but unused", started, 80, "rss-MiB");
  add("host RSS (MiB) after the first search (model loaded)", searched, null, "rss-MiB");

  // First search of a new process on 10,000 workflows that were never embedded: answers by words, marked indexing.
  const unindexed = path.join(dir, "unindexed");
  await mkdir(unindexed, { recursive: true });
  const un = new FileStorage({ basePath: unindexed });
  let n = 0;
  const all = Array.from({ length: 10_000 }, (_, i) => record(syntheticWorkflow(i)));
  all.push(record(portScanFixture()));
  await Promise.all(Array.from({ length: 32 }, async () => { while (n < all.length) await un.workflows.save(all[n++]); }));
  // The catalogue file (with each file's derived signature), as any earlier session that listed or searched would have left it.
  // Listed once the saves are older than the catalogue's racy window (RACY_MS, 100 ms): an entry
  // stamped within it is not written to the file, so the last few hundred saves would otherwise be
  // read and parsed again (TypeScript's parser loaded) by every measured process.
  await new Promise((r) => setTimeout(r, 250));
  await new WorkflowLibrary(un.workflows).list();
  await un.close();
  const firstUnindexed = [];
  for (let i = 0; i < (quick ? 2 : 3); i++) {
    // A fresh copy of the vectors folder each time: the store stays unindexed.
    await import("node:fs/promises").then((fs) => fs.rm(path.join(unindexed, "vectors"), { recursive: true, force: true }));
    const r = await child("first-unindexed", unindexed);
    firstUnindexed.push(r.firstMs);
    checks.push(`first search, 10,001 unindexed workflows #${i + 1}: ${r.firstMs.toFixed(0)} ms, ${r.count} results, marked indexing: ${r.indexing}`);
  }
  add("first search of a new process, 10,001 never-embedded workflows (answers by words)", firstUnindexed, 1000);

  // A run's latency while the host indexes: the first search of the unindexed store above answers,
  // then the word index is built (sliced) and the model embeds (in its worker) in the background.
  await import("node:fs/promises").then((fs) => fs.rm(path.join(unindexed, "vectors"), { recursive: true, force: true }));
  const resp = await child("responsive", unindexed);
  const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
  add("session.run('1 + 1'), idle host", resp.idle.samples, null, "in-process");
  add("session.run('1 + 1') while 10,001 workflows are indexed in the background", resp.busy.samples, null, "in-process");
  checks.push(
    `run latency idle: median ${pct(resp.idle.samples, 50).toFixed(2)} ms, p99 ${pct(resp.idle.samples, 99).toFixed(2)} ms, longest event-loop block ${resp.idle.maxBlockMs.toFixed(1)} ms (${resp.idle.samples.length} runs)`,
  );
  checks.push(
    `run latency while indexing: median ${pct(resp.busy.samples, 50).toFixed(2)} ms, p99 ${pct(resp.busy.samples, 99).toFixed(2)} ms, longest event-loop block ${resp.busy.maxBlockMs.toFixed(1)} ms ` +
      `(${resp.busy.samples.length} runs; the search answered in ${resp.answeredMs.toFixed(0)} ms, indexing: ${resp.indexing}; ${resp.vectorsWritten} vectors written in the 5 s)`,
  );
});

printTable(rows);
process.stderr.write(`\n${checks.join("\n")}\n`);
if (argv.strict && rows.some((r) => r.within_budget === false)) process.exitCode = 1;

function portScanFixture() {
  const description = "Scan a host for open TCP ports and save the list as an artifact.";
  return {
    name: "port_scan",
    description,
    source: `/** ${description} */\nexport async function run({ host, ports = "1-1024" }: { host: string; ports?: string }) {\n  const out = await tools.nmap.syn_scan({ target: host, p: ports });\n  return out.split("\\n").filter((l) => l.includes("open")).length;\n}\n`,
  };
}
