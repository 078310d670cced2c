/**
 * Durable runs through `serve --durable` (the built CLI, real processes, a real redis-server): the
 * issue's "done when" over HTTP. A run of 50 journal calls pauses on server A at the payment, A is
 * killed, server B on the same Redis lists the run (GET /runs, GET /runs/{id}) and resumes it with
 * an edited payment (POST /runs/{id}/decisions); the first 49 calls are not repeated. Then the
 * refusals with their stable names and statuses, the SSE `paused` event, and RemoteExecutor, which
 * hands the pause through to its Session's caller.
 */
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, expect, test } from "vitest";
import { RemoteExecutor } from "../../src/execution/remote/executor.js";
import { Session } from "../../src/session.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";
import { api, ensureBuilt, startServe, TOKEN, type ServeProcess } from "../server/harness.js";
import { journalFixture, SECRET, type JournalFixture } from "./fixture.js";

const CODE = `
const counts = [];
for (let i = 1; i <= 49; i++) counts.push((await tools.journal.add({ line: "step " + i })).trim());
const paid = (await tools.journal.pay({ line: "pay 100" })).trim();
({ counts: counts.length, last: counts.at(-1), paid })
`;

let redis: RedisServer;
let fx: JournalFixture;
const prefix = uniquePrefix("durable-serve");
const servers: ServeProcess[] = [];
const env = { ...process.env, TS_CODE_MODE_RUNS_SECRET: SECRET };

function serve(extra: string[] = ["--durable"]): Promise<ServeProcess> {
  return startServe(["--token", TOKEN, "--redis", redis.url, "--prefix", prefix, "--tools", fx.tools, ...extra], { env }).then((s) => (servers.push(s), s));
}

async function sessionOn(server: ServeProcess): Promise<string> {
  const created = await api(server.url, "POST", "/sessions", { json: {} });
  expect(created.status).toBe(201);
  return (created.body as { id: string }).id;
}

beforeAll(async () => {
  await ensureBuilt();
  redis = await startRedis();
  fx = await journalFixture();
}, 180_000);
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await redis?.close();
  await rm(fx.dir, { recursive: true, force: true, maxRetries: 5 });
});

type Result = { ok: boolean; status?: string; runId?: string; pending?: unknown[]; continuation?: string; value?: unknown; error: { name: string } | null };

test("a run paused on one serve node is decided and resumed on another after the first is killed", async () => {
  const a = await serve();
  const b = await serve();
  const ran = await api(a.url, "POST", `/sessions/${await sessionOn(a)}/run`, { json: { code: CODE } });
  expect(ran.status).toBe(200);
  const paused = ran.body as Result;
  expect(paused.status).toBe("paused");
  expect(paused.pending).toEqual([{ id: "call-49", tool: "journal", callable: "pay", args: { line: "pay 100" }, reason: "payments need a human's approval" }]);
  expect(await fx.lines()).toHaveLength(49);
  await a.stop("SIGKILL");

  const listed = await api(b.url, "GET", "/runs");
  expect(listed.status).toBe(200);
  expect((listed.body as { runs: Array<{ id: string; status: string }> }).runs).toContainEqual(expect.objectContaining({ id: paused.runId, status: "paused", calls: 50 }));
  const shown = await api(b.url, "GET", `/runs/${paused.runId}`);
  expect(shown.status).toBe(200);
  const detail = shown.body as { run: { status: string }; calls: Array<{ state: string }>; pending: unknown[] };
  expect(detail.run.status).toBe("paused");
  expect(detail.pending).toEqual(paused.pending);
  expect(detail.calls.filter((c) => c.state === "applied")).toHaveLength(49);

  const decisions = [{ id: "call-49", decision: "edit", args: { line: "pay 90" } }];
  const resumed = await api(b.url, "POST", `/runs/${paused.runId}/decisions`, { json: { continuation: paused.continuation, decisions } });
  expect(resumed.status).toBe(200);
  const done = resumed.body as Result;
  expect(done.error).toBeNull();
  expect(done.status).toBe("completed");
  expect(done.value).toEqual({ counts: 49, last: "49", paid: "50" });
  expect(await fx.lines()).toEqual([...Array.from({ length: 49 }, (_, i) => `step ${i + 1}`), "pay 90"]);
  expect(((await api(b.url, "GET", `/runs/${paused.runId}`)).body as { run: { status: string } }).run.status).toBe("completed");

  // Refusals: used twice, altered, sent to another run's URL, a malformed decision, an unknown run, no token.
  const again = await api(b.url, "POST", `/runs/${paused.runId}/decisions`, { json: { continuation: paused.continuation, decisions } });
  expect([again.status, (again.body as { error: { name: string } }).error.name]).toEqual([409, "ContinuationUsedError"]);
  const altered = `${paused.continuation!.slice(0, -2)}AA`;
  const bad = await api(b.url, "POST", `/runs/${paused.runId}/decisions`, { json: { continuation: altered, decisions } });
  expect([bad.status, (bad.body as { error: { name: string } }).error.name]).toEqual([400, "ContinuationInvalidError"]);
  const elsewhere = await api(b.url, "POST", "/runs/another-run/decisions", { json: { continuation: paused.continuation, decisions } });
  expect([elsewhere.status, (elsewhere.body as { error: { name: string } }).error.name]).toEqual([400, "DecisionError"]);
  const malformed = await api(b.url, "POST", `/runs/${paused.runId}/decisions`, { json: { continuation: paused.continuation, decisions: [{ id: "call-49", decision: "maybe" }] } });
  expect([malformed.status, (malformed.body as { error: { name: string } }).error.name]).toEqual([400, "ValidationError"]);
  expect((await api(b.url, "GET", "/runs/no-such-run")).status).toBe(404);
  expect((await api(b.url, "GET", "/runs", { token: null })).status).toBe(401);
}, 240_000);

test("a rejected call reaches the code as a ToolError; a missing decision is refused and the run stays paused", async () => {
  const b = servers.at(-1)!;
  const code = `try { await tools.journal.pay({ line: "pay 5" }); "paid" } catch (e) { e.name + ": " + e.message }`;
  const paused = (await api(b.url, "POST", `/sessions/${await sessionOn(b)}/run`, { json: { code } })).body as Result;
  expect(paused.status).toBe("paused");
  const missing = await api(b.url, "POST", `/runs/${paused.runId}/decisions`, { json: { continuation: paused.continuation, decisions: [{ id: "call-9", decision: "approve" }] } });
  expect([missing.status, (missing.body as { error: { name: string } }).error.name]).toEqual([400, "DecisionError"]);
  const rejected = (await api(b.url, "POST", `/runs/${paused.runId}/decisions`, { json: { continuation: paused.continuation, decisions: [{ id: "call-0", decision: "reject", reason: "too much" }] } })).body as Result;
  expect(rejected.status).toBe("completed");
  expect(rejected.value).toBe("ToolError: tools.journal.pay was rejected by a reviewer: too much");
}, 120_000);

test("with Accept: text/event-stream a pause is a `paused` event before the result", async () => {
  const b = servers.at(-1)!;
  const res = await fetch(new URL(`/sessions/${await sessionOn(b)}/run`, b.url), {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ code: `console.log("before"); await tools.journal.pay({ line: "pay 1" })` }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  const events = [...text.matchAll(/event: (\w+)\ndata: (.*)\n/g)].map((m) => [m[1], JSON.parse(m[2]!) as Record<string, unknown>] as const);
  expect(events.map(([name]) => name)).toEqual(["output", "paused", "result"]);
  const paused = events[1]![1];
  expect(paused["pending"]).toEqual([expect.objectContaining({ id: "call-0", tool: "journal", callable: "pay" })]);
  expect(String(paused["continuation"])).toMatch(/^tcm1\./);
  expect(events[2]![1]["continuation"]).toBe(paused["continuation"]);
}, 120_000);

test("RemoteExecutor hands a durable server's pause to its caller; session.resume has the server resume it", async () => {
  const b = servers.at(-1)!;
  const storage = new RedisStorage({ url: redis.url, prefix });
  const session = new Session({ storage, executor: new RemoteExecutor({ url: b.url, token: TOKEN }) });
  try {
    const paused = await session.run(`await tools.journal.pay({ line: "pay 2" })`);
    expect(paused.status).toBe("paused");
    expect(paused.pending?.[0]?.id).toBe("call-0");
    // session.resume of a RemoteExecutor session: the server resumes it (POST /runs/{id}/decisions).
    const done = await session.resume(paused.continuation!, [{ id: "call-0", decision: "approve" }]);
    expect(done.status).toBe("completed");
    await expect(session.resume(paused.continuation!, [{ id: "call-0", decision: "approve" }])).rejects.toMatchObject({ name: "ContinuationUsedError" });
    expect(await fx.lines()).toContain("pay 2");
  } finally {
    await session.close();
    await storage.close();
  }
}, 120_000);

test("a server without --durable refuses decisions with 501 DurableRunsUnsupportedError; --durable without a key is a usage error", async () => {
  const plain = await serve([]);
  const refused = await api(plain.url, "POST", "/runs/some-run/decisions", { json: { continuation: "tcm1.x.y", decisions: [{ id: "call-0", decision: "approve" }] } });
  expect([refused.status, (refused.body as { error: { name: string } }).error.name]).toEqual([501, "DurableRunsUnsupportedError"]);
  const { TS_CODE_MODE_RUNS_SECRET: _omit, ...noKey } = env;
  await expect(startServe(["--no-auth", "--tools", fx.tools, "--durable"], { env: noKey })).rejects.toThrow(/--durable: Durable runs need a key/);
}, 120_000);
