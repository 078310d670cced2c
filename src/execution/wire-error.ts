/**
 * Errors as plain data. A namespace call that fails on the host reaches the guest as a `WireError`
 * and is rebuilt there as an Error of the guest's own realm (vm context, child process, sandbox),
 * so `err instanceof Error` and `err.name` work the same in every executor.
 */

export interface WireError {
  name: string;
  message: string;
  stack?: string;
  /** ToolError details, NotFoundError suggestions, ... copied as own properties of the rebuilt error. */
  details?: Record<string, unknown>;
}

/** Own properties worth carrying across (ToolError fields, NotFoundError suggestions). */
const DETAIL_KEYS = ["tool", "callable", "code", "recoverable", "exitCode", "status", "stderr", "suggestions", "suggestion", "context"] as const;

/** Turn anything thrown into a WireError; `prefix` (e.g. "tools.call") is put in front of the message. */
export function toWireError(err: unknown, prefix?: string): WireError {
  const base =
    err instanceof Error || (typeof err === "object" && err !== null && "message" in err)
      ? (err as { name?: unknown; message?: unknown; stack?: unknown })
      : { name: "Error", message: String(err) };
  const name = typeof base.name === "string" && base.name ? base.name : "Error";
  const raw = typeof base.message === "string" ? base.message : String(base.message);
  const message = prefix && !raw.startsWith(`${prefix}:`) ? `${prefix}: ${raw}` : raw;
  const out: WireError = { name, message };
  if (typeof base.stack === "string") out.stack = base.stack;
  const details: Record<string, unknown> = {};
  for (const key of DETAIL_KEYS) {
    const v = (err as Record<string, unknown> | null)?.[key];
    if (v !== undefined && typeof err === "object") details[key] = Array.isArray(v) ? [...v] : v;
  }
  if (Object.keys(details).length) out.details = details;
  return out;
}

/**
 * Rebuild a WireError with `ErrorCtor` (the guest realm's Error). The host stack is dropped: it
 * describes host internals, not the agent's code.
 */
export function fromWireError(wire: WireError, ErrorCtor: ErrorConstructor = Error): Error {
  const err = new ErrorCtor(wire.message);
  Object.defineProperty(err, "name", { value: wire.name, enumerable: false, configurable: true, writable: true });
  if (wire.details) for (const [k, v] of Object.entries(wire.details)) (err as unknown as Record<string, unknown>)[k] = v;
  return err;
}

export function isWireError(value: unknown): value is WireError {
  return typeof value === "object" && value !== null && typeof (value as WireError).name === "string" && typeof (value as WireError).message === "string";
}
