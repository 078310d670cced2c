/**
 * What the REPL engine keeps for the guest between runs is bounded in entries AND characters and
 * cleared by reset(): compiled scripts (a 1 MB snippet run 40 times with a new tail each time
 * would otherwise keep 40 MB), whatever the snippets are. A real ReplEngine running real prepared
 * snippets; only the cache's own counters are read.
 */
import { describe, expect, it } from "vitest";
import { prepareSnippet } from "../../src/execution/prepare.js";
import { MAX_CACHED_SCRIPT_CHARS, MAX_CACHED_SCRIPTS, ReplEngine } from "../../src/execution/repl/engine.js";

describe("ReplEngine compiled-script cache", () => {
  it("is bounded in characters and count, and reset() empties it", async () => {
    const engine = new ReplEngine({ call: () => Promise.resolve(undefined), onAsyncTimeout: "abandon" });
    const filler = `// ${"x".repeat(1_048_576)}\n`;
    for (let i = 0; i < 40; i++) {
      const r = await engine.run(prepareSnippet(`${filler}${i}`).script, 5_000);
      expect(r.value).toBe(i);
    }
    const held = engine.cachedScripts;
    expect(held.chars).toBeLessThanOrEqual(MAX_CACHED_SCRIPT_CHARS);
    expect(held.count).toBeGreaterThan(0);
    expect(held.count).toBeLessThan(40);
    for (let i = 0; i < MAX_CACHED_SCRIPTS + 50; i++) await engine.run(prepareSnippet(`${i} + 0.5`).script, 5_000);
    expect(engine.cachedScripts.count).toBeLessThanOrEqual(MAX_CACHED_SCRIPTS);
    engine.reset();
    expect(engine.cachedScripts).toEqual({ count: 0, chars: 0 });
    engine.dispose();
  });
});
