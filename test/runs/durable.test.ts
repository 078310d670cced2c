import { rm } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { approval, FileStorage, InProcessExecutor, Session, type ToolMiddleware } from "../../src/index.js";
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
    await rm(fx.dir, { recursive: true, force: true, maxRetries: 5 });
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

  const pause = async (session: Session, code = CODE) => {
    const paused = await session.run(code);
    expect(paused.status).toBe("paused");
    return paused.continuation!;
  };
  const approve = [{ id: "call-5", decision: "approve" as const }];

  test("refuses altered, foreign-key, expired and cross-workspace continuations with stable names", async () => {
    const a = open();
    const token = await pause(a);
    const [v, payload, sig] = token.split(".");
    const altered = `${v}.${Buffer.from(Buffer.from(payload!, "base64url").toString().replace(/"exp":\d+/, '"exp":99999999999999')).toString("base64url")}.${sig}`;
    await expect(a.resume(altered, approve)).rejects.toMatchObject({ name: "ContinuationInvalidError" });
    await expect(a.resume("not a continuation", approve)).rejects.toMatchObject({ name: "ContinuationInvalidError" });
    const otherKey = new Session({ storage: new FileStorage({ basePath: fx.storage }), executor: new InProcessExecutor({ toolsPath: fx.tools }), durable: { secret: `${SECRET}-other` } });
    await expect(otherKey.resume(token, approve)).rejects.toMatchObject({ name: "ContinuationInvalidError" });
    const otherWorkspace = new Session({ storage: new FileStorage({ basePath: fx.storage, workspaceId: "tenant-b" }), executor: new InProcessExecutor({ toolsPath: fx.tools }), durable: { secret: SECRET } });
    await expect(otherWorkspace.resume(token, approve)).rejects.toMatchObject({ name: "ContinuationScopeError" });
    const otherStorage = new Session({ storage: new FileStorage({ basePath: `${fx.storage}-2` }), executor: new InProcessExecutor({ toolsPath: fx.tools }), durable: { secret: SECRET } });
    await expect(otherStorage.resume(token, approve)).rejects.toMatchObject({ name: "ContinuationScopeError" });
    // Decisions must answer exactly the pending calls.
    await expect(a.resume(token, [])).rejects.toMatchObject({ name: "DecisionError" });
    await expect(a.resume(token, [{ id: "call-9", decision: "approve" }])).rejects.toMatchObject({ name: "DecisionError" });
    // Nothing above used the continuation up: it still resumes once, then never again.
    expect((await a.resume(token, approve)).status).toBe("completed");
    await expect(a.resume(token, approve)).rejects.toMatchObject({ name: "ContinuationUsedError" });
    await Promise.all([a, otherKey, otherWorkspace, otherStorage].map((s) => s.close()));

    const short = new Session({ storage: new FileStorage({ basePath: fx.storage }), executor: new InProcessExecutor({ toolsPath: fx.tools }), durable: { secret: SECRET, continuationTtlMs: 1 } });
    const expiring = await pause(short);
    await new Promise((r) => setTimeout(r, 20));
    await expect(short.resume(expiring, approve)).rejects.toMatchObject({ name: "ContinuationExpiredError" });
    await short.close();
  }, 60_000);

  test("code that takes another path on resume ends with ReplayDivergenceError naming the call", async () => {
    const code = `await tools.journal.add({ line: process.env.TCM_PATH ?? "a" }); await tools.journal.pay({ line: "x" }); 1`;
    const a = open();
    const token = await pause(a, code);
    process.env["TCM_PATH"] = "b";
    try {
      const r = await a.resume(token, [{ id: "call-1", decision: "approve" }]);
      expect(r.ok).toBe(false);
      expect(r.error?.name).toBe("ReplayDivergenceError");
      expect(r.error?.message).toMatch(/call #0: it now calls tools\.call with arguments .*"b".* where the ledger has tools\.call with arguments .*"a"/);
      // The diverged resume ran nothing: the journal still has the first pass's line only.
      expect(await fx.lines()).toEqual(["a"]);
    } finally {
      delete process.env["TCM_PATH"];
      await a.close();
    }
  }, 60_000);

  test("rollback reverts applied calls that declare a revert and lists the rest", async () => {
    const a = open();
    const token = await pause(a);
    const done = await a.resume(token, approve);
    expect(await fx.lines()).toContain("pay 100");
    const report = await a.rollback(done.runId!);
    expect(report.reverted.map((r) => [r.id, r.callable, r.by])).toEqual([["call-5", "pay", { callable: "unpay", args: { line: "pay 100" } }]]);
    expect(report.irreversible.map((r) => r.id)).toEqual(["call-4", "call-3", "call-2", "call-1", "call-0"]);
    expect(await fx.lines()).not.toContain("pay 100");
    const storage = new FileStorage({ basePath: fx.storage });
    expect((await storage.runs.getHeader(done.runId!))?.status).toBe("rolled-back");
    expect((await storage.runs.entries(done.runId!))[5]?.state).toBe("reverted");
    await a.close();
  }, 60_000);

  test("outside a durable run a needs_approval call is refused, saying how to allow it", async () => {
    const plain = new Session({ storage: new FileStorage({ basePath: fx.storage }), executor: new InProcessExecutor({ toolsPath: fx.tools }) });
    const r = await plain.run(`await tools.journal.pay({ line: "x" })`);
    expect(r.error?.message).toMatch(/needs approval \(payments need a human's approval\); this run cannot wait for one/);
    expect(await fx.lines()).toEqual([]);
    await plain.close();
  }, 60_000);

  test('an approver answering "pending" pauses the run; the resumed call is not asked again', async () => {
    const asked: string[] = [];
    const middleware = [approval((c) => (asked.push(String(c.args["line"])), "pending"), { only: ["journal.add"] })];
    const a = new Session({ storage: new FileStorage({ basePath: fx.storage }), executor: new InProcessExecutor({ toolsPath: fx.tools, middleware }), durable: { secret: SECRET } });
    const paused = await a.run(`(await tools.journal.add({ line: "x" })).trim()`);
    expect(paused.pending).toEqual([{ id: "call-0", tool: "journal", callable: "add", args: { line: "x" }, reason: "journal.add needs approval" }]);
    expect(await fx.lines()).toEqual([]);
    const done = await a.resume(paused.continuation!, [{ id: "call-0", decision: "approve" }]);
    expect(done.value).toBe("1");
    expect(asked).toEqual(["x"]);
    await a.close();
  }, 60_000);

  test("a call that ends after its run timed out is not logged: the ledger holds nothing the run did not report", async () => {
    let ended!: () => void;
    const finished = new Promise<void>((resolve) => (ended = resolve));
    // Holds the call past the run's deadline, whatever the run's signal says, then lets it go on.
    const slow: ToolMiddleware = async (_ctx, next) => {
      await new Promise((r) => setTimeout(r, 1_500));
      try {
        return await next();
      } finally {
        ended();
      }
    };
    const storage = new FileStorage({ basePath: fx.storage });
    const a = new Session({ storage, executor: new InProcessExecutor({ toolsPath: fx.tools, middleware: [slow] }), durable: { secret: SECRET } });
    const r = await a.run(`await tools.journal.add({ line: "late" }); 1`, { timeoutMs: 300 });
    expect(r.error?.name).toBe("TimeoutError");
    await finished;
    // Past the ledger's write delay: a late entry would be on disk by now.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await storage.runs.entries(r.runId!)).toEqual([]);
    expect((await storage.runs.getHeader(r.runId!))?.status).toBe("failed");
    await a.close();
  }, 60_000);
});
