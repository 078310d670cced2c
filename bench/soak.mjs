/**
 * Soak: many distinct snippets in one session per executor, memory sampled as it goes (issue 35.7).
 *
 *   node --expose-gc bench/soak.mjs [--runs 20000] [--every 1000] [--only in-process|subprocess|sandbox]
 *
 * Every `--every` runs the host is garbage-collected (globalThis.gc) and its RSS and used heap are
 * printed, with the child's RSS where the executor has a child process whose pid the guest can
 * tell (subprocess). stdout: one JSON line per sample and one summary line per executor with the
 * host heap's growth per 10,000 runs between the first and the last sample (the target: ≤ 1 MB).
 * Each snippet is different text (a new number in it), so nothing can be served from a cache of
 * identical sources.
 */
import { readFileSync } from "node:fs";
import { withTempDir, benchArgs } from "./lib.mjs";

const { values } = benchArgs(import.meta.url, { options: { runs: { type: "string", default: "20000" }, every: { type: "string", default: "1000" }, only: { type: "string" } } });

const { FileStorage, InProcessExecutor, Session, SubprocessExecutor, SandboxExecutor } = await import("../dist/index.js").catch((err) => {
  process.stderr.write(`soak: cannot load ../dist/index.js (${err.message}); run npm run build first\n`);
  process.exit(2);
});

if (typeof globalThis.gc !== "function") {
  process.stderr.write("soak: run with node --expose-gc, so the heap is measured after a collection\n");
  process.exit(2);
}

const RUNS = Number(values.runs);
const EVERY = Number(values.every);

const EXECUTORS = [
  { name: "in-process", make: () => new InProcessExecutor() },
  { name: "subprocess", make: () => new SubprocessExecutor() },
  { name: "sandbox", make: () => new SandboxExecutor() },
];

const mb = (bytes) => Math.round((bytes / 1_048_576) * 100) / 100;

function childRssMb(pid) {
  if (typeof pid !== "number") return null;
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
    return Math.round((kb / 1024) * 100) / 100;
  } catch {
    return null;
  }
}

async function hostSample() {
  globalThis.gc();
  await new Promise((r) => setTimeout(r, 0));
  globalThis.gc();
  const m = process.memoryUsage();
  return { rssMb: mb(m.rss), heapMb: mb(m.heapUsed) };
}

for (const { name, make } of EXECUTORS) {
  if (values.only && !name.includes(values.only)) continue;
  await withTempDir("ts-code-mode-soak-", async (dir) => {
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: make() });
    await session.start();
    const pidResult = name === "subprocess" ? await session.run("process.pid") : null;
    const pid = pidResult?.value;
    const samples = [];
    const started = Date.now();
    for (let i = 1; i <= RUNS; i++) {
      const r = await session.run(`${i} * 2`);
      if (!r.ok || r.value !== i * 2) throw new Error(`soak ${name}: run ${i} failed: ${JSON.stringify(r.error)}`);
      if (i % EVERY === 0) {
        const sample = { executor: name, runs: i, ...(await hostSample()), childRssMb: childRssMb(pid) };
        samples.push(sample);
        process.stdout.write(JSON.stringify(sample) + "\n");
      }
    }
    await session.close();
    const first = samples[0];
    const last = samples.at(-1);
    const per10k = first && last && last.runs > first.runs ? Math.round(((last.heapMb - first.heapMb) / (last.runs - first.runs)) * 10_000 * 100) / 100 : null;
    process.stdout.write(JSON.stringify({ executor: name, runs: RUNS, seconds: Math.round((Date.now() - started) / 1000), hostHeapGrowthMbPer10k: per10k, within: per10k !== null && per10k <= 1 }) + "\n");
  });
}
