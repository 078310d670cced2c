#!/usr/bin/env node
// Writes test/setup/durations.json (seconds per test file, which the test sequencer uses to start
// the longest files first) from a vitest JSON report:
//
//   npx vitest run --reporter=default --reporter=json --outputFile=/tmp/report.json
//   node scripts/test-durations.mjs /tmp/report.json
//
// Record it from a run on the CI kind of machine (2 cores, loaded); only the order matters.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const [reportPath] = process.argv.slice(2);
if (!reportPath) {
  console.error("usage: node scripts/test-durations.mjs REPORT.json");
  process.exit(2);
}
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const report = JSON.parse(readFileSync(reportPath, "utf8"));
const out = {};
for (const file of report.testResults ?? []) {
  if (typeof file.startTime !== "number" || typeof file.endTime !== "number") continue;
  out[path.relative(root, file.name).split(path.sep).join("/")] = Math.round((file.endTime - file.startTime) / 100) / 10;
}
const sorted = Object.fromEntries(Object.entries(out).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)));
writeFileSync(path.join(root, "test/setup/durations.json"), JSON.stringify(sorted, null, 1) + "\n");
console.log(`test/setup/durations.json: ${Object.keys(sorted).length} files`);
