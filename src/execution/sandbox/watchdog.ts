/**
 * The hard stop behind the sandbox's deadline.
 *
 * QuickJS asks its interrupt handler for permission to go on only every 10,000 function calls or
 * loop iterations. That stops ordinary runaway loops promptly, but a loop whose every iteration is
 * a long native operation (`new Array(1e5).fill(1)`, a huge `join`, a regex on a long string) can
 * run for many seconds between two checks. So the QuickJS WebAssembly is metered (wasm-meter.ts):
 * every function entry and loop iteration of its code spends fuel, and when the fuel runs out the
 * code calls `tick`, which refills it and, past the entry's hard deadline, throws HardStop. The
 * exception unwinds the WebAssembly wherever it is; nothing inside the sandbox can catch it (a
 * host function that turns exceptions into guest exceptions only delays it to the next check,
 * since after a stop every check throws again).
 *
 * Earlier, every entry ran under a node:vm `timeout`, whose watchdog thread Node starts and joins
 * per call: that thread cost more than a whole tool call. The meter needs no thread and no timer.
 *
 * A stopped entry leaves the QuickJS module in an unknown state (it may have been inside malloc or
 * the garbage collector), so the caller must throw that module away and never call into it again;
 * each sandbox instance owns its module and its watchdog (see wasm.ts), so nothing else is affected.
 */

/** Thrown when the watchdog stopped an entry. */
export class HardStop extends Error {
  constructor(readonly afterMs: number) {
    super(`stopped by the watchdog after ${afterMs} ms`);
    this.name = "HardStop";
  }
}

/** The metered module's fuel counter (an exported mutable i32 WebAssembly.Global). */
export interface FuelGlobal {
  value: number;
}

/**
 * Fuel between two looks at the clock: a unit is a function entry, a loop iteration or 64 bytes of
 * a bulk copy, a few nanoseconds each, so the clock is read every few hundred microseconds at most.
 */
export const FUEL_PER_TICK = 100_000;

/** One sandbox module's hard stop. */
export class Watchdog {
  private fuel: FuelGlobal | null = null;
  /** performance.now() time after which a check stops the code; Infinity outside an entry. */
  private hardDeadline = Number.POSITIVE_INFINITY;
  private budgetMs = 0;
  private stopped: HardStop | null = null;

  /** The import the metered code calls when its fuel runs out (see wasm-meter.ts). */
  readonly tick = (): void => {
    const fuel = this.fuel;
    if (this.stopped || performance.now() > this.hardDeadline) {
      this.stopped ??= new HardStop(this.budgetMs);
      // Every later check calls tick again, so code that survives one throw meets the next.
      if (fuel) fuel.value = 0;
      throw this.stopped;
    }
    if (fuel) fuel.value = FUEL_PER_TICK;
  };

  /** Connects the instantiated module's fuel counter. */
  attach(fuel: FuelGlobal): void {
    this.fuel = fuel;
    fuel.value = FUEL_PER_TICK;
  }

  /**
   * Run `fn` synchronously; if it is still running after `ms`, stop it and throw HardStop.
   * Entries nest (a host function called from the sandbox may enter it again): the outer deadline
   * stays in force.
   */
  run<T>(fn: () => T, ms: number): T {
    if (this.stopped) throw this.stopped;
    if (this.hardDeadline !== Number.POSITIVE_INFINITY) return fn();
    this.budgetMs = Math.max(1, Math.ceil(ms));
    this.hardDeadline = performance.now() + ms;
    let result: T;
    try {
      result = fn();
    } catch (err) {
      // Whatever a stopped entry threw on its way out, it was stopped.
      throw this.stopped ?? err;
    } finally {
      this.hardDeadline = Number.POSITIVE_INFINITY;
    }
    // A host function's wrapper may have turned the stop into a guest exception that the code then
    // returned from: the entry was stopped all the same.
    if (this.stopped) throw this.stopped;
    return result;
  }
}
