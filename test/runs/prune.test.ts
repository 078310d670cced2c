/**
 * Pruning FileStorage's run ledger reads a header only for a run it removes (or one without a
 * stamp, once): a session's first durable run used to read every header of the ledger to rank
 * them. The bounds stay those of ranking every header by updatedAt. Header reads are counted at
 * the storage's "read" fault point, on a real FileStorage.
 */
import { mkdtemp, readdir, rm, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { FileStorage } from "../../src/index.js";
import { pruneRuns } from "../../src/runs/retention.js";
import { setFaultHook } from "../../src/storage/faults.js";
import type { RunHeader, RunStore } from "../../src/storage/runs.js";

let dir: string;
let store: RunStore;
const DAY = 86_400_000;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-prune-"));
  store = new FileStorage({ basePath: dir }).runs!;
});
afterEach(async () => {
  setFaultHook(undefined);
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** Run `i` last changed `i` days ago (so run-0 is the newest). */
const header = (i: number, now: number): RunHeader => {
  const at = new Date(now - i * DAY).toISOString();
  return { id: `run-${i}`, status: "completed", code: "1", createdAt: at, updatedAt: at, executor: "in-process", fingerprint: "f", seed: "0".repeat(32), calls: 0, bytes: 0, resumes: 0 };
};

/** Header files read while `fn` runs. */
async function headerReads<T>(fn: () => Promise<T>): Promise<{ value: T; reads: string[] }> {
  const reads: string[] = [];
  setFaultHook((point, target) => {
    if (point === "read" && path.basename(target) === "run.json") reads.push(path.basename(path.dirname(target)));
  });
  try {
    return { value: await fn(), reads };
  } finally {
    setFaultHook(undefined);
  }
}

test("the count and age bounds read only the headers of the runs they remove", async () => {
  const now = Date.now();
  for (let i = 0; i < 40; i++) await store.putHeader(header(i, now));
  const byCount = await headerReads(() => pruneRuns(store, { keep: 30 }));
  expect(byCount.value.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `run-${i + 30}`).sort());
  expect(byCount.reads.sort()).toEqual(byCount.value.sort());
  const byAge = await headerReads(() => pruneRuns(store, { olderThanMs: 25.5 * DAY }));
  expect(byAge.value.sort()).toEqual(["run-26", "run-27", "run-28", "run-29"]);
  expect(byAge.reads.sort()).toEqual(byAge.value.sort());
  const nothing = await headerReads(() => pruneRuns(store, { keep: 30, olderThanMs: 30 * DAY }));
  expect(nothing).toEqual({ value: [], reads: [] });
  expect((await store.list()).map((h) => h.id)).toEqual(Array.from({ length: 26 }, (_, i) => `run-${i}`));
});

test("a run changed since (a newer header) is ranked by its newest change; a dry run removes nothing", async () => {
  const now = Date.now();
  for (let i = 0; i < 5; i++) await store.putHeader(header(i, now));
  // run-4, the oldest, is resumed: its header is rewritten now.
  await store.putHeader({ ...header(4, now), updatedAt: new Date(now).toISOString() });
  expect(await pruneRuns(store, { keep: 3, dryRun: true })).toEqual(["run-2", "run-3"]);
  expect(await store.list()).toHaveLength(5);
  expect(await pruneRuns(store, { keep: 3 })).toEqual(["run-2", "run-3"]);
  expect((await store.list()).map((h) => h.id).sort()).toEqual(["run-0", "run-1", "run-4"]);
});

test("a run without a stamp (an older ledger) is read once and stamped; a stamp behind its header (a writer killed between them) is corrected, not obeyed", async () => {
  const now = Date.now();
  for (let i = 0; i < 6; i++) await store.putHeader(header(i, now));
  const stamps = path.join(dir, "runs", ".by-time");
  for (const name of await readdir(stamps)) if (name.endsWith("-run-3")) await unlink(path.join(stamps, name));
  // run-5's header rewritten now, its stamp never written: the stamps still say 5 days.
  await writeFile(path.join(dir, "runs", "run-5", "run.json"), JSON.stringify({ ...header(5, now), updatedAt: new Date(now).toISOString() }));
  const first = await headerReads(() => pruneRuns(store, { olderThanMs: 3.5 * DAY }));
  expect(first.value).toEqual(["run-4"]);
  expect(first.reads.sort()).toEqual(["run-3", "run-4", "run-5"]);
  const again = await headerReads(() => pruneRuns(store, { olderThanMs: 3.5 * DAY }));
  expect(again).toEqual({ value: [], reads: [] });
  expect((await store.list()).map((h) => h.id).sort()).toEqual(["run-0", "run-1", "run-2", "run-3", "run-5"]);
});
