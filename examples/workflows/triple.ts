/** Triple a number. The smallest possible workflow: no tools, no storage. */
export async function run({ n }: { n: number }) {
  return n * 3;
}
