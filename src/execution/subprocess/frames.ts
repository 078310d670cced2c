/**
 * The framed channel to a guest that is not Node (the Python guest): a frame is a 4-byte
 * big-endian length and that many bytes of UTF-8 JSON, host → guest on the child's fd 3 and guest
 * → host on its fd 4 (pipes; no network port). JSON cannot hold everything a namespace call
 * carries, so such values travel as one-key tagged objects:
 *
 *   {"$bytes": "<base64>"}   Uint8Array (and Buffer, ArrayBuffer views)  ↔ Python bytes
 *   {"$int": "<digits>"}     bigint, and integers beyond 2^53            ↔ Python int
 *   {"$float": "nan"|"inf"|"-inf"}                                       ↔ Python float
 *   {"$dict": [[k, v], ...]} an object whose one key is a tag (so it is not read as one)
 *
 * The guest runs the agent's code with full authority, so every frame it sends is hostile: its
 * length is checked before it is buffered (MAX_FRAME_BYTES) and its content is validated by the
 * caller like any other guest message (messages.ts).
 */
import type { Readable, Writable } from "node:stream";

/** Largest frame the guest may send; beyond it the guest is treated as broken. */
export const MAX_FRAME_BYTES = 64 * 1_048_576;
/** Deepest nesting encoded for the guest; host values are plain data far shallower than this. */
const MAX_DEPTH = 200;
const TAGS = new Set(["$bytes", "$int", "$float", "$dict"]);

export function encodeFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(toTagged(message, 0)), "utf8");
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

/** A value as tagged JSON data. What JSON and the tags cannot hold (functions, symbols) is dropped like JSON.stringify drops it. */
function toTagged(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new RangeError(`value nested more than ${MAX_DEPTH} levels deep`);
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : { $float: Number.isNaN(value) ? "nan" : value > 0 ? "inf" : "-inf" };
    case "bigint":
      return { $int: value.toString() };
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (value === null) return null;
  if (ArrayBuffer.isView(value)) return { $bytes: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") };
  if (value instanceof ArrayBuffer) return { $bytes: Buffer.from(value).toString("base64") };
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Array.isArray(value)) return value.map((v) => toTagged(v, depth + 1) ?? null);
  if (value instanceof Set) return [...value].map((v) => toTagged(v, depth + 1) ?? null);
  const entries = value instanceof Map ? [...value.entries()].map(([k, v]) => [String(k), v] as const) : Object.entries(value as object);
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) {
    const tagged = toTagged(v, depth + 1);
    if (tagged !== undefined) out[k] = tagged;
  }
  const keys = Object.keys(out);
  if (keys.length === 1 && TAGS.has(keys[0] as string)) return { $dict: Object.entries(out) };
  return out;
}

/** JSON.parse reviver undoing the tags. */
function untag(_key: string, value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.length !== 1) return value;
  const key = keys[0] as string;
  const raw = (value as Record<string, unknown>)[key];
  if (key === "$bytes" && typeof raw === "string") return new Uint8Array(Buffer.from(raw, "base64"));
  if (key === "$int" && typeof raw === "string" && /^-?\d{1,10000}$/.test(raw)) return BigInt(raw);
  if (key === "$float" && typeof raw === "string") return raw === "nan" ? Number.NaN : raw === "-inf" ? -Infinity : raw === "inf" ? Infinity : value;
  if (key === "$dict" && Array.isArray(raw)) {
    const out: Record<string, unknown> = {};
    for (const pair of raw) if (Array.isArray(pair) && typeof pair[0] === "string") out[pair[0]] = pair[1];
    return out;
  }
  return value;
}

/**
 * Reads frames from `input` and writes frames to `output`. `onFrame` gets each decoded frame;
 * `onViolation` is told once when the guest sends something that is not a frame (too long, not
 * JSON), after which nothing more is read.
 */
export class FrameChannel {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private broken = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly onFrame: (message: unknown) => void,
    private readonly onViolation: (problem: string) => void,
  ) {
    // A write to a guest that died fails with EPIPE: the exit handler reports that, not a crash here.
    output.on("error", () => undefined);
    input.on("error", () => undefined);
    input.on("data", (chunk: Buffer) => this.take(chunk));
  }

  send(message: unknown): void {
    if (this.output.destroyed || !this.output.writable) throw new Error("the executor process is not running");
    this.output.write(encodeFrame(message));
  }

  private take(chunk: Buffer): void {
    if (this.broken) return;
    this.buffered.push(chunk);
    this.bufferedBytes += chunk.length;
    while (this.bufferedBytes >= 4) {
      // Join chunks only once a whole frame is there: a large frame arrives in many chunks.
      const first = this.buffered[0] as Buffer;
      const length = (first.length >= 4 ? first : Buffer.concat(this.buffered)).readUInt32BE(0);
      if (length > MAX_FRAME_BYTES) return this.violate(`a frame of ${length} bytes (at most ${MAX_FRAME_BYTES})`);
      if (this.bufferedBytes < 4 + length) return;
      const head = this.buffered.length === 1 ? first : Buffer.concat(this.buffered);
      const body = head.subarray(4, 4 + length);
      const rest = head.subarray(4 + length);
      this.buffered = rest.length ? [rest] : [];
      this.bufferedBytes = rest.length;
      let message: unknown;
      try {
        message = JSON.parse(body.toString("utf8"), untag);
      } catch {
        return this.violate("a frame that is not JSON");
      }
      this.onFrame(message);
      if (this.broken) return;
    }
  }

  private violate(problem: string): void {
    this.broken = true;
    this.buffered = [];
    this.bufferedBytes = 0;
    this.input.pause();
    this.onViolation(problem);
  }
}
