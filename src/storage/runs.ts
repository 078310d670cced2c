/**
 * The run ledger as storage sees it: one header record per run and one record per namespace call
 * (`seq` = the order in which the host received it). Storage keeps JSON records and knows nothing
 * of executors or of what the calls mean; src/runs/ records, replays and reverts them.
 *
 * Commit points are those of every other record: FileStorage writes each record with one atomic
 * rename, RedisStorage each write in one MULTI transaction. A claim (`claim(id, token)`) succeeds
 * once per token across every process sharing the storage (exclusive create / SET NX), which is
 * what makes a continuation usable only once.
 */
import { ValidationError } from "../errors.js";
import type { JsonValue } from "./protocol.js";

/** What became of a logged call. A call that ran and failed is `applied` with an `error`. */
export type CallState = "applied" | "pending" | "rejected" | "reverted";
export const CALL_STATES: readonly CallState[] = ["applied", "pending", "rejected", "reverted"];

export type RunStatus = "running" | "paused" | "completed" | "failed" | "rolled-back";

/** A value in the ts-code-mode codec (see execution/remote/wire.ts): tagged JSON + base64 buffers. */
export interface EncodedValue {
  json: string;
  buffers: string[];
}

export interface LedgerEntry {
  seq: number;
  ns: string;
  op: string;
  args: EncodedValue;
  state: CallState;
  startedAt: string;
  endedAt?: string;
  /** The reply, for an applied call that succeeded. */
  result?: EncodedValue;
  /** The failure, for an applied call that threw (or a rejected one: why). */
  error?: { name: string; message: string; details?: Record<string, JsonValue> };
  /** Date.now() values the guest read since the previous call (replayed in order on resume). */
  tape?: number[];
  /** Pending: why the call waits for a decision. Rejected: the reviewer's reason. */
  reason?: string;
  /** The decision that settled a pending call. */
  decision?: { decision: "approve" | "edit" | "reject"; at: string; args?: EncodedValue };
  /** A revert's outcome (state "reverted"), or why it could not be reverted. */
  revert?: { ok: boolean; at: string; detail: string };
  /** Bytes of args + result as stored; the ledger's size bound counts these. */
  bytes: number;
}

export interface RunHeader {
  id: string;
  status: RunStatus;
  /** The agent's code, as run (it is run again on resume). */
  code: string;
  createdAt: string;
  updatedAt: string;
  executor: string;
  /** Fingerprint of the tool set the run was recorded against: a resume against other tools is refused. */
  fingerprint: string;
  /** Seed of the guest's Math.random / crypto.randomUUID in this run (hex). */
  seed: string;
  /** Calls logged, and their bytes. */
  calls: number;
  bytes: number;
  /** How many times the run was resumed. */
  resumes: number;
  /** Nonce of the continuation issued at the last pause (a resume claims it), and when it expires. */
  continuation?: { nonce: string; expiresAt: string };
  /** How the run (or its last resume) ended. */
  outcome?: { ok: boolean; error?: { name: string; message: string }; display?: string };
  /** Free-form, JSON-safe details a front end may attach (who asked, from where). */
  labels?: Record<string, JsonValue>;
}

export interface RunListOptions {
  /** Newest first; at most this many (default all). */
  limit?: number;
}

export interface RunStore {
  /** Create or replace a run's header (one commit point). */
  putHeader(header: RunHeader): Promise<void>;
  getHeader(id: string): Promise<RunHeader | null>;
  /** Create or replace entries by seq; all of one call land together (Redis: one transaction). */
  putEntries(id: string, entries: readonly LedgerEntry[]): Promise<void>;
  /** The run's entries by seq, ascending; [] when none. */
  entries(id: string): Promise<LedgerEntry[]>;
  /** Headers, newest (by updatedAt) first. */
  list(options?: RunListOptions): Promise<RunHeader[]>;
  /** Removes the run and its entries; true when something was removed. */
  delete(id: string): Promise<boolean>;
  /** True the first time `token` is claimed for run `id`, false every later time, in any process. */
  claim(id: string, token: string): Promise<boolean>;
  /**
   * Removes the runs past the bounds (src/runs/retention.ts pruneRuns, which falls back to list()
   * and delete() without it), reading less than every header; returns the ids removed (or that would be).
   */
  prune?(bounds: RunPruneBounds): Promise<string[]>;
}

export interface RunPruneBounds {
  /** Remove runs whose last change (updatedAt) is before this (epoch ms). */
  cutoffMs?: number;
  /** Keep at most this many runs, the most recently changed. */
  keep?: number;
  /** Report what would go, change nothing. */
  dryRun?: boolean;
}

/** Run ids are what src/runs generates (UUIDs); anything else is refused before touching storage. */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

export function validateRunId(id: unknown): string {
  if (typeof id !== "string" || !RUN_ID.test(id)) throw new ValidationError(`Invalid run id ${JSON.stringify(String(id).slice(0, 80))}: expected letters, digits, "-" or "_" (at most 64), as runs list shows`);
  return id;
}

export function validateClaimToken(token: unknown): string {
  if (typeof token !== "string" || !TOKEN.test(token)) throw new ValidationError("Invalid claim token: expected 1 to 128 letters, digits, - or _");
  return token;
}

/** Reads a stored header, or throws naming where it was when it is not one. */
export function parseRunHeader(text: string, where: string): RunHeader {
  const v = parseObject(text, where);
  if (typeof v["id"] !== "string" || typeof v["status"] !== "string" || typeof v["code"] !== "string" || typeof v["updatedAt"] !== "string") {
    throw new ValidationError(`${where} is not a run header (id, status, code, updatedAt missing)`);
  }
  return v as unknown as RunHeader;
}

export function parseLedgerEntry(text: string, where: string): LedgerEntry {
  return checkLedgerEntry(parseObject(text, where), where);
}

/** A ledger entry already parsed from JSON (a batch file), checked as parseLedgerEntry does. */
export function checkLedgerEntry(raw: unknown, where: string): LedgerEntry {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new ValidationError(`${where} holds something that is not a ledger entry`);
  const v = raw as Record<string, unknown>;
  if (typeof v["seq"] !== "number" || typeof v["ns"] !== "string" || typeof v["op"] !== "string" || !CALL_STATES.includes(v["state"] as CallState)) {
    throw new ValidationError(`${where} is not a ledger entry (seq, ns, op, state)`);
  }
  return v as unknown as LedgerEntry;
}

function parseObject(text: string, where: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new ValidationError(`${where} is not JSON`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new ValidationError(`${where} is not a JSON object`);
  return v as Record<string, unknown>;
}
