/**
 * ContainerExecutor benchmarks on the engine of DOCKER_HOST (podman here):
 * `node bench/container.mjs [--strict] [--only <text>]` against an existing dist/ (build first:
 * npx tsc -p tsconfig.build.json); the image is built first if missing (not timed).
 *
 *   cold start            new Session + start (container create + start + guest ready) + run("1") + close (budget 500 ms)
 *   trivial run           run("1+1") (budget 1 ms)
 *   tool call             one in-process tool call from the guest, per call in a loop (budget 0.5 ms)
 *   five parallel tools   Promise.all of five 20 ms tools in one run (budget 30 ms)
 *   exec true             session.exec(["true"]) inside the container (no budget)
 *   CLI tool inside       tools.wc.lines of a workspace file, run inside the container (issue 32.1)
 *   CLI tool on the host  the same wc call from a tool with runs_on: host (today's placement);
 *                         target: inside ≤ 2× host (no budget: the ratio is read from the table)
 *
 *   stdout: one JSON line per case (bench/lib.mjs shape); stderr: the table, budget misses marked.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import os from "node:os";
import { measure, printJsonLine, printTable, resultRow, timed, withTempDir, noopAdapter, benchArgs } from "./lib.mjs";

const { ContainerExecutor, FileStorage, Session, ToolRegistry, buildImage } = await import("../dist/index.js").catch((err) => {
  process.stderr.write(`bench: cannot load ../dist/index.js (${err.message}); build first: npx tsc -p tsconfig.build.json\n`);
  process.exit(2);
});

const CALLS_PER_LOOP = 200;

const WC = (name, runsOn) =>
  `name: ${name}\ndescription: Count lines\ncommand: [wc, -l]\nruns_on: ${runsOn}\nend_of_options: true\nschema:\n  positional:\n    - { name: files, type: array, required: true }\n`;

/** The noop tools, and wc twice: where the code runs (the container) and runs_on: host. */
async function executor(dir) {
  const toolsDir = path.join(dir, "tools");
  await mkdir(toolsDir, { recursive: true });
  await writeFile(path.join(toolsDir, "wc.yaml"), WC("wc", "session"));
  await writeFile(path.join(toolsDir, "hostwc.yaml"), WC("hostwc", "host"));
  const tools = await ToolRegistry.load(toolsDir);
  tools.register(noopAdapter());
  return new ContainerExecutor({ tools });
}

/** A file at the same path in the container (tmpfs /tmp) and on the host, for the two wc tools. */
const WC_FILE = `/tmp/tcm-bench-wc-${process.pid}.txt`;

async function run(session, code) {
  const r = await session.run(code, { timeoutMs: 120_000 });
  if (!r.ok) throw new Error(`bench snippet failed: ${code}\n${r.error?.name}: ${r.error?.message}`);
  return r;
}

const CASES = [
  {
    name: 'cold start: new Session + start + run("1") + close',
    iterations: 10,
    warmup: 1,
    budgetMs: 500,
    fresh: true,
    sample: ({ dir }, i) =>
      timed(async () => {
        const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, `cold-${i}`) }), executor: await executor(path.join(dir, `cold-${i}`)) });
        try {
          await session.start();
          await run(session, "1");
        } finally {
          await session.close();
        }
      }),
  },
  { name: 'trivial run: run("1+1")', iterations: 500, warmup: 50, budgetMs: 1, sample: ({ session }) => timed(() => run(session, "1+1")) },
  {
    name: `tool call from guest, per call (loop of ${CALLS_PER_LOOP} / ${CALLS_PER_LOOP})`,
    iterations: 10,
    warmup: 2,
    callsPerSample: CALLS_PER_LOOP,
    budgetMs: 0.5,
    sample: async ({ session }) => (await timed(() => run(session, `for (let i = 0; i < ${CALLS_PER_LOOP}; i++) await tools.noop.ping({})`))) / CALLS_PER_LOOP,
  },
  {
    name: "five 20 ms tools with Promise.all, one run",
    iterations: 50,
    warmup: 5,
    budgetMs: 30,
    sample: ({ session }) => timed(() => run(session, "await Promise.all([1, 2, 3, 4, 5].map(() => tools.noop.sleep20({})))")),
  },
  {
    name: 'exec ["true"] in the container',
    iterations: 20,
    warmup: 2,
    budgetMs: null,
    sample: ({ session }) =>
      timed(async () => {
        const r = await session.exec(["true"]);
        if (r.exitCode !== 0) throw new Error(`exec true failed: ${JSON.stringify(r)}`);
      }),
  },
  {
    name: "CLI tool inside the container: tools.wc({ files }) from the guest",
    iterations: 30,
    warmup: 3,
    budgetMs: null,
    sample: ({ session }) => timed(() => run(session, `await tools.wc({ files: [${JSON.stringify(WC_FILE)}] })`)),
  },
  {
    name: "CLI tool on the host (runs_on: host): tools.hostwc({ files }) from the guest",
    iterations: 30,
    warmup: 3,
    budgetMs: null,
    sample: ({ session }) => timed(() => run(session, `await tools.hostwc({ files: [${JSON.stringify(WC_FILE)}] })`)),
  },
];

async function main() {
  const { values } = benchArgs(import.meta.url, { options: { strict: { type: "boolean", default: false }, only: { type: "string" } } });
  const cases = CASES.filter((c) => values.only === undefined || c.name.includes(values.only));
  const cpu = os.cpus()[0]?.model ?? "unknown cpu";
  process.stderr.write(`ts-code-mode container bench — node ${process.version}, ${os.platform()} ${os.arch()}, ${cpu} ×${os.cpus().length}\n`);
  await buildImage();
  const rows = [];
  await withTempDir("tcm-bench-container-", async (dir) => {
    let session = null;
    try {
      for (const c of cases) {
        if (!c.fresh && !session) {
          session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "shared") }), executor: await executor(dir) });
          await session.start();
          await writeFile(WC_FILE, "one\ntwo\n");
          await run(session, `(await import("node:fs")).writeFileSync(${JSON.stringify(WC_FILE)}, "one\\ntwo\\n")`);
        }
        const samples = await measure((i) => c.sample({ session, dir }, i), { iterations: c.iterations, warmup: c.warmup });
        const row = resultRow({ name: c.name, executor: "container", iterations: c.iterations * (c.callsPerSample ?? 1), samples, budgetMs: c.budgetMs ?? undefined });
        printJsonLine(row);
        rows.push(row);
      }
    } finally {
      await session?.close();
      await rm(WC_FILE, { force: true });
    }
  });
  printTable(rows);
  if (values.strict && rows.some((r) => r.within_budget === false)) process.exitCode = 1;
}

await main();
