/**
 * The output of a served session's current run, for watchers that join while it runs (the
 * console's sessions page). Keeps the last MAX_KEPT_CHARS of the run so a late watcher sees
 * recent output, and tells every watcher when a run starts and ends. A watcher that throws is
 * dropped; it never disturbs the run.
 */
import type { OutputChunk } from "../execution/output-stream.js";

const MAX_KEPT_CHARS = 65_536;

export type FeedEvent = { type: "reset" } | { type: "output"; chunk: OutputChunk } | { type: "end"; summary: string };
export type FeedWatcher = (event: FeedEvent) => void;

export class OutputFeed {
  private kept: OutputChunk[] = [];
  private keptChars = 0;
  private readonly watchers = new Set<FeedWatcher>();
  running = false;
  lastSummary: string | null = null;

  start(): void {
    this.kept = [];
    this.keptChars = 0;
    this.running = true;
    this.emit({ type: "reset" });
  }

  push(chunk: OutputChunk): void {
    this.kept.push(chunk);
    this.keptChars += chunk.text.length;
    while (this.keptChars > MAX_KEPT_CHARS && this.kept.length > 1) this.keptChars -= this.kept.shift()!.text.length;
    this.emit({ type: "output", chunk });
  }

  end(summary: string): void {
    this.running = false;
    this.lastSummary = summary;
    this.emit({ type: "end", summary });
  }

  /** What a new watcher needs to catch up: the run's kept output (and its end, if it ended). */
  replay(): FeedEvent[] {
    if (!this.running && this.lastSummary === null) return [];
    const events: FeedEvent[] = [{ type: "reset" }, ...this.kept.map((chunk) => ({ type: "output" as const, chunk }))];
    if (!this.running && this.lastSummary !== null) events.push({ type: "end", summary: this.lastSummary });
    return events;
  }

  watch(watcher: FeedWatcher): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  private emit(event: FeedEvent): void {
    for (const w of this.watchers) {
      try {
        w(event);
      } catch {
        this.watchers.delete(w);
      }
    }
  }
}
