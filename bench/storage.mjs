/**
 * Storage benchmarks, Redis next to files: `node bench/storage.mjs [--strict] [--only <text>] [--large] [--float]`
 * (`--float`: semantic search scores with the float vectors alone, `quantized: false`, for a before/after)
 * against an existing dist/ (build first: npx tsc -p tsconfig.build.json).
 *
 *   stdout: one JSON line per case  {"case","executor","iterations","median_ms","p90_ms","budget_ms","within_budget"}
 *           ("executor" holds the backend: redis or file)
 *   stderr: the same as an aligned table, with budget misses marked
 *
 * Starts its own redis-server (no persistence) on a free port and stops it afterwards. Cases:
 * 1 KiB and 1 MiB artifact save and load through the host API, `workflows.list()` through the WorkflowLibrary
 * with 10,000 stored workflows, and `ts-code-mode store bootstrap` of 1,000 workflows (the real
 * command, process start included). Exit code 0 even when a budget is missed; --strict makes it 1.
 */
import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { measure, printJsonLine, printTable, resultRow, startRedis, syntheticThenReal, timed, untilIndexed, withTempDir, benchArgs } from "./lib.mjs";

const { FileStorage, RedisStorage, SearchSetup, SemanticRanker, UseLiteEmbedder, WorkflowLibrary } = await import("../dist/index.js").catch((err) => {
  process.stderr.write(`bench: cannot load ../dist/index.js (${err.message}); build first: npx tsc -p tsconfig.build.json\n`);
  process.exit(2);
});

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CLI = path.join(ROOT, "dist", "cli", "main.js");
const KIB = Uint8Array.from({ length: 1024 }, (_, i) => (i * 7) & 255);
const MIB = Uint8Array.from({ length: 1024 * 1024 }, (_, i) => (i * 7) & 255);
const LARGE = process.argv.includes("--large");
/** `--float`: semantic search scores with the float vectors alone (SemanticRanker `quantized: false`), for before/after. */
const FLOAT = process.argv.includes("--float");
/** Workflows in the list and search cases: 10,000, or 100,000 with --large. */
const LIST_SIZE = LARGE ? 100_000 : 10_000;
const BOOTSTRAP_SIZE = 1_000;

/** A workflow as `workflows.create` stores it: params and description already derived. */
function workflowRecord(i) {
  return {
    name: `wf_${i}`,
    source: `/** Scan host number ${i} and count open ports. */\nexport async function run({ host, ports = "1-1024" }: { host: string; ports?: string }) {\n  const out = await tools.nmap.syn_scan({ target: host, p: ports });\n  return out.split("\\n").filter((l) => l.includes("open")).length + ${i};\n}\n`,
    description: `Scan host number ${i} and count open ports.`,
    descriptionExplicit: false,
    params: [
      { name: "host", type: "string", required: true },
      { name: "ports", type: "string", required: false, default: '"1-1024"' },
    ],
    createdAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-01T00:00:00.000Z",
  };
}

/**
 * The cases. `backends` maps backend name → budget in ms (null: measured, no budget). `prepare`
 * runs once per backend before sampling; `sample(ctx, i)` resolves to one duration in ms.
 */
const CASES = [
  {
    name: "artifact save, 1 KiB (host API)",
    iterations: 2000,
    warmup: 200,
    backends: { redis: 0.5, file: null },
    sample: ({ storage }, i) => timed(() => storage.artifacts.save(`bench/kib-${i % 100}.bin`, KIB)),
  },
  {
    name: "artifact load, 1 KiB (host API)",
    iterations: 2000,
    warmup: 200,
    backends: { redis: 0.5, file: null },
    prepare: async ({ storage }) => {
      for (let i = 0; i < 100; i++) await storage.artifacts.save(`bench/load-${i}.bin`, KIB);
    },
    sample: ({ storage }, i) => timed(() => storage.artifacts.load(`bench/load-${i % 100}.bin`)),
  },
  {
    name: "artifact save, 1 MiB (host API)",
    iterations: 200,
    warmup: 20,
    backends: { redis: null, file: null },
    sample: ({ storage }, i) => timed(() => storage.artifacts.save(`bench/mib-${i % 10}.bin`, MIB)),
  },
  {
    name: "artifact load, 1 MiB (host API)",
    iterations: 200,
    warmup: 20,
    backends: { redis: null, file: null },
    prepare: async ({ storage }) => {
      for (let i = 0; i < 10; i++) await storage.artifacts.save(`bench/mib-load-${i}.bin`, MIB);
    },
    sample: ({ storage }, i) => timed(() => storage.artifacts.load(`bench/mib-load-${i % 10}.bin`)),
  },
  {
    name: `workflows.list() of ${LIST_SIZE.toLocaleString("en")} workflows (WorkflowLibrary)`,
    iterations: 20,
    warmup: 2,
    backends: { redis: 50, file: 50 },
    workflows: true,
    prepare: (ctx) => fillWorkflows(ctx),
    sample: async ({ storage }) => {
      const library = new WorkflowLibrary(storage.workflows);
      return timed(async () => {
        const all = await library.list();
        if (all.length !== LIST_SIZE) throw new Error(`listed ${all.length} workflows, expected ${LIST_SIZE}`);
      });
    },
  },
  {
    // A new WorkflowLibrary per sample with its ranker from SearchSetup, as each session makes them;
    // the storage (its catalogue, and the ranker SearchSetup shares per storage) lives on.
    name: `lexical search of ${LIST_SIZE.toLocaleString("en")} workflows (WorkflowLibrary.search)`,
    iterations: 20,
    warmup: 2,
    backends: { redis: 10, file: 10 },
    workflows: true,
    prepare: (ctx) => fillWorkflows(ctx),
    sample: async ({ storage }, i) => {
      const library = new WorkflowLibrary(storage.workflows, { ranker: SearchSetup.create(storage, { embedder: "lexical" }).workflowsRanker() });
      await untilIndexed((j) => library.search(`scan host number ${j}`));
      return timed(() => library.search(`${QUERIES[i % QUERIES.length]} ${i}`));
    },
  },
  {
    // Vectors of the stored workflows are synthetic (embedding 20,000 texts with the model takes
    // minutes); the query is embedded by the real model, a new text each time (no query cache).
    name: `semantic search of ${LIST_SIZE.toLocaleString("en")} workflows, vectors cached (query embedding included)`,
    iterations: 20,
    warmup: 3,
    backends: { redis: 10, file: 10 },
    workflows: true,
    prepare: semanticLibrary,
    sample: (ctx, i) => timed(() => ctx.library.search(`${QUERIES[i % QUERIES.length]} ${i}`)),
  },
  {
    // The same search with the query's vector already cached (an agent repeating a query): what the
    // search costs besides the model's forward pass for the query.
    name: `semantic search of ${LIST_SIZE.toLocaleString("en")} workflows, vectors and query vector cached`,
    iterations: 20,
    warmup: 3,
    backends: { redis: 10, file: 10 },
    workflows: true,
    prepare: semanticLibrary,
    sample: (ctx) => timed(() => ctx.library.search(QUERIES[0])),
  },
  {
    name: `store bootstrap of ${BOOTSTRAP_SIZE.toLocaleString("en")} workflows (CLI process)`,
    iterations: 5,
    warmup: 1,
    backends: { redis: 2000 },
    prepare: async (ctx) => {
      ctx.source = path.join(ctx.dir, "bootstrap-source");
      const source = new FileStorage({ basePath: ctx.source });
      await mapLimit(
        Array.from({ length: BOOTSTRAP_SIZE }, (_, i) => workflowRecord(i)),
        32,
        (r) => source.workflows.save(r),
      );
    },
    sample: (ctx) =>
      timed(() => runCli(["store", "bootstrap", "--source", ctx.source, "--target", ctx.url, "--prefix", `${ctx.prefix}-boot`, "--clear"])),
  },
];

const QUERIES = ["find open ports on a host", "scan host number 42", "count open ports", "which hosts listen on 443", "tidy up old logs", "nmap syn scan"];

/** The stored workflows with synthetic cached vectors, the real model for queries, the index built. */
async function semanticLibrary(ctx) {
  await fillWorkflows(ctx);
  await ctx.model.ready();
  ctx.library = new WorkflowLibrary(ctx.storage.workflows, { ranker: new SemanticRanker({ embedder: syntheticThenReal(ctx.model), indexTimeoutMs: 600_000, quantized: !FLOAT }) });
  await untilIndexed((i) => ctx.library.search(`scan host number ${i}`)); // matches every workflow of the bench
}

/** Saves LIST_SIZE workflows once per storage (Redis: one transaction; files: 32 at a time). */
const filled = new Set();
async function fillWorkflows({ storage, backend }) {
  if (filled.has(backend)) return;
  const records = Array.from({ length: LIST_SIZE }, (_, i) => workflowRecord(i));
  if (storage.workflows.saveMany) await storage.workflows.saveMany(records, { clear: true });
  else await mapLimit(records, 32, (r) => storage.workflows.save(r));
  filled.add(backend);
}

// ---- helpers ------------------------------------------------------------------------------------

function runCli(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`ts-code-mode ${args.join(" ")} exited with ${code}: ${stderr}`))));
  });
}

async function mapLimit(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

async function main() {
  const { values } = benchArgs(import.meta.url, { options: { strict: { type: "boolean", default: false }, only: { type: "string" }, large: { type: "boolean", default: false }, float: { type: "boolean", default: false } } });
  const cases = CASES.filter((c) => values.only === undefined || c.name.includes(values.only));
  const cpu = os.cpus()[0]?.model ?? "unknown cpu";
  process.stderr.write(`ts-code-mode storage bench — node ${process.version}, ${os.platform()} ${os.arch()}, ${cpu} ×${os.cpus().length}\n`);

  const rows = [];
  await withTempDir("tcm-bench-storage-", async (dir) => {
    const redis = await startRedis(dir);
    const prefix = `bench-${process.pid}`;
    const model = new UseLiteEmbedder();
    try {
      for (const c of cases) {
        for (const [backend, budget] of Object.entries(c.backends)) {
          const storage =
            backend === "redis" ? new RedisStorage({ url: redis.url, prefix }) : new FileStorage({ basePath: path.join(dir, c.workflows ? "file-workflows" : `file-${rows.length}`) });
          const ctx = { storage, backend, dir, url: redis.url, prefix, model };
          try {
            if (c.prepare) await c.prepare(ctx);
            const samples = await measure((i) => c.sample(ctx, i), { iterations: c.iterations, warmup: c.warmup });
            const row = resultRow({ name: c.name, executor: backend, iterations: c.iterations, samples, budgetMs: budget ?? undefined });
            printJsonLine(row);
            rows.push(row);
          } finally {
            await storage.close();
          }
        }
      }
    } finally {
      await redis.stop();
    }
  });

  printTable(rows);
  if (values.strict && rows.some((r) => r.within_budget === false)) process.exitCode = 1;
}

await main();
