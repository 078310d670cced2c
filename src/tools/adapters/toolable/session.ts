/**
 * A live session with a toolable session tool (`<tool> --session '<json>'`): the caller sends JSON
 * lines to its stdin and reads the events it writes, one per stdout line, until `session_end` and
 * the final envelope. Bounded: events wait in a queue of at most MAX_QUEUED (past it the session is
 * stopped: a reader that never reads must not grow the host), the process dies at the timeout, on
 * `close()`, or when the signal (the run) aborts.
 */
import { ToolError } from "../../../errors.js";
import { isObject } from "./envelope.js";
import { ToolableProcess, type ProcessOptions } from "./process.js";

const MAX_QUEUED = 1_000;
/** After close() ends stdin, how long the tool may take to say goodbye before it is killed. */
const CLOSE_GRACE_MS = 2_000;

export type SessionEvent = Record<string, unknown>;

export class ToolableSession implements AsyncIterable<SessionEvent> {
  /** The final envelope (`{"status":"success"}` or an error envelope), or a ToolError. */
  readonly done: Promise<Record<string, unknown>>;
  private readonly proc: ToolableProcess;
  private readonly queue: SessionEvent[] = [];
  private waiters: Array<(e: SessionEvent | null) => void> = [];
  private ended = false;
  private final: Record<string, unknown> | undefined;

  constructor(argv: readonly string[], opts: Omit<ProcessOptions, "onStdoutLine">) {
    this.proc = new ToolableProcess(argv, {
      ...opts,
      onStdoutLine: (value) => {
        if (!isObject(value)) return;
        if (typeof value["type"] !== "string" && "status" in value) {
          this.final = value;
          return;
        }
        this.push(value);
      },
    });
    const at = { tool: opts.tool, callable: opts.callable };
    this.done = this.proc.done.then(
      (outcome) => {
        this.finish();
        if (outcome.exitCode !== 0) throw new ToolError({ ...at, code: "INTERNAL", message: `${opts.label}: the session exited with code ${outcome.exitCode}: ${outcome.stderr || "(no stderr)"}` });
        return this.final ?? { status: "success" };
      },
      (e: unknown) => {
        this.finish();
        throw e;
      },
    );
    this.done.catch(() => {});
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  /** Send one message (a JSON object) as a line on the tool's stdin. */
  send(message: unknown): void {
    if (!isObject(message)) throw new TypeError("session.send takes a JSON object");
    if (this.ended || !this.proc.write(message)) throw new Error("the session has ended");
  }

  /** The next event, or null once the session ended and every event was read. */
  next(): Promise<SessionEvent | null> {
    const e = this.queue.shift();
    if (e) return Promise.resolve(e);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SessionEvent> {
    for (let e = await this.next(); e; e = await this.next()) yield e;
  }

  /** End stdin (the tool reads EOF as quit), wait a little for its goodbye, then kill it. */
  async close(): Promise<Record<string, unknown> | null> {
    this.proc.endInput();
    const timer = setTimeout(() => this.proc.stop("closed"), CLOSE_GRACE_MS);
    try {
      return await this.done;
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kill at once (the run ended). */
  kill(): void {
    this.proc.stop("closed");
  }

  private push(e: SessionEvent): void {
    const w = this.waiters.shift();
    if (w) return w(e);
    if (this.queue.length >= MAX_QUEUED) {
      this.proc.stop("closed");
      return;
    }
    this.queue.push(e);
  }

  private finish(): void {
    this.ended = true;
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w(null);
  }
}
