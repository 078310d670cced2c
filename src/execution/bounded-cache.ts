/**
 * A Map bounded in entries AND in size (characters of keys and values as the caller measures them),
 * forgetting the oldest entries first. For everything the host keeps on the guest's behalf between
 * calls — console labels, compiled snippets — so that no guest input can make it grow without end:
 * 500 snippets of 10 MB each would otherwise be 5 GB.
 */
export class BoundedCache<K, V> {
  private readonly map = new Map<K, { value: V; size: number }>();
  private total = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxSize: number,
    private readonly sizeOf: (key: K, value: V) => number,
  ) {}

  get size(): number {
    return this.map.size;
  }

  /** Sum of the entries' sizes. */
  get weight(): number {
    return this.total;
  }

  get(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  /** Stores `value` unless it alone is larger than the whole budget; evicts the oldest entries to make room. */
  set(key: K, value: V): void {
    this.delete(key);
    const size = this.sizeOf(key, value);
    if (size > this.maxSize) return;
    while (this.map.size >= this.maxEntries || this.total + size > this.maxSize) {
      const oldest = this.map.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value);
    }
    this.map.set(key, { value, size });
    this.total += size;
  }

  delete(key: K): boolean {
    const entry = this.map.get(key);
    if (!entry) return false;
    this.map.delete(key);
    this.total -= entry.size;
    return true;
  }

  clear(): void {
    this.map.clear();
    this.total = 0;
  }
}
