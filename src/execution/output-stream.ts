/**
 * A run's output while it runs (RunOptions.onOutput), and its cancellation (RunOptions.signal).
 *
 * Output is batched: the first write after a quiet spell is delivered at once (a client sees that
 * the run started printing), later writes are gathered for OUTPUT_FLUSH_MS or until
 * MAX_CHUNK_CHARS, so a console.log loop costs a few dozen deliveries a second, not one per line.
 * Only the text a run's output buffer keeps is streamed, so what a run streams is bounded by the
 * same caps as its result's stdout/stderr. A listener that throws does not disturb the run.
 */
import type { ExecutionError } from "./protocol.js";

export interface OutputChunk {
  stream: "stdout" | "stderr";
  text: string;
}

export type OutputListener = (chunk: OutputChunk) => void;

/** Longest quiet time between a write and its delivery. */
export const OUTPUT_FLUSH_MS = 50;
/** Largest chunk delivered at once (and sent over the subprocess IPC channel), in characters. */
export const MAX_CHUNK_CHARS = 65_536;

export class OutputStreamer {
  private queue: OutputChunk[] = [];
  private size = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastFlush = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(
    private readonly sink: OutputListener,
    private readonly intervalMs = OUTPUT_FLUSH_MS,
    private readonly maxChunk = MAX_CHUNK_CHARS,
  ) {}

  push(stream: OutputChunk["stream"], text: string): void {
    if (this.closed || text.length === 0) return;
    const last = this.queue[this.queue.length - 1];
    if (last?.stream === stream) last.text += text;
    else this.queue.push({ stream, text });
    this.size += text.length;
    if (this.size >= this.maxChunk) return this.flush();
    if (this.timer) return;
    const wait = this.lastFlush + this.intervalMs - performance.now();
    if (wait <= 0) return this.flush();
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref?.();
  }

  /** Deliver what is gathered now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.lastFlush = performance.now();
    const chunks = this.queue;
    this.queue = [];
    this.size = 0;
    for (const { stream, text } of chunks) {
      for (let i = 0; i < text.length; i += this.maxChunk) {
        try {
          this.sink({ stream, text: text.slice(i, i + this.maxChunk) });
        } catch {
          // The listener's problem, not the run's.
        }
      }
    }
  }

  /** The run ended: deliver the rest (before its result is returned) and take no more. */
  close(): void {
    this.flush();
    this.closed = true;
  }
}

/** A streamer for `listener`, or null when nobody listens (then nothing is gathered). */
export function streamerFor(listener: OutputListener | undefined): OutputStreamer | null {
  return listener ? new OutputStreamer(listener) : null;
}

/** The stable name of the error of a run stopped through RunOptions.signal. */
export const CANCELLED_ERROR_NAME = "CancelledError";

export function cancelledError(detail: string): ExecutionError {
  return { name: CANCELLED_ERROR_NAME, message: `The run was cancelled. ${detail}` };
}

/** Calls `fn` once when `signal` aborts (at once if it already has); returns the function that stops listening. */
export function onAbort(signal: AbortSignal | undefined, fn: () => void): () => void {
  if (!signal) return () => undefined;
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  signal.addEventListener("abort", fn, { once: true });
  return () => signal.removeEventListener("abort", fn);
}
