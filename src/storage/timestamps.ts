/**
 * Record timestamps are ISO-8601 strings. `updatedAt` must visibly change on every overwrite, even
 * when two saves land in the same millisecond, so callers can use it to detect a change.
 */
export function nextTimestamp(previous?: string): string {
  let ms = Date.now();
  const prev = previous === undefined ? Number.NaN : Date.parse(previous);
  if (Number.isFinite(prev) && ms <= prev) ms = prev + 1;
  return new Date(ms).toISOString();
}

/** The later of two ISO timestamps. */
export function laterOf(a: string, b: string): string {
  return Date.parse(a) >= Date.parse(b) ? a : b;
}
