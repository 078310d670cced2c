/**
 * The sessions one `serve` process holds. Bounded (--max-sessions), and a session nobody used for
 * --idle-timeout is closed, so its child processes end even when a client vanished without saying
 * goodbye. Ids are random (122 bits): knowing one is the capability to use that session, and with
 * per-tenant workspaces a session answers only requests from its own workspace.
 */
import { randomUUID } from "node:crypto";
import type { Session } from "../session.js";
import type { StorageBackend } from "../storage/protocol.js";
import { OutputFeed } from "./output-feed.js";

export interface SessionEntry {
  readonly id: string;
  readonly session: Session;
  readonly workspace: string | null;
  /** Storage opened for this session alone (a workspace, a client's storage); closed with it. */
  readonly ownedStorage: StorageBackend | null;
  /** Aborts the run in progress (POST cancel, a client that disconnected). */
  running: AbortController | null;
  busy: number;
  /** When it was created (epoch ms). */
  readonly createdAt: number;
  /** Its current run's output, for the console's watchers. */
  readonly feed: OutputFeed;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export class SessionLimitError extends Error {
  override readonly name = "SessionLimitError";
}

export class SessionPool {
  private readonly entries = new Map<string, SessionEntry>();
  /** Creations under way count toward the limit, so a burst cannot overshoot it. */
  private pending = 0;

  constructor(
    readonly maxSessions: number,
    readonly idleTimeoutMs: number,
    private readonly log: (line: string) => void,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Reserves a slot, builds the session with `open`, and starts it; SessionLimitError when full. */
  async add(workspace: string | null, open: () => Promise<{ session: Session; ownedStorage: StorageBackend | null }>): Promise<SessionEntry> {
    if (this.entries.size + this.pending >= this.maxSessions) {
      throw new SessionLimitError(`this server already holds ${this.maxSessions} sessions (--max-sessions); close one (DELETE /sessions/{id}) or try another server`);
    }
    this.pending++;
    try {
      const { session, ownedStorage } = await open();
      try {
        await session.start();
      } catch (err) {
        await session.close().catch(() => undefined);
        await ownedStorage?.close().catch(() => undefined);
        throw err;
      }
      const entry: SessionEntry = { id: randomUUID(), session, workspace, ownedStorage, running: null, busy: 0, createdAt: Date.now(), feed: new OutputFeed(), timer: undefined };
      this.entries.set(entry.id, entry);
      this.arm(entry);
      return entry;
    } finally {
      this.pending--;
    }
  }

  /** Every session held, oldest first (the console's sessions page). */
  list(): SessionEntry[] {
    return [...this.entries.values()];
  }

  /** The session, if it exists and belongs to `workspace`. */
  get(id: string, workspace: string | null): SessionEntry | undefined {
    const entry = this.entries.get(id);
    return entry && entry.workspace === workspace ? entry : undefined;
  }

  /** Runs `fn` with the session marked busy: an idle timer never closes a session in use. */
  async use<T>(entry: SessionEntry, fn: () => Promise<T>): Promise<T> {
    entry.busy++;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    try {
      return await fn();
    } finally {
      entry.busy--;
      if (entry.busy === 0 && this.entries.has(entry.id)) this.arm(entry);
    }
  }

  async close(id: string): Promise<boolean> {
    const entry = this.entries.get(id);
    if (!entry) return false;
    this.entries.delete(id);
    if (entry.timer) clearTimeout(entry.timer);
    entry.running?.abort();
    await entry.session.close().catch((err: unknown) => this.log(`session ${id}: close failed: ${String(err)}`));
    await entry.ownedStorage?.close().catch(() => undefined);
    return true;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((id) => this.close(id)));
  }

  private arm(entry: SessionEntry): void {
    entry.timer = setTimeout(() => {
      this.log(`session ${entry.id}: idle for ${this.idleTimeoutMs / 1000} s, closing it`);
      void this.close(entry.id);
    }, this.idleTimeoutMs);
    entry.timer.unref();
  }
}
