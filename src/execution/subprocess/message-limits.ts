/**
 * Size limits on what the child may send the host. They live in their own module, free of zod, so
 * the child can cut its own results to fit (a legitimate child never sends a message the host
 * refuses) without loading a validator at start-up. The host checks them in ./messages.ts.
 */
import type { ExecutionError, ExecutionResult } from "../protocol.js";
import { MAX_STREAM_CHARS } from "../output.js";
import { MAX_DISPLAY_CHARS, truncate } from "../result.js";

/** Room for the "… [N more characters cut]" markers `truncate` and OutputBuffer append. */
const MARKER_CHARS = 100;

export const MESSAGE_LIMITS = {
  display: MAX_DISPLAY_CHARS + MARKER_CHARS,
  stream: MAX_STREAM_CHARS + MARKER_CHARS,
  errorName: 200,
  errorMessage: 20_000,
  errorStack: 20_000,
  /** Namespace and operation names of a call (the host's own names are far shorter). */
  ns: 64,
  op: 256,
  /** Positional arguments of one call; every namespace operation takes a handful. */
  args: 64,
} as const;

/** The child's own result, cut to the limits (only an error's text can be longer than them). */
export function fitResult(result: ExecutionResult): ExecutionResult {
  return result.error ? { ...result, error: fitError(result.error) } : result;
}

/** An error's name, message and stack, cut to the limits; nothing else crosses. */
export function fitError(error: ExecutionError): ExecutionError {
  return {
    name: truncate(error.name, MESSAGE_LIMITS.errorName - MARKER_CHARS),
    message: truncate(error.message, MESSAGE_LIMITS.errorMessage - MARKER_CHARS),
    ...(error.stack === undefined ? {} : { stack: truncate(error.stack, MESSAGE_LIMITS.errorStack - MARKER_CHARS) }),
  };
}
