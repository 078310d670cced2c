/**
 * The guest's `console`: log/info/debug go to stdout, error/warn to stderr, formatted like Node's
 * console (util.format). Output goes to whichever run is current; each stream is capped so a
 * snippet printing in a loop cannot exhaust the host's memory.
 */
import { format, inspect } from "node:util";

/** Per stream, per run. Beyond it the text is cut and a marker says how much was dropped. */
export const MAX_STREAM_CHARS = 1_000_000;

export class OutputBuffer {
  private parts: string[] = [];
  private size = 0;
  private dropped = 0;

  constructor(private readonly limit = MAX_STREAM_CHARS) {}

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

/** A console bound to `target()`, read at each call so one console serves every run. */
export function createGuestConsole(target: () => RunOutput | null): Record<string, (...args: unknown[]) => void> {
  const out = (stream: "stdout" | "stderr") => (...args: unknown[]) => target()?.[stream].write(`${format(...args)}\n`);
  const counts = new Map<string, number>();
  const timers = new Map<string, number>();
  return {
    log: out("stdout"),
    info: out("stdout"),
    debug: out("stdout"),
    error: out("stderr"),
    warn: out("stderr"),
    trace: (...args: unknown[]) => target()?.stderr.write(`Trace: ${format(...args)}\n`),
    dir: (value: unknown) => target()?.stdout.write(`${inspect(value, { depth: 4 })}\n`),
    table: (value: unknown) => target()?.stdout.write(`${inspect(value, { depth: 4 })}\n`),
    count: (label = "default") => {
      const n = (counts.get(String(label)) ?? 0) + 1;
      counts.set(String(label), n);
      target()?.stdout.write(`${String(label)}: ${n}\n`);
    },
    time: (label = "default") => void timers.set(String(label), performance.now()),
    timeEnd: (label = "default") => {
      const t = timers.get(String(label));
      if (t !== undefined) target()?.stdout.write(`${String(label)}: ${(performance.now() - t).toFixed(3)}ms\n`);
      timers.delete(String(label));
    },
    assert: (cond: unknown, ...args: unknown[]) => {
      if (!cond) target()?.stderr.write(`Assertion failed${args.length ? `: ${format(...args)}` : ""}\n`);
    },
  };
}
