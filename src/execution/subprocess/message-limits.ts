/**
 * Size limits on what the child may send the host. They live in their own module, free of zod, so
 * the child can cut its own results to fit (a legitimate child never sends a message the host
 * refuses) without loading a validator at start-up. The host checks them in ./messages.ts.
 */
import type { ExecutionError, ExecutionResult } from "../protocol.js";
import { MAX_STREAM_CHARS } from "../output.js";
import { MAX_DISPLAY_CHARS, truncate } from "../result.js";
import { RUN_VALUE_LIMITS } from "../../values/limits.js";
import { walk } from "../../values/walk.js";

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

/**
 * The child's own result, cut to the limits: an error's text, and a value beyond RUN_VALUE_LIMITS,
 * which stays in the child (its bounded display still says what it was).
 */
export function fitResult(result: ExecutionResult): ExecutionResult {
  if (result.error) return { ...result, error: fitError(result.error) };
  if (result.value === undefined || result.value === null) return result;
  const { cut } = walk(result.value, RUN_VALUE_LIMITS, { mode: "data" });
  if (!cut) return result;
  const why = cut.reason === "bytes" ? `larger than ${RUN_VALUE_LIMITS.maxBytes / 1_048_576} MB` : cut.reason === "depth" ? `nested more than ${RUN_VALUE_LIMITS.maxDepth} levels deep` : `made of more than ${RUN_VALUE_LIMITS.maxNodes} values`;
  const at = cut.path === "$" ? "" : ` (at ${truncate(cut.path, 200)})`;
  const note = `[the run's value was not sent to the host: it is ${why}${at}; return a smaller value, e.g. a summary or a slice]`;
  return { ...result, value: undefined, display: withNote(result.display, note) };
}

/** `display` and then `note`, within MAX_DISPLAY_CHARS: the display's middle gives way, its own closing note stays. */
function withNote(display: string, note: string): string {
  const room = MAX_DISPLAY_CHARS - note.length - 1;
  if (display.length <= room) return `${display}\n${note}`;
  const tail = Math.min(500, Math.floor(room / 2));
  return `${display.slice(0, room - tail - 1)}…${display.slice(-tail)}\n${note}`;
}

/** An error's name, message and stack, cut to the limits; nothing else crosses. */
export function fitError(error: ExecutionError): ExecutionError {
  return {
    name: truncate(error.name, MESSAGE_LIMITS.errorName - MARKER_CHARS),
    message: truncate(error.message, MESSAGE_LIMITS.errorMessage - MARKER_CHARS),
    ...(error.stack === undefined ? {} : { stack: truncate(error.stack, MESSAGE_LIMITS.errorStack - MARKER_CHARS) }),
  };
}
