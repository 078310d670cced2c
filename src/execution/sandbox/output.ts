/**
 * The sandbox's console output: the shared console (../output.ts, Node's formatting) writing into
 * buffers capped in BYTES (UTF-8), as the `maxOutputBytes` option promises. Beyond the cap the
 * text is cut, a marker says how much was dropped, and the run goes on.
 */
import { format, inspect } from "node:util";
import { OutputBuffer, type RunOutput } from "../output.js";
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

/** console.count / console.time labels kept at once, and the longest label kept (characters). */
export const MAX_CONSOLE_LABELS = 1_000;
export const MAX_LABEL_CHARS = 200;

export interface SandboxConsole {
  methods: Record<string, (...args: unknown[]) => void>;
  /** Forget the count and time labels (reset(), close()). */
  clear(): void;
}

/**
 * The sandbox's console on the host: the shared console's formatting, with every argument pruned
 * first (display.ts: a DAG or a wide, deep value renders in bounded time) and the label maps of
 * console.count/time bounded in entries and bytes (labels come from the guest; beyond the cap a
 * label is not tracked and the output says so). Cleared on reset() and close().
 */
export function createSandboxConsole(target: () => RunOutput | null): SandboxConsole {
  const counts = new Map<string, number>();
  const timers = new Map<string, number>();
  const pruned = (args: unknown[]) => args.map((a) => pruneForDisplay(a).value);
  const write = (stream: "stdout" | "stderr", text: string) => target()?.[stream].write(text);
  const out = (stream: "stdout" | "stderr") => (...args: unknown[]) => write(stream, `${format(...pruned(args))}\n`);
  const labelOf = (label: unknown): string => {
    const text = typeof label === "string" ? label : label === undefined ? "default" : format(pruneForDisplay(label).value);
    return text.length > MAX_LABEL_CHARS ? `${text.slice(0, MAX_LABEL_CHARS)}…` : text;
  };
  const room = (map: Map<string, number>, label: string, method: string): boolean => {
    if (map.has(label) || map.size < MAX_CONSOLE_LABELS) return true;
    write("stderr", `console.${method}: more than ${MAX_CONSOLE_LABELS} labels in use; "${label}" is not tracked\n`);
    return false;
  };
  const methods: Record<string, (...args: unknown[]) => void> = {
    log: out("stdout"),
    info: out("stdout"),
    debug: out("stdout"),
    error: out("stderr"),
    warn: out("stderr"),
    trace: (...args: unknown[]) => write("stderr", `Trace: ${format(...pruned(args))}\n`),
    dir: (value: unknown) => write("stdout", `${inspect(pruneForDisplay(value).value, { depth: 4 })}\n`),
    table: (value: unknown) => write("stdout", `${inspect(pruneForDisplay(value).value, { depth: 4 })}\n`),
    count: (label?: unknown) => {
      const key = labelOf(label);
      if (!room(counts, key, "count")) return;
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      write("stdout", `${key}: ${n}\n`);
    },
    time: (label?: unknown) => {
      const key = labelOf(label);
      if (room(timers, key, "time")) timers.set(key, performance.now());
    },
    timeEnd: (label?: unknown) => {
      const key = labelOf(label);
      const t = timers.get(key);
      if (t !== undefined) write("stdout", `${key}: ${(performance.now() - t).toFixed(3)}ms\n`);
      timers.delete(key);
    },
    assert: (cond: unknown, ...args: unknown[]) => {
      if (!cond) write("stderr", `Assertion failed${args.length ? `: ${format(...pruned(args))}` : ""}\n`);
    },
  };
  return {
    methods,
    clear: () => {
      counts.clear();
      timers.clear();
    },
  };
}
