/**
 * An agent run suspended at a durable code pause, and where the CLI keeps it between processes.
 *
 * When the entry agent's run_code pauses (a call inside the code needs approval) and nobody can
 * decide now (no terminal, no onApproval), the runtime ends the run with AgentRunPausedError: its
 * `state` is the conversation up to the model step that called run_code, the results of that
 * step's other tool calls, and the code run's continuation. `runtime.resume(state, decisions)` in
 * any later process resumes the code run (replayed from the ledger: its earlier calls are not made
 * again) and gives the model run_code's result, as if it had never stopped.
 *
 * The CLI stores the state at `<base>/agent-runs/<id>.json` (one atomic write; read back with a
 * size cap and checked field by field: the file is ours, but a file on disk is input like any other).
 */
import { readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { NotFoundError, ValidationError } from "../errors.js";
import { lazy } from "../lazy.js";
import type { PendingCall } from "../execution/protocol.js";
import { writeFileAtomic } from "../storage/atomic.js";

/** One tool call's result in the paused step, as the AI SDK's tool-result part takes it. */
export interface StepResult {
  toolCallId: string;
  toolName: string;
  output: { type: "text" | "error-text"; value: string };
}

export interface PausedAgentRun {
  version: 1;
  /** The paused code run's id: what `agent run --resume` takes. */
  id: string;
  /** The entry agent. */
  agent: string;
  /** The messages the model had been sent before the step that called run_code (no system prompt). */
  messages: unknown[];
  /** That step's assistant content: its text and tool calls. */
  assistant: unknown[];
  /** The step's other tool calls that ended (and run_code's, once the code run is resumed). */
  results: StepResult[];
  /** The paused run_code call; null once its code run went on and its result is in `results`. */
  code: { toolCallId: string; pending: PendingCall[]; continuation: string } | null;
  createdAt: string;
}

/** The entry agent's code run paused and nobody could decide now: `state` resumes it later. */
export class AgentRunPausedError extends Error {
  override readonly name = "AgentRunPausedError";
  constructor(readonly state: PausedAgentRun) {
    const n = state.code?.pending.length ?? 0;
    super(`agent ${state.agent} paused: ${n} call${n === 1 ? "" : "s"} in its code wait${n === 1 ? "s" : ""} for a decision (run ${state.id})`);
  }
}

/** Largest state file read back: a conversation, not a data store. */
const MAX_STATE_BYTES = 32 * 1024 * 1024;
const ID = /^[A-Za-z0-9_-]{1,128}$/;

// Module-level schemas are lazy: importing ts-code-mode evaluates no zod (test/perf/lazy-imports).
const stateSchema = lazy(() => {
  const pendingCall = z.object({ id: z.string(), tool: z.string(), callable: z.string().nullable(), args: z.unknown(), reason: z.string() });
  return z.object({
    version: z.literal(1),
    id: z.string().regex(ID),
    agent: z.string().min(1),
    messages: z.array(z.unknown()),
    assistant: z.array(z.unknown()),
    results: z.array(z.object({ toolCallId: z.string(), toolName: z.string(), output: z.object({ type: z.enum(["text", "error-text"]), value: z.string() }) })),
    code: z.object({ toolCallId: z.string(), pending: z.array(pendingCall).min(1), continuation: z.string().min(1) }).nullable(),
    createdAt: z.string(),
  });
});

/** A state as the runtime takes it back (from a file or an application's own store): checked, never trusted as is. */
export function checkPausedRun(value: unknown, where = "the paused run"): PausedAgentRun {
  const checked = stateSchema.safeParse(value);
  if (!checked.success) throw new ValidationError(`${where} is not a paused agent run: ${z.prettifyError(checked.error).replace(/\n+/g, " ")}`);
  return checked.data as PausedAgentRun;
}

export function pausedRunsDir(base: string): string {
  return path.join(base, "agent-runs");
}

function fileOf(base: string, id: string): string {
  if (!ID.test(id)) throw new ValidationError(`--resume: ${JSON.stringify(id.slice(0, 200))} is not a paused run id (letters, digits, - and _; the id the pause printed)`);
  return path.join(pausedRunsDir(base), `${id}.json`);
}

export async function savePausedRun(base: string, state: PausedAgentRun): Promise<string> {
  const file = fileOf(base, state.id);
  await writeFileAtomic(file, JSON.stringify(state));
  return file;
}

export async function loadPausedRun(base: string, id: string): Promise<PausedAgentRun> {
  const file = fileOf(base, id);
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) throw new NotFoundError(`no paused agent run ${id} in ${pausedRunsDir(base)} (it was resumed already, or the id is wrong)`);
  if (info.size > MAX_STATE_BYTES) throw new ValidationError(`${file} is ${info.size} bytes, more than a paused run may be (${MAX_STATE_BYTES})`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, "utf8"));
  } catch (err) {
    throw new ValidationError(`${file} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return checkPausedRun(parsed, file);
}

export async function removePausedRun(base: string, id: string): Promise<void> {
  await rm(fileOf(base, id), { force: true });
}
