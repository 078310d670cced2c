/**
 * What the run ledger costs (docs/durable-runs.md), in the in-process executor with a no-op tool so
 * that nothing but the ledger is measured:
 *
 *   ledger cost per tool call     (a run of N no-op calls, durable) − (the same run, not durable), / N
 *   pause → resume, 100 logged    session.resume of a run paused after 100 logged calls: verify the
 *                                 continuation, read the ledger, re-run the code serving 100 calls
 *                                 from it, run the approved call, log the outcome
 *
 * FileStorage always; RedisStorage too with --redis URL. Samples are interleaved; medians reported.
 *
 *   npm run build && node bench/ledger.mjs [--rounds 15] [--calls 200] [--redis redis://127.0.0.1:6379]
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { printJsonLine, printTable, resultRow, timed, withTempDir, noopAdapter } from "./lib.mjs";

const { approval, FileStorage, InProcessExecutor, RedisStorage, Session, ToolRegistry } = await import("../dist/index.js").catch((err) => {
  process.stderr.write(`bench: cannot load ../dist/index.js (${err.message}); build first: npm run build\n`);
  process.exit(2);
});

const { values } = parseArgs({ options: { rounds: { type: "string", default: "15" }, calls: { type: "string", default: "200" }, redis: { type: "string" } } });
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const SECRET = "bench-secret-0123456789abcdef0123456789abcdef";

function session(storage, durable) {
  const tools = new ToolRegistry();
  tools.register(noopAdapter());
  // noop.sleep20 stands for the call that needs a human: the approver says "pending".
  const middleware = [approval(() => "pending", { only: ["noop.sleep20"] })];
  return new Session({ storage, executor: new InProcessExecutor({ tools, middleware }), ...(durable ? { durable: { secret: SECRET } } : {}) });
}

const loop = (n) => `for (let i = 0; i < ${n}; i++) await tools.noop.ping(); 1`;
const PAUSING = `for (let i = 0; i < 100; i++) await tools.noop.ping(); await tools.noop.sleep20(); 2`;

await withTempDir("tcm-bench-ledger-", async (dir) => {
  const backends = [["file", () => new FileStorage({ basePath: path.join(dir, "file") })]];
  if (values.redis) backends.push(["redis", () => new RedisStorage({ url: values.redis, prefix: `bench-ledger-${process.pid}` })]);
  const rows = [];
  for (const [name, make] of backends) {
    const plain = session(make(), false);
    const durable = session(make(), true);
    await plain.run("1");
    await durable.run("1");
    const perCall = [];
    const resume = [];
    for (let r = 0; r < ROUNDS; r++) {
      const a = await timed(() => plain.run(loop(CALLS)));
      const b = await timed(() => durable.run(loop(CALLS)));
      perCall.push((b - a) / CALLS);
      const paused = await durable.run(PAUSING);
      if (paused.status !== "paused") throw new Error(`expected a pause, got ${JSON.stringify(paused.error)}`);
      resume.push(await timed(() => durable.resume(paused.continuation, paused.pending.map((p) => ({ id: p.id, decision: "approve" })))));
    }
    rows.push(resultRow({ name: `ledger cost per tool call (${name})`, executor: "in-process", iterations: ROUNDS, samples: perCall }));
    rows.push(resultRow({ name: `pause→resume, 100 logged calls (${name})`, executor: "in-process", iterations: ROUNDS, samples: resume, floorMs: 20 }));
    await plain.close();
    await durable.close();
  }
  for (const row of rows) printJsonLine(row);
  printTable(rows);
});
