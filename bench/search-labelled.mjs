/**
 * Search quality on the labelled queries of bench/data/search-queries.json (52 questions over the
 * example tools, workflows and skills that `ts-code-mode init` installs, written as people ask):
 * hit@1 and hit@3 per kind and overall, with the built-in model, through the same calls an agent's
 * code makes (tools.search, workflows.search, skills.search). Run by `npm run bench` after run.mjs;
 * `node bench/search-labelled.mjs [--json]` against an existing dist/. Target: hit@3 >= 0.95.
 * test/search/labelled.test.ts checks the same figures.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const LABELLED = JSON.parse(readFileSync(path.join(ROOT, "bench", "data", "search-queries.json"), "utf8"));

/** The names a kind's search ranks for `query`, best first, from the agent's side of a session. */
export async function ranked(session, kind, query) {
  const r = await session.run(`(await ${kind}.search(${JSON.stringify(query)}, { limit: 3 })).map((x) => x.name)`);
  if (!r.ok) throw new Error(`${kind}.search(${JSON.stringify(query)}): ${r.error?.message}`);
  return r.value;
}

/** { kind: { hit1, hit3, n, misses (not first) } } and the overall figures, for a started session. */
export async function evaluate(session) {
  const out = {};
  let n = 0;
  let h1 = 0;
  let h3 = 0;
  for (const kind of ["tools", "workflows", "skills"]) {
    const cases = LABELLED[kind];
    const misses = [];
    let hit1 = 0;
    let hit3 = 0;
    for (const { query, expect } of cases) {
      const names = await ranked(session, kind, query);
      if (names[0] === expect) hit1++;
      else misses.push({ query, expect, got: names });
      if (names.slice(0, 3).includes(expect)) hit3++;
    }
    out[kind] = { n: cases.length, hit1: hit1 / cases.length, hit3: hit3 / cases.length, misses };
    n += cases.length;
    h1 += hit1;
    h3 += hit3;
  }
  out.all = { n, hit1: h1 / n, hit3: h3 / n };
  return out;
}

async function main() {
  const { FileStorage, InProcessExecutor, Session } = await import(path.join(ROOT, "dist", "index.js"));
  const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-bench-labelled-"));
  try {
    execFileSync(process.execPath, [path.join(ROOT, "dist", "cli", "main.js"), "init"], { cwd: dir, stdio: "ignore" });
    const base = path.join(dir, ".code-mode");
    const session = new Session({
      storage: new FileStorage({ basePath: base }),
      executor: new InProcessExecutor({ toolsPath: path.join(base, "tools"), search: { embedder: "use-lite", readyTimeoutMs: 120_000, indexTimeoutMs: 120_000 } }),
    });
    try {
      const result = await evaluate(session);
      if (process.argv.includes("--json")) {
        console.log(JSON.stringify(result));
        return;
      }
      const pct = (x) => `${(x * 100).toFixed(0)}%`.padStart(5);
      console.log("search quality, labelled queries (bench/data/search-queries.json), built-in model");
      console.log("kind        queries  hit@1  hit@3");
      for (const kind of ["tools", "workflows", "skills", "all"]) console.log(`${kind.padEnd(11)} ${String(result[kind].n).padStart(7)}  ${pct(result[kind].hit1)}  ${pct(result[kind].hit3)}`);
      for (const kind of ["tools", "workflows", "skills"]) for (const m of result[kind].misses) console.log(`  not first (${kind}): "${m.query}" → ${m.got.join(", ")} (wanted ${m.expect})`);
      // With 3 example workflows and 2 skills, hit@3 there is certain: hit@1 is their figure.
      console.log("(the examples hold 7 tools, 3 workflows and 2 skills: for workflows and skills only hit@1 tells)");
      console.log(`target hit@3 >= 95%: ${result.all.hit3 >= 0.95 ? "met" : "MISSED"}`);
    } finally {
      await session.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
