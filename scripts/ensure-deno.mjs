/**
 * The sandbox's deno engine needs the `deno` npm package (it ships the binary). It is not in
 * package.json: its other-platform binaries are optional packages that some registries (mirrors)
 * do not carry, which leaves a lockfile `npm ci` refuses. So tests install it here when missing,
 * without touching package.json or the lockfile. Library users who want the engine run
 * `npm install deno`; without it the engine fails with a message saying so.
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";

const VERSION = "2.9.6";
const require = createRequire(import.meta.url);
try {
  require.resolve("deno/package.json");
} catch {
  process.stderr.write(`ensure-deno: installing deno@${VERSION} for the sandbox's deno engine tests\n`);
  execFileSync("npm", ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", `deno@${VERSION}`], { stdio: "inherit" });
}
