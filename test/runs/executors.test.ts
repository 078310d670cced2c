/**
 * Durable runs in every executor that records them: the same pause, decisions and replay, with the
 * guest's clock and random numbers replayed (values read before a logged call reach its arguments,
 * so a replay that read other values would diverge).
 */
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FileStorage, InProcessExecutor, SandboxExecutor, Session, SubprocessExecutor, type Executor } from "../../src/index.js";
import { journalFixture, SECRET, type JournalFixture } from "./fixture.js";

const CODE = `
const seen = { t: Date.now(), d: new Date().getTime(), r: Math.random(), u: typeof crypto === "undefined" ? "no crypto" : crypto.randomUUID() };
await tools.journal.add({ line: JSON.stringify(seen) });
const outcomes = await Promise.allSettled([tools.journal.pay({ line: "p1" }), tools.journal.pay({ line: "p2" })]);
({ seen, outcomes: outcomes.map((o) => o.status === "fulfilled" ? "ok" : o.reason.name + ": " + o.reason.message) })
`;

const executors: Array<[string, (tools: string) => Executor]> = [
  ["in-process", (tools) => new InProcessExecutor({ toolsPath: tools })],
  ["subprocess", (tools) => new SubprocessExecutor({ toolsPath: tools })],
  ["sandbox", (tools) => new SandboxExecutor({ toolsPath: tools })],
];

describe.each(executors)("durable runs in the %s executor", (_kind, make) => {
  let fx: JournalFixture;
  beforeAll(async () => {
    fx = await journalFixture();
  });
  afterAll(async () => {
    await rm(fx.dir, { recursive: true, force: true, maxRetries: 5 });
  });
  const open = () => new Session({ storage: new FileStorage({ basePath: fx.storage }), executor: make(fx.tools), durable: { secret: SECRET } });

  test('the replay prologue runs before the code, not inside it: the code\'s own "use strict" still applies', async () => {
    // It used to be prepended to the code (and prepared with it, per run): the directive then came second and did nothing.
    const session = open();
    try {
      const r = await session.run('"use strict"; (function () { return this === undefined; })()', { timeoutMs: 60_000 });
      expect(r.error ?? null).toBeNull();
      expect(r.value).toBe(true);
    } finally {
      await session.close();
    }
  }, 120_000);

  test("Promise.all's pending calls are decided together; clock and random numbers replay", async () => {
    const a = open();
    const paused = await a.run(CODE);
    expect(paused.error?.name).toBe("RunPaused");
    expect(paused.pending?.map((p) => [p.id, p.args])).toEqual([["call-1", { line: "p1" }], ["call-2", { line: "p2" }]]);
    const first = JSON.parse((await fx.lines())[0]!) as Record<string, unknown>;
    expect(first["u"]).toMatch(_kind === "sandbox" ? /^no crypto$/ : /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await a.close();

    const b = open();
    const done = await b.resume(paused.continuation!, [
      { id: "call-1", decision: "approve" },
      { id: "call-2", decision: "reject", reason: "too much" },
    ]);
    expect(done.error).toBeNull();
    const value = done.value as { seen: Record<string, unknown>; outcomes: string[] };
    // The replay read the same clock and random values as the first pass (else call-0 would diverge).
    expect(value.seen).toEqual(first);
    expect(value.outcomes[0]).toBe("ok");
    expect(value.outcomes[1]).toMatch(/^ToolError: tools\.journal\.pay was rejected by a reviewer: too much/);
    expect(await fx.lines()).toHaveLength(2);
    // After the durable run the realm's own Date and Math.random are back.
    await b.close();
  }, 120_000);
});
