// A workflow saved by one session is found, described and invoked by another session on the same
// folder, e.g. a later agent run or another process.  node examples/workflow-across-sessions.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Session } from "ts-code-mode";

const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-shared-"));
try {
  const first = await Session.fromBase(base);
  await first.addWorkflow({
    name: "fizzbuzz",
    source: `/** FizzBuzz up to n, as one string. */
export async function run({ n = 15 }: { n?: number }) {
  return Array.from({ length: n }, (_, i) => i + 1)
    .map((k) => (k % 15 === 0 ? "FizzBuzz" : k % 3 === 0 ? "Fizz" : k % 5 === 0 ? "Buzz" : String(k)))
    .join(" ");
}`,
  });
  await first.close();

  const second = await Session.fromBase(base);
  const [hit] = await second.searchWorkflows("fizz buzz numbers");
  console.log("found:", hit.name, "-", hit.description);
  console.log("params:", JSON.stringify(hit.params));
  const r = await second.run("await workflows.fizzbuzz({ n: 5 })");
  console.log("result:", r.value);
  await second.close();
} finally {
  rmSync(base, { recursive: true, force: true });
}
