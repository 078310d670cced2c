/**
 * Search quality on the labelled queries (bench/data/search-queries.json, 52 questions over the
 * example tools, workflows and skills) with the real built-in model, through the calls an agent's
 * code makes: the target, hit@3 >= 0.95, and a floor under hit@1 so a ranking regression
 * shows. The model is deterministic: these figures do not depend on the machine.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileStorage, InProcessExecutor, Session } from "../../src/index.js";
import { cleanup, cli, ensureBuilt, tempDir } from "../cli/harness.js";
// The bench's own evaluation, so the test and `npm run bench` report the same figures.
import { evaluate } from "../../bench/search-labelled.mjs";

let dir: string;
let session: Session;

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  expect((await cli(["init"], { cwd: dir })).code).toBe(0);
  const base = path.join(dir, ".code-mode");
  session = new Session({
    storage: new FileStorage({ basePath: base }),
    executor: new InProcessExecutor({ toolsPath: path.join(base, "tools"), search: { embedder: "use-lite", readyTimeoutMs: 120_000, indexTimeoutMs: 120_000 } }),
  });
}, 180_000);
afterAll(async () => {
  await session?.close();
  await cleanup(dir);
});

describe("labelled search queries over the examples", () => {
  it("hit@3 >= 0.95 overall, hit@1 >= 0.8, every kind searched as the agent searches it", async () => {
    const result = await evaluate(session);
    expect(result.all.n).toBeGreaterThanOrEqual(50);
    expect(result.all.hit3).toBeGreaterThanOrEqual(0.95);
    expect(result.all.hit1).toBeGreaterThanOrEqual(0.8);
    for (const kind of ["tools", "workflows", "skills"] as const) expect(result[kind].hit3, kind).toBeGreaterThanOrEqual(0.9);
  }, 300_000);
});
