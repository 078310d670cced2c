/**
 * What the REPL engine keeps between runs does not grow with the number of distinct snippets
 * (issue 35.7). A snippet compiled as its own `vm.Script` left ~0.6–1 KB in Node for good (not
 * freed with the Script, nor with the context), so 20,000 distinct snippets held ~20 MB; the engine
 * now compiles them through the context's eval behind one trampoline Script. A real ReplEngine
 * running real prepared snippets; the host heap is measured after full collections, as the soak
 * bench does (bench/soak.mjs), with a bound several times above what remains (~80 bytes) and below
 * what a Script per snippet keeps.
 */
import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { prepareSnippet } from "../../src/execution/prepare.js";
import { ReplEngine } from "../../src/execution/repl/engine.js";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

async function heapAfterGc(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
}

describe("ReplEngine: distinct snippets", () => {
  it("10,000 distinct snippets grow the heap by less than 300 bytes each (a Script per snippet kept over 600)", { timeout: 120_000 }, async () => {
    const engine = new ReplEngine({ call: () => Promise.resolve(undefined), onAsyncTimeout: "abandon" });
    const run = async (i: number) => {
      const r = await engine.run(prepareSnippet(`const v${i % 7} = ${i}; v${i % 7} * 2`).script, 5_000);
      expect(r.value).toBe(i * 2);
    };
    for (let i = 0; i < 1_500; i++) await run(i);
    const before = await heapAfterGc();
    const n = 10_000;
    for (let i = 1_500; i < 1_500 + n; i++) await run(i);
    const perSnippet = ((await heapAfterGc()) - before) / n;
    engine.dispose();
    expect(perSnippet).toBeLessThan(300);
  });

  it("errors still name snippet.ts and the agent's line, and a guest that replaced eval changes nothing", async () => {
    const engine = new ReplEngine({ call: () => Promise.resolve(undefined), onAsyncTimeout: "abandon" });
    expect((await engine.run(prepareSnippet("globalThis.eval = () => 'replaced'; 1").script, 5_000)).value).toBe(1);
    expect((await engine.run(prepareSnippet("2 + 2").script, 5_000)).value).toBe(4);
    const r = await engine.run(prepareSnippet("const a = 1;\nnull.boom;").script, 5_000);
    expect(r.error?.name).toBe("TypeError");
    expect(r.error?.stack ?? "").toMatch(/snippet\.ts:2/);
    expect((await engine.run(prepareSnippet("Object.getOwnPropertyNames(globalThis).filter((n) => n.startsWith('__tsCodeMode'))").script, 5_000)).value).toEqual([]);
    // A guest that took the slot's name for itself still runs snippets (each then compiled as its own Script).
    expect((await engine.run(prepareSnippet("Object.defineProperty(globalThis, '__tsCodeModeSnippet', { value: 1 }); 5").script, 5_000)).value).toBe(5);
    expect((await engine.run(prepareSnippet("6 * 7").script, 5_000)).value).toBe(42);
    // A synchronous loop is still stopped by the vm timeout.
    const loop = await engine.run(prepareSnippet("while (true) {}").script, 300);
    expect(loop.error?.name).toBe("TimeoutError");
    engine.dispose();
  });
});
