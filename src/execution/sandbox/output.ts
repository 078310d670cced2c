/**
 * The sandbox's console output: the shared console (../output.ts, Node's formatting) writing into
 * buffers capped in BYTES (UTF-8), as the `maxOutputBytes` option promises. Beyond the cap the
 * text is cut, a marker says how much was dropped, and the run goes on.
 */
import { OutputBuffer, type RunOutput } from "../output.js";

export const DEFAULT_MAX_OUTPUT_BYTES = 1_000_000;

export class ByteCappedOutput extends OutputBuffer {
  private readonly chunks: string[] = [];
  private bytes = 0;
  private droppedBytes = 0;

  constructor(private readonly maxBytes: number) {
    super(Number.POSITIVE_INFINITY);
  }

  override write(text: string): void {
    const room = this.maxBytes - this.bytes;
    const size = Buffer.byteLength(text, "utf8");
    if (size <= room) {
      this.chunks.push(text);
      this.bytes += size;
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

export function newRunOutput(maxBytes: number): RunOutput {
  return { stdout: new ByteCappedOutput(maxBytes), stderr: new ByteCappedOutput(maxBytes) };
}
