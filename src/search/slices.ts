/**
 * Long loops of the search host work in slices: after a few ms they let the event loop run (a
 * guest's run, an RPC reply, an MCP request), so indexing 10,000 documents never stalls a session.
 */

/** How long a slice of host-side indexing work runs before the event loop gets a turn. */
export const SLICE_MS = 4;

export class Slices {
  private start = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Yields to the event loop when this slice has run its time; otherwise resolves at once. Call it per item. */
  async next(): Promise<void> {
    if (performance.now() - this.start < this.sliceMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.start = performance.now();
  }
}
