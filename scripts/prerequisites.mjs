/**
 * The ONE list of what the test suite needs besides `npm ci`, and the script that brings it in.
 * `npm test` runs it first (pretest) and `.ci/run` runs `--system` before `npm ci`, so a fresh
 * clone's `npm ci && npm test` works on a fresh machine with nothing installed by hand.
 *
 *   node scripts/prerequisites.mjs            everything: system commands, then npm extras
 *   node scripts/prerequisites.mjs --system   system commands only (apt; before `npm ci`)
 *   node scripts/prerequisites.mjs --check    install nothing: fail when something is missing
 *                                             (TS_CODE_MODE_NO_INSTALL=1 does the same)
 *   node scripts/prerequisites.mjs --dry-run  change nothing: print each change it would make to
 *                                             this machine ("would ..."), or "nothing to change"
 *
 * A prerequisite that is missing is installed when that is possible here (apt-get as root or via
 * `sudo -n`; npm for npm extras). When it is not, the script stops with exit code 1 and ONE line
 * saying what to install: nothing is skipped, because a suite that quietly skips its Redis half
 * reports green while testing half the product. Every change to the machine (an apt install, a
 * config file written, a service started, an npm package added) goes through `change()`, which
 * announces it on stderr before making it, and only announces it under --dry-run.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { accessSync, constants, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/**
 * Commands the tests run, each with the Debian packages that provide it, and an optional `setup`
 * hook (configuration, a service to start) run after installing, every time (it must be cheap when
 * all is in place).
 */
export const SYSTEM_PREREQUISITES = [
  { command: "redis-server", apt: ["redis-server"], why: "the Redis storage tests start their own server" },
  { command: "podman", apt: ["podman", "runc", "catatonit"], why: "the container executor tests run containers", setup: setupPodman },
  // podman's --init (HostConfig.Init, which the container executor sets) runs catatonit; apt only recommends it.
  { command: "catatonit", apt: ["catatonit"], why: "the init process of the container executor's containers" },
  { command: "bwrap", apt: ["bubblewrap"], why: "shell_readonly and confine: tools run under bubblewrap outside containers" },
  { command: "haproxy", apt: ["haproxy"], why: "the fleet test runs two serve processes behind a real haproxy (examples/fleet/haproxy.cfg)" },
  { command: "chromium", apt: ["chromium"], why: "the console's browser tests drive a real headless Chromium (playwright-core)" },
];

/** Where the tests (and ContainerExecutor by default, through DOCKER_HOST) find the Docker Engine API. */
export const PODMAN_SOCKET = "/run/podman/podman.sock";
/**
 * cgroup v1 here: crun refuses ("hybrid mode"), so runc; BOTH nofile and nproc ulimits must be set
 * or runc fails with "error setting rlimit type 6/7: operation not permitted" (ENVIRONMENT notes).
 */
const CONTAINERS_CONF = '[engine]\nruntime = "runc"\n[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n';

/**
 * How this run treats changes: "apply" announces each change on stderr, then makes it; "dry-run"
 * only announces it ("would ..."); "check" refuses every change (a missing piece is an error).
 */
let mode = "apply";
/** apt packages a dry run has planned to install: later steps assume they are there. */
const planned = new Set();
let changesAnnounced = 0;

/** Every change to the machine goes through here: announced before it is made, and only announced in a dry run. */
function change(description, make) {
  changesAnnounced++;
  if (mode === "dry-run") {
    process.stderr.write(`prerequisites: would ${description}\n`);
    return false;
  }
  process.stderr.write(`prerequisites: ${description}\n`);
  make();
  return true;
}

/** True when the Docker API on `socket` answers GET /_ping (a child node does the request: this script is synchronous). */
function pingDocker(socket) {
  const probe = `require("node:http").get({socketPath:${JSON.stringify(socket)},path:"/_ping",timeout:2000},(r)=>process.exit(r.statusCode===200?0:1)).on("error",()=>process.exit(1)).on("timeout",()=>process.exit(1))`;
  return spawnSync(process.execPath, ["-e", probe], { stdio: "ignore", timeout: 5_000 }).status === 0;
}

/**
 * Podman serving the Docker Engine API: the containers.conf of the recipe, then
 * `podman system service` on PODMAN_SOCKET unless it already answers. Needs root (the rootful
 * socket); a non-root user with a running Docker/podman socket in DOCKER_HOST is accepted as is.
 */
function setupPodman(forbidden) {
  const fromEnv = process.env.DOCKER_HOST?.startsWith("unix://") ? process.env.DOCKER_HOST.slice("unix://".length) : undefined;
  if (fromEnv && fromEnv !== PODMAN_SOCKET && pingDocker(fromEnv)) return;
  if (pingDocker(PODMAN_SOCKET)) return;
  const hint = `start it: podman system service --time=0 unix://${PODMAN_SOCKET} &`;
  if (forbidden) throw new MissingPrerequisite(`the Docker API of podman does not answer on ${PODMAN_SOCKET}; installing is turned off (--check / TS_CODE_MODE_NO_INSTALL); ${hint}`);
  if (process.getuid?.() !== 0) throw new MissingPrerequisite(`the Docker API of podman does not answer on ${PODMAN_SOCKET} and starting it needs root; ${hint} (or set DOCKER_HOST to a running engine)`);
  if (!which("runc") && !planned.has("runc")) throw new MissingPrerequisite("podman needs runc here (cgroup v1); install it: apt-get install -y runc");
  const conf = "/etc/containers/containers.conf";
  let current = "";
  try {
    current = readFileSync(conf, "utf8");
  } catch {
    // not there yet
  }
  if (!current.includes('runtime = "runc"')) {
    change(`write ${conf} (${current ? "replacing it: " : ""}runtime runc and nofile/nproc ulimits, which podman needs on this cgroup v1 host)`, () => {
      mkdirSync("/etc/containers", { recursive: true });
      writeFileSync(conf, CONTAINERS_CONF);
    });
  }
  // Left running on purpose (like a system service): detached, in its own session, no pipes held open,
  // and in "/" — containers it starts inherit its working directory, and one started from a folder
  // that is later deleted (a test's clone) fails every start with "write child: broken pipe".
  const started = change(`start podman system service on ${PODMAN_SOCKET} (left running in the background, like a system service)`, () => {
    mkdirSync(path.dirname(PODMAN_SOCKET), { recursive: true });
    spawn("podman", ["system", "service", "--time=0", `unix://${PODMAN_SOCKET}`], { detached: true, stdio: "ignore", cwd: "/" }).unref();
  });
  if (!started) return;
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (pingDocker(PODMAN_SOCKET)) return;
    spawnSync("sleep", ["0.2"]);
  }
  throw new MissingPrerequisite(`podman system service did not answer on ${PODMAN_SOCKET} within 20 s; ${hint}`);
}

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

function modeOf(argv) {
  if (installForbidden(argv)) return "check";
  return argv.includes("--dry-run") ? "dry-run" : "apply";
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
  if (missing.length > 0) installSystem(missing, forbidden);
  for (const p of SYSTEM_PREREQUISITES) p.setup?.(forbidden);
}

function installSystem(missing, forbidden) {
  const packages = [...new Set(missing.flatMap((p) => p.apt))];
  const what = missing.map((p) => `${p.command} (${p.why})`).join(", ");
  const hint = `install it: apt-get install -y ${packages.join(" ")}`;
  if (forbidden) throw new MissingPrerequisite(`missing ${what}; installing is turned off (--check / TS_CODE_MODE_NO_INSTALL); ${hint}`);
  const apt = aptRunner();
  if (apt.problem) throw new MissingPrerequisite(`missing ${what}; ${apt.problem}; ${hint}`);
  const run = (args) => {
    const [cmd, ...rest] = [...apt.prefix, "apt-get", ...args];
    // apt is chatty (debconf notices on stderr): keep its output and show it only on failure.
    const r = spawnSync(cmd, rest, { encoding: "utf8", timeout: APT_TIMEOUT_MS, env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    if (r.status !== 0) {
      process.stderr.write(`${r.stdout ?? ""}${r.stderr ?? ""}`);
      throw new MissingPrerequisite(`apt-get ${args[0]} failed (${r.error?.message ?? `exit ${r.status}`}); ${hint}`);
    }
  };
  const installed = change(`install ${packages.join(" ")} with ${[...apt.prefix, "apt-get"].join(" ")} (apt-get update, then apt-get install --no-install-recommends; for ${what})`, () => {
    run(["update", "-qq"]);
    run(["install", "-y", "-qq", "--no-install-recommends", ...packages]);
  });
  if (!installed) {
    for (const p of packages) planned.add(p);
    return;
  }
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
    change(`install ${spec} into ${path.join(ROOT, "node_modules")} with npm install --no-save --no-package-lock (${p.why})`, () => {
      try {
        execFileSync("npm", ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", spec], { cwd: ROOT, stdio: "inherit" });
      } catch (err) {
        throw new MissingPrerequisite(`npm install ${spec} failed (${err.message.split("\n")[0]}); ${hint}`);
      }
    });
  }
}

export function main(argv = process.argv.slice(2)) {
  mode = modeOf(argv);
  planned.clear();
  changesAnnounced = 0;
  const forbidden = mode === "check";
  try {
    ensureSystem(forbidden);
    if (!argv.includes("--system")) ensureNpm(forbidden);
    if (mode === "dry-run" && changesAnnounced === 0) process.stderr.write("prerequisites: nothing to change (everything is in place)\n");
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
