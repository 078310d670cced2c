/** "1 file", "2 files", "1,000 files": a number with its noun, for messages people read. */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? noun : plural}`;
}
