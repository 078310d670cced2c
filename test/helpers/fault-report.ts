/**
 * The crash and race trials are tests (`npm test` runs them at a scale a loaded CI machine finishes
 * in seconds) and the rows of `npm run faults` (scripts/faults.mjs runs the same test files with
 * TCM_FAULTS_SCALE and prints what they report here as a table). One copy of each trial, two sizes:
 * at the default faults scale (ISSUE_SCALE) every trial runs at least as many times as issue 35
 * measured its fault with (atIssueScale).
 */
import { appendFileSync } from "node:fs";

/** Trials and durations are multiplied by this (TCM_FAULTS_SCALE, default 1). */
export const FAULTS_SCALE = Math.max(1, Number(process.env.TCM_FAULTS_SCALE ?? "1") || 1);

/** `n` at the scale in force. */
export function scaled(n: number): number {
  return Math.round(n * FAULTS_SCALE);
}

/** The faults scale at which every trial is at least the size issue 35 measured at (`npm run faults`' default). */
export const ISSUE_SCALE = 5;

/**
 * A trial's count: `testCount` under `npm test` (scale 1, kept cheap: the suite is long enough), and
 * under a faults scale the larger of `testCount` scaled and the issue's count in proportion, so the
 * default scale (ISSUE_SCALE) runs at least `issueCount` (the trials or reads that showed the fault
 * in issue 35) and CI's scale 2 two fifths of it. A claim of "0 of N" is only as strong as N: at a
 * smaller N, a fault the issue saw in 5 of 110 trials could pass unseen.
 */
export function atIssueScale(testCount: number, issueCount: number): number {
  if (FAULTS_SCALE === 1) return testCount;
  return Math.max(scaled(testCount), Math.ceil((issueCount * FAULTS_SCALE) / ISSUE_SCALE));
}

/** One row of the faults table: what a trial counted. Absent columns are not measured by that trial. */
export interface FaultRow {
  trial: string;
  /** Operations or trials the row covers (reads, saves, kills, runs). */
  runs: number;
  absentReads?: number;
  lostAckedSaves?: number;
  appliedAfterFailure?: number;
  orphans?: number;
  innocentKilled?: number;
}

/** Appends the row to TCM_FAULTS_REPORT (JSON lines) when the faults script asked for one. */
export function reportFaults(row: FaultRow): void {
  const file = process.env.TCM_FAULTS_REPORT;
  if (file) appendFileSync(file, `${JSON.stringify(row)}\n`);
}
