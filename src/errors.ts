/**
 * Errors shared by every layer. Each has a stable `name` so callers (and agents, which only see
 * `error.name` in an ExecutionResult) can branch on it without instanceof across realms.
 */

/** A name (workflow, artifact, tool) that is not acceptable; nothing touched disk or network. */
export class InvalidNameError extends Error {
  override readonly name = "InvalidNameError";
}

/** Something asked for by name does not exist. `suggestions` lists the closest existing names. */
export class NotFoundError extends Error {
  override readonly name = "NotFoundError";
  constructor(
    message: string,
    readonly suggestions: readonly string[] = [],
  ) {
    super(message);
  }
}

/**
 * A copy of `err` — same class, name and fields — whose message is `message` (the stack's first
 * line follows). For adding context to an error that may be shared: a cached load failure reaches
 * every caller as one object, so editing it in place would change what all of them see, once more
 * per call.
 */
export function withMessage<E extends Error>(err: E, message: string): E {
  const copy = Object.create(Object.getPrototypeOf(err) as object) as E;
  for (const key of Reflect.ownKeys(err)) {
    const descriptor = Object.getOwnPropertyDescriptor(err, key);
    if (descriptor) Object.defineProperty(copy, key, descriptor);
  }
  Object.defineProperty(copy, "message", { value: message, writable: true, enumerable: false, configurable: true });
  const stack = typeof err.stack === "string" ? err.stack.replace(err.message, message) : `${err.name}: ${message}`;
  Object.defineProperty(copy, "stack", { value: stack, writable: true, enumerable: false, configurable: true });
  return copy;
}

/** Input that failed validation at a boundary (bad options, bad YAML, bad arguments). */
export class ValidationError extends Error {
  override readonly name = "ValidationError";
}

/**
 * What kind of storage failure: "QUOTA_EXCEEDED" (a size limit refused the write; nothing was
 * written), "OUTCOME_UNKNOWN" (the write may or may not have been applied, e.g. Redis did not
 * answer in time; the next call on the same storage settles it, so retrying the same call is safe
 * and leaves that call's value), "IO" for everything else (unreachable server, disk error, ...).
 */
/** DEADLINE: a write of a run whose time ran out first; it was not applied (storage/write-deadline.ts). */
export type StorageErrorCode = "IO" | "QUOTA_EXCEEDED" | "OUTCOME_UNKNOWN" | "DEADLINE";

export interface StorageErrorOptions extends ErrorOptions {
  code?: StorageErrorCode;
  /** QUOTA_EXCEEDED: the limit and the size that exceeded it, in bytes. */
  limit?: number;
  size?: number;
}

/** The backing store failed (I/O error, unreachable server, quota). `code` says which. */
export class StorageError extends Error {
  override readonly name = "StorageError";
  readonly code: StorageErrorCode;
  readonly limit?: number;
  readonly size?: number;
  constructor(message: string, options: StorageErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? "IO";
    if (options.limit !== undefined) this.limit = options.limit;
    if (options.size !== undefined) this.size = options.size;
  }
}

export type ToolErrorCode =
  | "INVALID_INPUT"
  | "MISSING_PARAM"
  | "INVALID_PATH"
  | "NOT_FOUND"
  | "CONFLICT"
  | "PRECONDITION"
  | "TIMEOUT"
  | "PERMISSION"
  | "INTERNAL"
  | "DEPENDENCY";

const RECOVERABLE: ReadonlySet<ToolErrorCode> = new Set([
  "INVALID_INPUT",
  "MISSING_PARAM",
  "INVALID_PATH",
  "NOT_FOUND",
  "CONFLICT",
  "PRECONDITION",
]);

export interface ToolErrorInit {
  tool: string;
  callable: string | null;
  code: ToolErrorCode;
  message: string;
  /** Exit code of a CLI tool, HTTP status of an HTTP tool. */
  exitCode?: number;
  status?: number;
  /** Bounded excerpt of the tool's stderr / response body. */
  stderr?: string;
  /** Overrides the code's default (a toolable tool may say so in its envelope). */
  recoverable?: boolean;
  /** What the agent could do instead (toolable envelopes). */
  suggestion?: string;
  /** Structured detail from the tool (toolable envelopes); JSON data. */
  context?: Record<string, unknown>;
}

/** A tool call failed. `recoverable` says whether the agent can fix its input and retry. */
export class ToolError extends Error {
  override readonly name = "ToolError";
  readonly tool: string;
  readonly callable: string | null;
  readonly code: ToolErrorCode;
  readonly recoverable: boolean;
  readonly exitCode?: number;
  readonly status?: number;
  readonly stderr?: string;
  readonly suggestion?: string;
  readonly context?: Record<string, unknown>;

  constructor(init: ToolErrorInit) {
    super(init.message);
    this.tool = init.tool;
    this.callable = init.callable;
    this.code = init.code;
    this.recoverable = init.recoverable ?? RECOVERABLE.has(init.code);
    if (init.exitCode !== undefined) this.exitCode = init.exitCode;
    if (init.status !== undefined) this.status = init.status;
    if (init.stderr !== undefined) this.stderr = init.stderr;
    if (init.suggestion !== undefined) this.suggestion = init.suggestion;
    if (init.context !== undefined) this.context = init.context;
  }

  static isRecoverable(code: ToolErrorCode): boolean {
    return RECOVERABLE.has(code);
  }
}

/**
 * Names longer than this are not compared (no real name is that long, and edit distance costs the
 * product of the lengths: a 30,000,000-character name must not stall the host).
 */
const MAX_COMPARED_NAME = 256;
/** Candidates looked at for one hint (a store may hold many thousands of names). */
const MAX_CANDIDATES = 10_000;

/** Closest names to `wanted` by edit distance, for "Did you mean" hints. Bounded work for any input. */
export function closestNames(wanted: string, candidates: Iterable<string>, max = 3): string[] {
  if (wanted.length > MAX_COMPARED_NAME) return [];
  const w = wanted.toLowerCase();
  const scored: Array<[string, number]> = [];
  let looked = 0;
  for (const c of candidates) {
    if (++looked > MAX_CANDIDATES) break;
    if (c.length > MAX_COMPARED_NAME) continue;
    const lc = c.toLowerCase();
    const limit = Math.max(2, Math.floor(Math.max(w.length, c.length) / 3));
    const contains = lc.includes(w) || w.includes(lc);
    // The distance is at least the difference in length: skip the quadratic part when it cannot qualify.
    if (!contains && Math.abs(w.length - c.length) > limit) continue;
    const d = editDistance(w, lc);
    if (d <= limit || contains) scored.push([c, d]);
  }
  return scored
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .slice(0, max)
    .map(([c]) => c);
}

/** "Did you mean: a, b?" or "" — appended to not-found messages. */
export function didYouMean(wanted: string, candidates: Iterable<string>): string {
  const close = closestNames(wanted, candidates);
  return close.length ? ` Did you mean: ${close.join(", ")}?` : "";
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/**
 * A remote session is gone: its server stopped, restarted, did not answer in time, or closed the
 * session (idle timeout). Variables are lost; stored data is not. Open a new session to go on.
 * Also a run's error when the subprocess child it shared with other sessions (sharedChild) was
 * ended for another session's sake; that session goes on in a fresh context.
 */
export class SessionLostError extends Error {
  override readonly name = "SessionLostError";
}

/**
 * The container engine (podman's or Docker's API socket, or DOCKER_HOST) could not be reached: it
 * is not running, the socket is missing, or this user may not use it. The message names where it
 * looked and how to start it.
 */
export class ContainerEngineError extends Error {
  override readonly name = "ContainerEngineError";
}
