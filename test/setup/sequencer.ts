/**
 * Orders the test files so the run ends on short files: files that need a process of their own
 * first (a shared worker is kept only while the next file queued also shares one), then within
 * each group the longest first, by the durations recorded in durations.json (seconds, from a run
 * on the CI machine: `node scripts/test-durations.mjs report.json`). A file with no recorded
 * duration (a new one) goes first in its group: it may be long, and its time is then known
 * early. Without this, vitest on a clean clone orders by file size, and the matrix files (four
 * lines each, minutes of work) ran last.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const DURATIONS_PATH = new URL("./durations.json", import.meta.url);

function recordedDurations(): Map<string, number> {
  const raw: unknown = JSON.parse(readFileSync(DURATIONS_PATH, "utf8"));
  if (typeof raw !== "object" || raw === null) throw new Error(`${DURATIONS_PATH.pathname}: expected an object of file → seconds`);
  return new Map(Object.entries(raw).filter((e): e is [string, number] => typeof e[1] === "number"));
}

export class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = recordedDurations();
    const root = this.ctx.config.root;
    const seconds = (spec: TestSpecification): number => durations.get(path.relative(root, spec.moduleId).split(path.sep).join("/")) ?? Infinity;
    const ownProcess = (spec: TestSpecification): number => (spec.project.config.isolate === false ? 1 : 0);
    return [...files].sort((a, b) => ownProcess(a) - ownProcess(b) || seconds(b) - seconds(a) || (a.moduleId < b.moduleId ? -1 : 1));
  }
}
