/**
 * Progress of a long tool call. When the client's request carries a progress token, the server
 * sends `notifications/progress` every `intervalMs` with the elapsed seconds, so a client that
 * resets its request timeout on progress (the SDK's `resetTimeoutOnProgress`) does not give up on
 * a run that is simply long. The executors hand back stdout/stderr only with the result, so these
 * are heartbeats: they say the call is alive and for how long it has run, not what it printed.
 */
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Default time between two progress notifications. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 1_000;

/** Starts heartbeats for this request (nothing when the client sent no progress token); returns the stop function. */
export function startProgress(extra: ToolExtra, what: string, intervalMs: number): () => void {
  const token = extra._meta?.progressToken;
  if (token === undefined) return () => undefined;
  const startedAt = performance.now();
  const timer = setInterval(() => {
    const seconds = Math.round((performance.now() - startedAt) / 100) / 10;
    // `progress` must increase with every notification; the elapsed time does.
    extra
      .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: seconds, message: `${what}: ${seconds} s elapsed` } })
      .catch(() => clearInterval(timer));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
