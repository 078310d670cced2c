/**
 * `--durable`, `--resume` and `--decisions` of the command-line front ends (run, mcp, serve, agent
 * run): sessions that record their runs in the ledger, pause for approvals instead of waiting, and
 * resume from a continuation in a later process (docs/durable-runs.md).
 */
import { Option, type Command } from "commander";
import { continuationKey } from "../runs/continuation.js";
import type { Decision } from "../runs/recorder.js";
import { CliUsageError } from "./shared.js";

export interface DurableFlags {
  durable?: boolean;
}

export interface ResumeFlags extends DurableFlags {
  resume?: string;
  decisions?: string;
}

export function addDurableOption(cmd: Command, what: string): Command {
  return cmd.option("--durable", `${what} (continuations signed with TS_CODE_MODE_RUNS_SECRET, at least 32 characters, the same in every process that resumes)`);
}

/** `--resume CONTINUATION --decisions JSON`: go on with a paused run (implies --durable). */
export function addResumeOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option("--resume <continuation>", "go on with a paused run: the continuation its pause printed (implies --durable)"))
    .addOption(new Option("--decisions <json>", 'with --resume: one decision per pending call, e.g. \'[{"id":"call-3","decision":"approve"}]\' ("edit" takes args, "reject" a reason)'));
}

/** Refuses --durable before anything starts when no usable key is set. */
export function checkDurableKey(flag = "--durable"): void {
  try {
    continuationKey(undefined);
  } catch (err) {
    throw new CliUsageError(`${flag}: ${(err as Error).message}`);
  }
}

/** The decisions of --decisions, shaped as session.resume takes them (it checks them against the pending calls). */
export function parseDecisions(text: string | undefined): Decision[] {
  if (text === undefined) throw new CliUsageError('--resume needs --decisions: one per pending call, e.g. --decisions \'[{"id":"call-3","decision":"approve"}]\'');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliUsageError('--decisions: expected a JSON array, e.g. \'[{"id":"call-3","decision":"approve"}]\'');
  }
  if (!Array.isArray(parsed)) throw new CliUsageError('--decisions: expected a JSON array of { id, decision: "approve" | "edit" | "reject", args?, reason? }');
  return parsed as Decision[];
}

/** What a person reads after a pause, on stderr: how to go on. */
export function resumeHint(command: string, continuation: string, pendingIds: readonly string[]): string {
  const decisions = JSON.stringify(pendingIds.map((id) => ({ id, decision: "approve" })));
  return `To go on: ${command} --resume ${continuation} --decisions '${decisions}'`;
}
