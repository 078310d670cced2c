/** Count the lines of some files, save the counts as a JSON artifact and return the total. */

interface Args {
  /** Files to count, e.g. ["README.md", "package.json"]. */
  files: string[];
  /** Artifact name for the per-file counts; nothing is saved when it is empty. */
  save_as?: string;
}

export async function run({ files, save_as = "reports/line-counts.json" }: Args) {
  // `wc -l a b` prints "<count> <file>" per file, then a "<count> total" line for several files.
  const out = await tools.wc.lines({ files });
  const counts: Record<string, number> = {};
  for (const line of out.split("\n")) {
    const [, count, file] = /^\s*(\d+)\s+(.+)$/.exec(line) ?? [];
    if (count && file && !(files.length > 1 && file === "total")) counts[file] = Number(count);
  }
  const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
  if (save_as) await artifacts.save(save_as, { counts, total }, { description: `Line counts of ${files.length} file(s)` });
  return { total, counts };
}
