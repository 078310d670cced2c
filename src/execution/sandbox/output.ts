/**
 * The sandbox's console output: the shared console (../output.ts, Node's formatting) writing into
 * buffers capped in BYTES (UTF-8), as the `maxOutputBytes` option promises. Beyond the cap the
 * text is cut, a marker says how much was dropped, and the run goes on.
 */
import { createGuestConsole, OutputBuffer, type GuestConsole, type RunOutput } from "../output.js";
import type { OutputStreamer } from "../output-stream.js";
import { pruneForDisplay } from "./display.js";

export const DEFAULT_MAX_OUTPUT_BYTES = 1_000_000;

export class ByteCappedOutput extends OutputBuffer {
  private readonly chunks: string[] = [];
  private bytes = 0;
  private droppedBytes = 0;

  constructor(
    private readonly maxBytes: number,
    onKept?: (text: string) => void,
  ) {
    super(Number.POSITIVE_INFINITY, onKept);
  }

  override write(text: string): void {
    const room = this.maxBytes - this.bytes;
    const size = Buffer.byteLength(text, "utf8");
    if (size <= room) {
      this.chunks.push(text);
      this.bytes += size;
      this.onKept?.(text);
      return;
    }
    if (room > 0) {
      // Cut at a character boundary that fits (a UTF-8 character is at most 4 bytes).
      let kept = text.slice(0, room);
      while (Buffer.byteLength(kept, "utf8") > room) kept = kept.slice(0, Math.max(0, kept.length - Math.ceil((Buffer.byteLength(kept, "utf8") - room) / 4)));
      const keptBytes = Buffer.byteLength(kept, "utf8");
      this.chunks.push(kept);
      this.bytes += keptBytes;
      this.droppedBytes += size - keptBytes;
      this.onKept?.(kept);
    } else {
      this.droppedBytes += size;
    }
  }

  override text(): string {
    const body = this.chunks.join("");
    if (!this.droppedBytes) return body;
    return `${body}\n… [output limit of ${this.maxBytes} bytes reached (maxOutputBytes); ${this.droppedBytes} more bytes of output cut]\n`;
  }
}

/** A run's two buffers, each streaming what it keeps to `streamer` when there is one (RunOptions.onOutput). */
export function newRunOutput(maxBytes: number, streamer: OutputStreamer | null = null): RunOutput {
  return {
    stdout: new ByteCappedOutput(maxBytes, streamer ? (t) => streamer.push("stdout", t) : undefined),
    stderr: new ByteCappedOutput(maxBytes, streamer ? (t) => streamer.push("stderr", t) : undefined),
  };
}

/**
 * The sandbox's console: the shared console (../output.ts), whose formatting runs on the host, so
 * every argument is pruned first (display.ts: a DAG or a wide, deep value renders in bounded time).
 */
export function createSandboxConsole(target: () => RunOutput | null): GuestConsole {
  return createGuestConsole(target, (value) => pruneForDisplay(value).value);
}
