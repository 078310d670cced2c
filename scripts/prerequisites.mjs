/**
 * The ONE list of what the test suite needs besides `npm ci`, and the script that brings it in.
 * `npm test` runs it first (pretest) and `.ci/run` runs `--system` before `npm ci`, so a fresh
 * clone's `npm ci && npm test` works on a fresh machine with nothing installed by hand.
 *
 *   node scripts/prerequisites.mjs            everything: system commands, then npm extras
 *   node scripts/prerequisites.mjs --system   system commands only (apt; before `npm ci`)
 *   node scripts/prerequisites.mjs --check    install nothing: fail when something is missing
 *                                             (TS_CODE_MODE_NO_INSTALL=1 does the same)
 *
 * A prerequisite that is missing is installed when that is possible here (apt-get as root or via
 * `sudo -n`; npm for npm extras). When it is not, the script stops with exit code 1 and ONE line
 * saying what to install: nothing is skipped, because a suite that quietly skips its Redis half
 * reports green while testing half the product.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/**
 * Commands the tests run, each with the Debian packages that provide it.
 * Add a container engine here when the container executor lands, e.g.
 *   { command: "podman", apt: ["podman", "runc"], why: "the container executor tests run containers" }
 * (its configuration steps, see ENVIRONMENT notes, belong in a `setup` hook next to it).
 */
export const SYSTEM_PREREQUISITES = [
  { command: "redis-server", apt: ["redis-server"], why: "the Redis storage tests start their own server" },
];

/**
 * npm packages the tests need that are NOT in package.json. deno: its other-platform binaries are
 * optional packages that some registries (mirrors) do not carry, which leaves a lockfile `npm ci`
 * refuses; so it is installed here, without touching package.json or the lockfile. Library users
 * who want the sandbox's deno engine run `npm install deno`.
 */
export const NPM_PREREQUISITES = [{ name: "deno", version: "2.9.6", why: "the sandbox's deno engine tests" }];

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const APT_TIMEOUT_MS = 15 * 60_000;

/** Like `command -v`: the first executable `name` on PATH, or undefined. */
export function which(name, envPath = process.env.PATH ?? "") {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const full = path.join(dir, name);
    try {
      accessSync(full, constants.X_OK);
      return full;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

class MissingPrerequisite extends Error {
  name = "MissingPrerequisite";
}

function installForbidden(argv) {
  return argv.includes("--check") || ["1", "true", "yes"].includes((process.env.TS_CODE_MODE_NO_INSTALL ?? "").toLowerCase());
}

/** How apt-get can be run here: as root directly, else through `sudo -n`; undefined when it cannot. */
function aptRunner() {
  if (!which("apt-get")) return { problem: "apt-get is not available here" };
  if (process.getuid?.() === 0) return { prefix: [] };
  if (which("sudo") && spawnSync("sudo", ["-n", "true"], { stdio: "ignore" }).status === 0) return { prefix: ["sudo", "-n"] };
  return { problem: "installing needs root (or password-less sudo)" };
}

function ensureSystem(forbidden) {
  const missing = SYSTEM_PREREQUISITES.filter((p) => !which(p.command));
  if (missing.length === 0) return;
  const packages = [...new Set(missing.flatMap((p) => p.apt))];
  const what = missing.map((p) => `${p.command} (${p.why})`).join(", ");
  const hint = `install it: apt-get install -y ${packages.join(" ")}`;
  if (forbidden) throw new MissingPrerequisite(`missing ${what}; installing is turned off (--check / TS_CODE_MODE_NO_INSTALL); ${hint}`);
  const apt = aptRunner();
  if (apt.problem) throw new MissingPrerequisite(`missing ${what}; ${apt.problem}; ${hint}`);
  process.stderr.write(`prerequisites: installing ${packages.join(" ")} with apt-get (${what})\n`);
  const run = (args) => {
    const [cmd, ...rest] = [...apt.prefix, "apt-get", ...args];
    // apt is chatty (debconf notices on stderr): keep its output and show it only on failure.
    const r = spawnSync(cmd, rest, { encoding: "utf8", timeout: APT_TIMEOUT_MS, env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    if (r.status !== 0) {
      process.stderr.write(`${r.stdout ?? ""}${r.stderr ?? ""}`);
      throw new MissingPrerequisite(`apt-get ${args[0]} failed (${r.error?.message ?? `exit ${r.status}`}); ${hint}`);
    }
  };
  run(["update", "-qq"]);
  run(["install", "-y", "-qq", "--no-install-recommends", ...packages]);
  const still = missing.filter((p) => !which(p.command));
  if (still.length) throw new MissingPrerequisite(`${still.map((p) => p.command).join(", ")} still missing after apt-get install ${packages.join(" ")}`);
}

function ensureNpm(forbidden) {
  const require = createRequire(path.join(ROOT, "package.json"));
  for (const p of NPM_PREREQUISITES) {
    try {
      require.resolve(`${p.name}/package.json`);
      continue;
    } catch {
      // missing: install below
    }
    const spec = `${p.name}@${p.version}`;
    const hint = `install it: npm install --no-save --no-package-lock ${spec}`;
    if (forbidden) throw new MissingPrerequisite(`missing npm package ${p.name} (${p.why}); installing is turned off (--check / TS_CODE_MODE_NO_INSTALL); ${hint}`);
    if (!which("npm")) throw new MissingPrerequisite(`missing npm package ${p.name} (${p.why}); npm is not on PATH; ${hint}`);
    process.stderr.write(`prerequisites: installing ${spec} (${p.why})\n`);
    try {
      execFileSync("npm", ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", spec], { cwd: ROOT, stdio: "inherit" });
    } catch (err) {
      throw new MissingPrerequisite(`npm install ${spec} failed (${err.message.split("\n")[0]}); ${hint}`);
    }
  }
}

export function main(argv = process.argv.slice(2)) {
  const forbidden = installForbidden(argv);
  try {
    ensureSystem(forbidden);
    if (!argv.includes("--system")) ensureNpm(forbidden);
    return 0;
  } catch (err) {
    if (!(err instanceof MissingPrerequisite)) throw err;
    process.stderr.write(`prerequisites: ${err.message}\n`);
    return 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main();
}
