/**
 * The cost of confinement (issue 32): `node bench/confine.mjs [--strict]` against an existing dist/
 * (build first: npm run build).
 *
 *   shell_readonly unconfined   the same argv run host-side, as shell_readonly ran before (runCommand, cwd = project)
 *   shell_readonly confined     shell_readonly's execute: checks + bubblewrap (project read-only, unshare-all, uid 65534)
 *
 * Target: confined ≤ 2× unconfined (the budget of the confined row is twice the unconfined median,
 * which is also its floor).
 *
 *   stdout: one JSON line per case (bench/lib.mjs shape)
 *   stderr: the table, target misses marked
 * The exit code is 0 even when a target is missed; `--strict` makes a miss exit 1.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { measure, printJsonLine, printTable, resultRow, timed, withTempDir, benchArgs } from "./lib.mjs";

const load = (m) =>
  import(m).catch((err) => {
    process.stderr.write(`bench: cannot load ${m} (${err.message}); build first: npm run build\n`);
    process.exit(2);
  });
const { shellReadonlyToolset } = await load("../dist/agents/toolsets/shell.js");
const { runCommand } = await load("../dist/tools/adapters/cli/run.js");

const { values } = benchArgs(import.meta.url, { options: { strict: { type: "boolean", default: false } } });
const COMMAND = "grep -n second a.txt";
const ITERATIONS = 40;
const WARMUP = 5;
const signal = new globalThis.AbortController().signal;

const rows = await withTempDir("ts-code-mode-bench-confine-", async (dir) => {
  await writeFile(path.join(dir, "a.txt"), "hello world\nsecond line\n");
  const argv = COMMAND.split(" ");
  const unconfined = await measure(
    () => timed(() => runCommand(argv, { tool: "shell_readonly", callable: null, timeoutMs: 30_000, okExitCodes: [0, 1], cwd: dir })),
    { iterations: ITERATIONS, warmup: WARMUP },
  );
  const [tool] = shellReadonlyToolset(dir);
  const confined = await measure(
    () =>
      timed(async () => {
        const out = await tool.execute({ command: COMMAND }, signal);
        if (out !== "2:second line\n") throw new Error(`confined shell_readonly answered ${JSON.stringify(out)}`);
      }),
    { iterations: ITERATIONS, warmup: WARMUP },
  );
  const base = resultRow({ name: `shell_readonly \`${COMMAND}\`: unconfined host-side`, executor: "host", iterations: ITERATIONS, samples: unconfined });
  return [
    base,
    resultRow({ name: `shell_readonly \`${COMMAND}\`: confined (bwrap)`, executor: "bwrap", iterations: ITERATIONS, samples: confined, budgetMs: 2 * base.median_ms, floorMs: base.median_ms }),
  ];
});

rows.forEach(printJsonLine);
printTable(rows);
if (values.strict && rows.some((r) => r.within_budget === false)) process.exitCode = 1;
