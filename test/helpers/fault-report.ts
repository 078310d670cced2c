/**
 * The crash and race trials are tests (`npm test` runs them at a scale a loaded CI machine finishes
 * in seconds) and the rows of `npm run faults` (scripts/faults.mjs runs the same test files with
 * TCM_FAULTS_SCALE, the scale, and prints what they report here as a table). One copy of
 * each trial, two sizes.
 */
import { appendFileSync } from "node:fs";

/** Trials and durations are multiplied by this (TCM_FAULTS_SCALE, default 1). */
export const FAULTS_SCALE = Math.max(1, Number(process.env.TCM_FAULTS_SCALE ?? "1") || 1);

/** `n` at the scale in force. */
export function scaled(n: number): number {
  return Math.round(n * FAULTS_SCALE);
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
