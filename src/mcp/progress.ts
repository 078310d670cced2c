/**
 * Progress of a long tool call. When the client's request carries a progress token, the server
 * sends `notifications/progress` every `intervalMs` with the elapsed seconds, so a client that
 * resets its request timeout on progress (the SDK's `resetTimeoutOnProgress`) does not give up on
 * a run that is simply long. They are heartbeats: they say the call is alive and for how long it
 * has run. What the run prints goes out as logging notifications (streamOutput below).
 */
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { OutputStreamer, type OutputListener } from "../execution/output-stream.js";

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

/** Least time between two logging notifications of one call. */
export const LOG_INTERVAL_MS = 250;
/** Longest text of one logging notification, in characters. */
export const MAX_LOG_CHARS = 8_192;

export interface OutputLog {
  onOutput: OutputListener;
  /** Send what is gathered (before the call's reply); nothing is sent after. */
  close(): void;
}

/**
 * Streams a run's stdout/stderr as `notifications/message` (level info for stdout, warning for
 * stderr, logger "run_code") while it runs — only when the client sent a progress token, i.e.
 * asked to hear about this call. Bounded: at most one notification per LOG_INTERVAL_MS (plus the
 * first, at once), each at most MAX_LOG_CHARS, and at most `maxChars` in all per call, after which
 * one notice says the rest is in the reply. The reply still carries the (capped) output.
 */
export function streamOutput(extra: ToolExtra, maxChars: number): OutputLog | null {
  if (extra._meta?.progressToken === undefined) return null;
  let sent = 0;
  let silenced = false;
  const send = (level: "info" | "warning", data: string) => {
    extra.sendNotification({ method: "notifications/message", params: { level, logger: "run_code", data } }).catch(() => (silenced = true));
  };
  const streamer = new OutputStreamer(
    ({ stream, text }) => {
      if (silenced) return;
      const room = maxChars - sent;
      if (room <= 0) {
        silenced = true;
        send("warning", `[output streaming stopped after ${maxChars} characters; the reply carries the run's output]`);
        return;
      }
      const kept = text.length <= room ? text : text.slice(0, room);
      sent += kept.length;
      send(stream === "stdout" ? "info" : "warning", kept);
    },
    LOG_INTERVAL_MS,
    MAX_LOG_CHARS,
  );
  return { onOutput: ({ stream, text }) => streamer.push(stream, text), close: () => streamer.close() };
}
