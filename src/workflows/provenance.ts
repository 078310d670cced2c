/**
 * Workflow provenance: who saved a workflow, and the rule that keeps trust from leaking across
 * executors. A workflow is code; where it was written decides where it may run.
 *
 * - Executors declare a trust level. In-process and subprocess run the agent's code with Node's
 *   authority, so what they save is "trusted"; the sandbox exists to run code nobody vouches for,
 *   so what it saves is "untrusted". An executor that declares nothing counts as untrusted.
 * - A workflow with no provenance (a hand-written file, or one saved before provenance existed, or
 *   by the host through a bare WorkflowLibrary such as `ts-code-mode init`) is trusted: a person
 *   put it there.
 * - An untrusted session runs any workflow (it runs it in the sandbox, without authority). A
 *   trusted session refuses to run an untrusted workflow (UntrustedWorkflowError) until the host
 *   approves it, which re-records it as trusted.
 * - An untrusted session cannot replace or delete a trusted workflow (WorkflowProtectedError).
 */
import type { WorkflowRecord } from "../storage/protocol.js";

/** What a workflow record says about who saved it. */
export type WorkflowProvenance = NonNullable<WorkflowRecord["provenance"]>;
export type TrustLevel = WorkflowProvenance["trust"];

/** Who is acting on the library: the executor of the session and its trust level. */
export interface WorkflowPrincipal {
  trust: TrustLevel;
  /** The executor's kind ("in-process", "subprocess", "sandbox", ...). */
  executor: string;
}

/**
 * What a trusted session does when asked to run an untrusted workflow: "refuse" (the default), or
 * ask the host — a function that sees the workflow (source included) and returns true to approve
 * it, which re-records it as trusted, or false to refuse.
 */
export type UntrustedWorkflowPolicy = "refuse" | ((workflow: UntrustedWorkflowInfo) => boolean | Promise<boolean>);

/** What an approval callback sees. */
export interface UntrustedWorkflowInfo {
  name: string;
  source: string;
  provenance: WorkflowProvenance;
}

/** A trusted session was asked to run a workflow that an untrusted session saved. */
export class UntrustedWorkflowError extends Error {
  override readonly name = "UntrustedWorkflowError";
}

/** An untrusted session tried to replace or delete a workflow saved by a trusted one (or by hand). */
export class WorkflowProtectedError extends Error {
  override readonly name = "WorkflowProtectedError";
}

/** The effective trust of a stored workflow: no provenance means a person wrote it. */
export function trustOf(record: Pick<WorkflowRecord, "provenance">): TrustLevel {
  return record.provenance?.trust ?? "trusted";
}

/** One line for people: `untrusted (saved by a sandbox session at 2026-…)`. */
export function describeProvenance(provenance: WorkflowProvenance | undefined): string {
  if (!provenance) return "trusted (hand-written: no provenance recorded)";
  return `${provenance.trust} (saved by a ${clip(provenance.executor)} session at ${clip(provenance.savedAt)})`;
}

/** Stored strings may have been edited by hand: a message quotes a bounded, one-line piece. */
function clip(text: string): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > 80 ? `${line.slice(0, 80)}…` : line;
}

/** The UntrustedWorkflowError message: who saved it and the two ways to approve it. */
export function untrustedMessage(name: string, provenance: WorkflowProvenance, runner: string): string {
  return (
    `Workflow "${name}" was saved by an untrusted ${clip(provenance.executor)} session at ${clip(provenance.savedAt)}, ` +
    `so this trusted ${runner} session will not run it with its authority. Review its source ` +
    `(ts-code-mode workflows show ${name}), then approve it with \`ts-code-mode workflows approve ${name}\` ` +
    `or session.approveWorkflow(${JSON.stringify(name)}); or run it from a sandbox session.`
  );
}

/** The WorkflowProtectedError message for `replace` or `delete`. */
export function protectedMessage(name: string, provenance: WorkflowProvenance | undefined, action: "replace" | "delete", actor: string): string {
  const hint = action === "replace" ? " Save yours under another name." : "";
  return `Workflow "${name}" is ${describeProvenance(provenance)}; an untrusted ${actor} session cannot ${action} it.${hint}`;
}
