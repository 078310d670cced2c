/**
 * Long sessions stay flat (issue 13, principle 2): 10,000 runs in one SubprocessExecutor session
 * leave the host's heap (after a full GC) and RSS on a plateau. The host is a real child `node`
 * process started with --expose-gc running the built package, so the measure covers only the
 * executor, not the test runner. Bounds are generous; the leak this guards against (a handler
 * attached to the child's exit promise on every run) added ~0.8 KB per run, ~6 MB here. Search is
 * lexical so that no embedding model loads in the middle of the measure.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";

const RUNS = 10_000;
const CHECKPOINT = 1_000;
const dist = pathToFileURL(path.resolve("dist/index.js")).href;

const HOST = `
import { FileStorage, Session, SubprocessExecutor } from ${JSON.stringify(dist)};
const [base] = process.argv.slice(2);
const session = new Session({ storage: new FileStorage({ basePath: base }), executor: new SubprocessExecutor({ search: { embedder: "lexical" } }) });
await session.start();
const snippets = ["1 + 1", "await null; 'x'", "console.log('out'); [1, 2, 3]"];
const points = [];
for (let i = 1; i <= ${RUNS}; i++) {
  const r = await session.run(snippets[i % snippets.length]);
  if (!r.ok) throw new Error("run failed: " + JSON.stringify(r.error));
  if (i % ${CHECKPOINT} === 0) {
    for (let g = 0; g < 3; g++) { global.gc(); await new Promise((r) => setImmediate(r)); }
    points.push({ runs: i, heap: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss });
  }
}
await session.close();
process.stdout.write(JSON.stringify(points) + "\\n");
`;

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "tcm-soak-"));
  writeFileSync(path.join(dir, "host.mjs"), HOST);
});

afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }));

it(`the host's heap and RSS reach a plateau over ${RUNS} subprocess runs`, () => {
  const p = spawnSync(process.execPath, ["--expose-gc", path.join(dir, "host.mjs"), path.join(dir, "base")], { encoding: "utf8", timeout: 300_000 });
  expect(p.stderr).toBe("");
  expect(p.status).toBe(0);
  const points = JSON.parse(p.stdout.trim().split("\n").at(-1)!) as { runs: number; heap: number; rss: number }[];
  expect(points).toHaveLength(RUNS / CHECKPOINT);
  // From the second checkpoint on (caches warm), 8,000 more runs: flat within 1.5 MB of heap and 40 MB of RSS.
  const warm = points[1]!;
  const last = points.at(-1)!;
  const heapGrowth = last.heap - warm.heap;
  const perRun = heapGrowth / (last.runs - warm.runs);
  expect(heapGrowth, `heap grew ${(heapGrowth / 1024).toFixed(0)} KB (${perRun.toFixed(0)} bytes per run): ${JSON.stringify(points)}`).toBeLessThan(1.5 * 1024 * 1024);
  expect(Math.max(...points.slice(1).map((pt) => pt.rss)) - warm.rss).toBeLessThan(40 * 1024 * 1024);
}, 320_000);
