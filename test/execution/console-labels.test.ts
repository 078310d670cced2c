/**
 * Issue 32: console.count/console.time labels are kept by the host as copies. A label cut from a
 * 20 MB string (or a slice the guest passed) used to keep the whole string alive as long as the
 * label was remembered (up to 1,000 labels): the host heap grew ~20 MB per label, OOM after a few
 * runs. Measured on the host's heap after a full GC, through the in-process executor, which hands
 * the guest's own string to the host's console. (The sandbox's labels arrive as strings decoded
 * from the boundary's JSON, which V8 does not share with a bigger string.)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, describe, expect, it } from "vitest";
import type { Executor } from "../../src/execution/protocol.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const heapAfterGc = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 5 });
});

const RUNS = 8;
const MB = 1_048_576;

describe.each<[string, () => Executor, string]>([
  // In-process: the label is the guest's string itself — here a 12-character slice of 20 MB.
  ["in-process", () => new InProcessExecutor({ defaultTimeoutMs: 60_000 }), `const big = "x".repeat(20_000_000) + RUN; console.count(big.slice(-12)); console.time(big.slice(-13)); console.count(big); 1`],
])("console labels through the %s executor", (_name, make, code) => {
  it(`${RUNS} runs with labels cut from big strings leave the host heap where it was`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "tcm-labels-"));
    dirs.push(dir);
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: make() });
    await session.start();
    try {
      // One run first, so what every run allocates once (caches, compiled code) is in the baseline.
      expect((await session.run(code.replace("RUN", `"warm"`))).error ?? null).toBeNull();
      const before = heapAfterGc();
      for (let i = 0; i < RUNS; i++) {
        const r = await session.run(code.replace("RUN", String(i)));
        expect(r.error ?? null).toBeNull();
      }
      const grown = (heapAfterGc() - before) / MB;
      // Pinned, the labels held ≥ RUNS × 20 MB; copies hold a few KB.
      expect(grown).toBeLessThan(RUNS * 2);
    } finally {
      await session.close();
    }
  });
});
