/**
 * Messages over a byte stream (the unix socket between host and container): each one is a 4-byte
 * big-endian length and the message in V8's serialization, the same format Node's IPC channel uses
 * in "advanced" mode for the subprocess child, so both carry exactly the same values.
 *
 * The reader is bounded: a length over `maxFrameBytes` is refused before anything is buffered
 * (the guest side is hostile; it could announce a 4 GB message), and bytes are kept as a list of
 * chunks until a frame is complete, so a slow trickle costs no quadratic copying.
 */
import { builtin } from "../../builtin-on-first-use.js";

export function encodeFrame(message: unknown): Buffer {
  const body = builtin("node:v8").serialize(message);
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}

export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private failed = false;

  constructor(
    private readonly maxFrameBytes: number,
    private readonly onMessage: (message: unknown) => void,
    /** The stream broke the format (too large, not deserializable); nothing more is read. */
    private readonly onError: (problem: string) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.failed) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (!this.failed && this.buffered >= 4) {
      const head = this.peek(4);
      const length = head.readUInt32BE(0);
      if (length > this.maxFrameBytes) return this.fail(`a message of ${length} bytes is over the limit of ${this.maxFrameBytes}`);
      if (this.buffered < 4 + length) return;
      const frame = this.take(4 + length).subarray(4);
      let message: unknown;
      try {
        message = builtin("node:v8").deserialize(frame);
      } catch (err) {
        return this.fail(`a message could not be read (${err instanceof Error ? err.message : String(err)})`);
      }
      this.onMessage(message);
    }
  }

  private fail(problem: string): void {
    this.failed = true;
    this.chunks = [];
    this.buffered = 0;
    this.onError(problem);
  }

  private peek(n: number): Buffer {
    const first = this.chunks[0];
    if (first && first.length >= n) return first.subarray(0, n);
    const all = Buffer.concat(this.chunks);
    this.chunks = [all];
    return all.subarray(0, n);
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.buffered -= n;
    return out;
  }
}
