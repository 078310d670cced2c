import { rm } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { FileStorage, InProcessExecutor, Session } from "../../src/index.js";
import { journalFixture, SECRET, type JournalFixture } from "./fixture.js";

const CODE = `
const counts = [];
for (let i = 1; i <= 5; i++) counts.push((await tools.journal.add({ line: "step " + i })).trim());
const paid = (await tools.journal.pay({ line: "pay 100" })).trim();
({ counts, paid, r: Math.random(), t: Date.now(), u: crypto.randomUUID() })
`;

describe("durable runs (in-process)", () => {
  let fx: JournalFixture;
  beforeEach(async () => {
    fx = await journalFixture();
  });
  afterEach(async () => {
    await rm(fx.dir, { recursive: true, force: true });
  });

  const open = () => new Session({ storage: new FileStorage({ basePath: fx.storage }), executor: new InProcessExecutor({ toolsPath: fx.tools }), durable: { secret: SECRET } });

  test("pauses at a needs_approval call and resumes without repeating the logged calls", async () => {
    const a = open();
    const paused = await a.run(CODE);
    expect(paused.status).toBe("paused");
    expect(paused.ok).toBe(false);
    expect(paused.pending).toEqual([{ id: "call-5", tool: "journal", callable: "pay", args: { line: "pay 100" }, reason: "payments need a human's approval" }]);
    expect(await fx.lines()).toHaveLength(5);
    await a.close();

    const b = open();
    const done = await b.resume(paused.continuation!, [{ id: "call-5", decision: "edit", args: { line: "pay 90" } }]);
    expect(done.error).toBeNull();
    expect(done.status).toBe("completed");
    expect(await fx.lines()).toEqual(["step 1", "step 2", "step 3", "step 4", "step 5", "pay 90"]);
    const v = done.value as { counts: string[]; paid: string };
    expect(v.counts).toEqual(["1", "2", "3", "4", "5"]);
    expect(v.paid).toBe("6");
    await expect(b.resume(paused.continuation!, [{ id: "call-5", decision: "approve" }])).rejects.toMatchObject({ name: "ContinuationUsedError" });
    await b.close();
  }, 60_000);
});
