/**
 * The guest's `console`: log/info/debug go to stdout, error/warn to stderr, formatted like Node's
 * console (util.format). Output goes to whichever run is current; each stream is capped so a
 * snippet printing in a loop cannot exhaust the host's memory.
 */
import { format, inspect } from "node:util";
import { MAX_OUTPUT_CHARS } from "../values/limits.js";
import { BoundedCache } from "./bounded-cache.js";
import type { OutputStreamer } from "./output-stream.js";

/** Per stream, per run. Beyond it the text is cut and a marker says how much was dropped. */
export const MAX_STREAM_CHARS = MAX_OUTPUT_CHARS;

/**
 * console.count / console.time labels kept per console (a console lives until reset()/close()):
 * at most this many labels of each kind, a label used as a key is cut to MAX_LABEL_CHARS, and the
 * oldest label is forgotten first. A loop over fresh labels must not grow the host's memory.
 */
export const MAX_CONSOLE_LABELS = 1_000;
export const MAX_LABEL_CHARS = 1_000;

export class OutputBuffer {
  private parts: string[] = [];
  private size = 0;
  private dropped = 0;

  /** `onKept` is told each piece of text the buffer keeps (streaming a run's output as it runs). */
  constructor(
    private readonly limit = MAX_STREAM_CHARS,
    protected readonly onKept?: (text: string) => void,
  ) {}

  write(text: string): void {
    const room = this.limit - this.size;
    if (room <= 0) {
      this.dropped += text.length;
      return;
    }
    const kept = text.length <= room ? text : text.slice(0, room);
    this.parts.push(kept);
    this.size += kept.length;
    this.dropped += text.length - kept.length;
    this.onKept?.(kept);
  }

  text(): string {
    const body = this.parts.join("");
    return this.dropped ? `${body}\n… [${this.dropped} more characters of output cut]\n` : body;
  }
}

export interface RunOutput {
  stdout: OutputBuffer;
  stderr: OutputBuffer;
}

/** A run's two buffers, each streaming what it keeps to `streamer` when there is one. */
export function newOutput(streamer: OutputStreamer | null): RunOutput {
  return {
    stdout: new OutputBuffer(MAX_STREAM_CHARS, streamer ? (t) => streamer.push("stdout", t) : undefined),
    stderr: new OutputBuffer(MAX_STREAM_CHARS, streamer ? (t) => streamer.push("stderr", t) : undefined),
  };
}

export type ConsoleMethods = Record<string, (...args: unknown[]) => void>;

export interface GuestConsole {
  methods: ConsoleMethods;
  /** Forget console.count/time labels (reset() and close()). */
  clear(): void;
}

/**
 * A console bound to `target()`, read at each call so one console serves every run. `prepare` is
 * applied to every argument before Node formats it: the sandbox, whose console formats on the
 * host, passes a bounded copy there (sandbox/display.ts); a guest running in its own realm formats
 * its own values.
 */
export function createGuestConsole(target: () => RunOutput | null, prepare: (value: unknown) => unknown = (v) => v): GuestConsole {
  const write = (stream: "stdout" | "stderr", text: string) => target()?.[stream].write(text);
  const formatted = (args: unknown[]) => format(...args.map(prepare));
  const out = (stream: "stdout" | "stderr") => (...args: unknown[]) => write(stream, `${formatted(args)}\n`);
  const counts = new BoundedCache<string, number>(MAX_CONSOLE_LABELS, MAX_CONSOLE_LABELS * MAX_LABEL_CHARS, (k) => k.length);
  const timers = new BoundedCache<string, number>(MAX_CONSOLE_LABELS, MAX_CONSOLE_LABELS * MAX_LABEL_CHARS, (k) => k.length);
  // A label kept as a key is a copy: a slice (or the guest's own string, itself perhaps a slice) would
  // keep the whole string it came from alive as long as the label — 20 MB per label, 1,000 labels.
  const labelOf = (label: unknown): string => {
    const text = typeof label === "string" ? label : String(prepare(label));
    return copyString(text.length > MAX_LABEL_CHARS ? `${text.slice(0, MAX_LABEL_CHARS)}…` : text);
  };
  const methods: ConsoleMethods = {
    log: out("stdout"),
    info: out("stdout"),
    debug: out("stdout"),
    error: out("stderr"),
    warn: out("stderr"),
    trace: (...args: unknown[]) => write("stderr", `Trace: ${formatted(args)}\n`),
    dir: (value: unknown) => write("stdout", `${inspect(prepare(value), { depth: 4 })}\n`),
    table: (value: unknown) => write("stdout", `${inspect(prepare(value), { depth: 4 })}\n`),
    count: (label: unknown = "default") => {
      const key = labelOf(label);
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      write("stdout", `${key}: ${n}\n`);
    },
    time: (label: unknown = "default") => void timers.set(labelOf(label), performance.now()),
    timeEnd: (label: unknown = "default") => {
      const key = labelOf(label);
      const t = timers.get(key);
      if (t !== undefined) write("stdout", `${key}: ${(performance.now() - t).toFixed(3)}ms\n`);
      timers.delete(key);
    },
    assert: (cond: unknown, ...args: unknown[]) => {
      if (!cond) write("stderr", `Assertion failed${args.length ? `: ${formatted(args)}` : ""}\n`);
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

/** A string with its own storage (V8 may represent a slice or a concatenation as a view of its parts). */
function copyString(text: string): string {
  return Buffer.from(text, "utf16le").toString("utf16le");
}
