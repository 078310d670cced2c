/**
 * Warm starts for long-lived hosts (`serve`): an ExecutorPool keeps `spares` executors of one kind
 * with their guest already started (a spawned, ready child process) but bound to no session, so a
 * new session's start() only binds host services. Each spare goes to exactly one session and is
 * never returned: a session's executor is closed with it, and the pool starts a replacement in the
 * background. A spare whose guest died while idle is closed and replaced, never handed out. close()
 * closes every spare (their children also carry the parent-death signal, so they die with the host).
 *
 * Executors without `prestart` (in-process, sandbox) are handed out new: they have no guest
 * process whose start is worth hiding.
 */
import type { StorageBackend } from "../storage/protocol.js";
import type { Executor } from "./protocol.js";

/** An executor whose guest can be started before the session's storage is known. */
export interface Prestartable {
  /** Start the guest; `likely` is the storage the session will probably use. */
  prestart(likely?: StorageBackend): Promise<void>;
  /** The prestarted guest is alive and ready, and the executor is bound to no session. */
  readonly warm: boolean;
  /** Settles when the prestarted guest exits. */
  readonly guestExited: Promise<unknown> | undefined;
}

export interface ExecutorPoolOptions {
  /** Started executors kept ready; default 1, 0 turns the pool off. */
  spares?: number;
  /** The storage sessions will probably use (its deps folder decides where a guest imports from). */
  likelyStorage?: StorageBackend;
  /** Told when a spare fails to start (the next take() then starts one the ordinary way). */
  log?: (line: string) => void;
}

const MAX_SPARES = 64;
/** How long after a take() the replacement spare is started. */
const REFILL_DELAY_MS = 50;

export class ExecutorPool {
  private readonly spares: Executor[] = [];
  /** Spares being started; they count toward the target so a burst of takes does not overshoot. */
  private readonly starting = new Set<Executor>();
  private closed = false;
  private readonly target: number;
  private readonly prestartable: boolean;
  /** Consecutive failed starts; the pool stops refilling after a few so a broken setup does not spin. */
  private failures = 0;
  private refillTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly create: () => Executor,
    private readonly options: ExecutorPoolOptions = {},
  ) {
    const spares = options.spares ?? 1;
    if (!Number.isInteger(spares) || spares < 0 || spares > MAX_SPARES) throw new RangeError(`ExecutorPool: spares must be a whole number from 0 to ${MAX_SPARES}, got ${spares}`);
    this.target = spares;
    // Find out once whether this kind can prestart; one that cannot makes the pool a plain factory.
    const probe = create();
    this.prestartable = isPrestartable(probe);
    if (this.prestartable && this.target > 0) this.adopt(probe);
    else void probe.close().catch(() => undefined);
    this.refill();
  }

  /** Spares ready now (tests and benchmarks). */
  get ready(): number {
    return this.spares.filter((e) => isPrestartable(e) && e.warm).length;
  }

  /**
   * An executor for one new session: a warm spare when one is ready, else one still starting, else a new one. The caller
   * owns it (starts it with the session's storage, closes it with the session).
   */
  take(): Executor {
    if (this.closed) return this.create();
    let handed: Executor | undefined;
    while (!handed && this.spares.length > 0) {
      const spare = this.spares.shift() as Executor;
      if (isPrestartable(spare) && spare.warm) handed = spare;
      else void spare.close().catch(() => undefined);
    }
    // None ready yet: one whose child is still starting is further along than a new one (its
    // start() waits for that child).
    let handedStarting = false;
    if (!handed) {
      const [starting] = this.starting;
      if (starting) this.starting.delete(starting);
      handed = starting;
      handedStarting = starting !== undefined;
    }
    // One handed out while still starting is replaced when its start ends (adopt() refills then):
    // a second start now would take the CPU from the one the session waits on (a Pyodide load
    // takes seconds), and a host that shuts down before it was ready would start it for nothing.
    if (!handedStarting) this.refillSoon();
    return handed ?? this.create();
  }

  /**
   * Spawning a child costs the host's thread several ms, which would land in the session that was
   * just handed a spare: the replacement starts a moment later, after that session's first result.
   */
  private refillSoon(): void {
    if (this.refillTimer || this.closed) return;
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined;
      this.refill();
    }, REFILL_DELAY_MS);
    this.refillTimer.unref();
  }

  /** Closes every spare and stops refilling; executors already handed out belong to their sessions. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.refillTimer);
    // Spares still starting too: close() must leave no child behind.
    const spares = [...this.spares.splice(0), ...this.starting];
    this.starting.clear();
    await Promise.all(spares.map((e) => e.close().catch(() => undefined)));
  }

  private refill(): void {
    if (!this.prestartable || this.closed || this.failures >= 3) return;
    while (this.spares.length + this.starting.size < this.target) this.adopt(this.create());
  }

  /** Starts `executor`'s guest in the background and keeps it as a spare once ready. */
  private adopt(executor: Executor): void {
    this.starting.add(executor);
    void (executor as Executor & Prestartable)
      .prestart(this.options.likelyStorage)
      .then(
        () => {
          this.failures = 0;
          // Handed out while starting (it belongs to a session now) or closed by close().
          if (!this.starting.has(executor)) return;
          this.spares.push(executor);
          this.watch(executor);
        },
        (err: unknown) => {
          this.failures++;
          this.options.log?.(`executor pool: a spare failed to start: ${err instanceof Error ? err.message : String(err)}`);
          // One handed out while starting is its session's to close (its start() retries the child).
          if (this.starting.has(executor)) void executor.close().catch(() => undefined);
        },
      )
      .finally(() => {
        this.starting.delete(executor);
        this.refill();
      });
  }

  /** A spare whose guest dies while idle is replaced at once rather than at the next take(). */
  private watch(executor: Executor): void {
    if (!isPrestartable(executor)) return;
    void executor.guestExited?.then(() => {
      const i = this.spares.indexOf(executor);
      if (i < 0) return;
      this.spares.splice(i, 1);
      void executor.close().catch(() => undefined);
      this.refill();
    });
  }
}

function isPrestartable(executor: Executor): executor is Executor & Prestartable {
  return typeof (executor as Partial<Prestartable>).prestart === "function";
}
