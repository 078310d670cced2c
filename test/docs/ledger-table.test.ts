/**
 * docs/durable-runs.md's ledger figures are the bench's (node bench/ledger.mjs --write-docs), not
 * typed by hand: the block between the bench's markers has its header line and one row per
 * executor and storage the bench measures, in the shape it writes.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";

const DOC = path.join(import.meta.dirname, "..", "..", "docs", "durable-runs.md");
const START = "<!-- bench:ledger table: written by `node bench/ledger.mjs --write-docs` -->";
const END = "<!-- bench:ledger table end -->";

it("the ledger's figures table is the bench's block: its header, 5 executors × 3 storages", async () => {
  const doc = await readFile(DOC, "utf8");
  const block = doc.slice(doc.indexOf(START) + START.length, doc.indexOf(END));
  expect(doc.indexOf(START)).toBeGreaterThan(0);
  const lines = block.trim().split("\n");
  expect(lines[0]).toMatch(/^\(\d{4}-\d\d-\d\d \d\d:\d\d UTC, node v\d+\.\d+\.\d+, .*load average at start [\d. ]+, medians of \d+ rounds of \d+ calls/);
  const rows = lines.filter((l) => /^\| (in-process|subprocess|sandbox|sandbox-deno|container) \|/.test(l));
  expect(rows.map((r) => r.split(" | ").slice(0, 2).join(" | "))).toEqual(
    ["in-process", "subprocess", "sandbox", "sandbox-deno", "container"].flatMap((e) => ["memory", "file", "redis"].map((s) => `| ${e} | ${s}`)),
  );
  for (const row of rows) expect(row).toMatch(/^\| [\w-]+ \| \w+ \| [\d.]+ µs \| -?[\d.]+ µs \| -?[\d.]+ ms \| ([\d.]+|–) \|$/);
});
