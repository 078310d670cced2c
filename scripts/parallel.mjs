/**
 * Runs npm scripts at the same time and fails when any of them fails (issue 41: `npm test`'s lint
 * needs nothing from the build and typecheck; one after the other the three took ~160 s of a loaded
 * CI run, where a busy machine gives two runnable processes more of its cores than one).
 *
 *   node scripts/parallel.mjs lint build+typecheck
 *
 * Each argument runs beside the others; `a+b` runs `a`, then `b` if `a` passed (the typecheck reads
 * the built .d.ts: test fixtures and examples import "ts-code-mode" by its name). Each script's
 * output is held and printed whole when it ends, under its name, so they never interleave line by
 * line; every chain runs to its end (all their errors are shown at once).
 */
import { spawn } from "node:child_process";

const chains = process.argv.slice(2);
if (chains.length === 0 || chains.some((c) => c.startsWith("-") || c.split("+").some((n) => n === ""))) {
  console.error("usage: node scripts/parallel.mjs SCRIPT[+SCRIPT...]... (npm scripts of this package; each argument beside the others, a+b one after the other)");
  process.exit(2);
}

const npm = process.env.npm_execpath;
const started = Date.now();

function runScript(name) {
  return new Promise((resolve) => {
    // Through the npm that started us when there is one (npm_execpath), so the scripts see the same npm.
    const [command, args] = npm ? [process.execPath, [npm, "run", "--silent", name]] : ["npm", ["run", "--silent", name]];
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    const output = [];
    child.stdout.on("data", (d) => output.push(d));
    child.stderr.on("data", (d) => output.push(d));
    child.on("error", (err) => output.push(Buffer.from(`${err.message}\n`)));
    child.on("close", (code, signal) => {
      const status = code === 0 ? "ok" : signal ? `killed by ${signal}` : `exit ${code}`;
      process.stdout.write(`\n> ${name}: ${status} after ${((Date.now() - started) / 1000).toFixed(1)} s\n${Buffer.concat(output).toString()}`);
      resolve(code === 0);
    });
  });
}

async function runChain(chain) {
  for (const name of chain.split("+")) if (!(await runScript(name))) return false;
  return true;
}

const results = await Promise.all(chains.map(runChain));
const failed = chains.filter((_, i) => !results[i]);
if (failed.length > 0) {
  console.error(`\nfailed: ${failed.join(", ")}`);
  process.exit(1);
}
