/**
 * The bytes a session's namespace calls hold in the host at once: their arguments while they run,
 * and their replies until they are handed to the guest. Without a bound, a guest that starts 64
 * `artifacts.load` calls of a 50 MiB artifact without awaiting them makes the host hold 3.2 GB.
 * Beyond the limit a call fails at once with a ValidationError that says to await some calls first.
 */
import { ValidationError } from "../errors.js";

/** Default for HostServicesOptions.maxInFlightBytes (the sandbox's pending-argument limit is the same). */
export const DEFAULT_MAX_IN_FLIGHT_BYTES = 256 * 1_048_576;

/** What one call holds; `release()` gives it all back (idempotent). */
export interface Lease {
  /** Holds `bytes` more for this call, or throws ValidationError when the session's limit would pass. */
  reserve(bytes: number, what: string): void;
  release(): void;
}

export class InFlightBytes {
  private used = 0;

  constructor(readonly limit: number = DEFAULT_MAX_IN_FLIGHT_BYTES) {}

  /** Bytes held now (tests and diagnostics). */
  get held(): number {
    return this.used;
  }

  lease(): CallLease {
    return new CallLease(this);
  }

  /** Holds `bytes` more, or throws ValidationError when that would pass the limit (CallLease.reserve). */
  take(bytes: number, what: string): void {
    if (this.used + bytes > this.limit) {
      const mb = (n: number) => `${(n / 1_048_576).toLocaleString("en-US", { maximumFractionDigits: 1 })} MB`;
      throw new ValidationError(
        bytes > this.limit
          ? `this call needs ${mb(bytes)} for ${what}, more than the ${mb(this.limit)} a session's calls may hold at once`
          : `the namespace calls in flight already hold ${mb(this.used)} of ${mb(this.limit)} (arguments and replies), and this call needs ${mb(bytes)} for ${what}; await some calls before starting more`,
      );
    }
    this.used += bytes;
  }

  /** Gives back what `take` held. */
  give(bytes: number): void {
    this.used -= bytes;
  }
}

/** One call's share of an InFlightBytes (a class, not closures: one is made for every namespace call). */
export class CallLease implements Lease {
  private held = 0;
  /** reserve() was called, whatever it held: the operation sized its reply itself. */
  reserved = false;

  constructor(private readonly pool: InFlightBytes) {}

  reserve(bytes: number, what: string): void {
    this.reserved = true;
    if (bytes <= 0) return;
    this.pool.take(bytes, what);
    this.held += bytes;
  }

  release(): void {
    this.pool.give(this.held);
    this.held = 0;
  }
}
