/**
 * Runs the BUILT command line (`node dist/cli/main.js`) as a child process, the way users and
 * agents run it. `ensureBuilt()` builds dist once per change: test files run in parallel workers,
 * so a lock folder keeps two of them from writing dist at the same time.
 */
import { spawn, spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const MAIN = path.join(REPO, "dist/cli/main.js");
const LOCK = path.join(os.tmpdir(), `ts-code-mode-cli-build-${Buffer.from(REPO).toString("hex").slice(-24)}.lock`);
/** A lock older than this was left by a killed worker. */
const STALE_LOCK_MS = 120_000;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function newestSource(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, await newestSource(full));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, (await stat(full)).mtimeMs);
  }
  return newest;
}

async function builtAt(): Promise<number> {
  try {
    return (await stat(MAIN)).mtimeMs;
  } catch {
    return 0;
  }
}

async function acquireLock(): Promise<void> {
  for (;;) {
    try {
      await mkdir(LOCK);
      return;
    } catch {
      const age = Date.now() - (await stat(LOCK).then((s) => s.mtimeMs, () => Date.now()));
      if (age > STALE_LOCK_MS) await rm(LOCK, { recursive: true, force: true, maxRetries: 5 });
      else await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Builds dist with `tsc -p tsconfig.build.json` unless dist/cli/main.js is newer than every source file. */
export async function ensureBuilt(): Promise<void> {
  await acquireLock();
  try {
    if ((await builtAt()) > (await newestSource(path.join(REPO, "src")))) return;
    const started = Date.now();
    const tsc = spawnSync(process.execPath, [path.join(REPO, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
      cwd: REPO,
      encoding: "utf8",
    });
    // tsc still emits when files outside the CLI have type errors; what matters is a fresh main.js.
    if ((await builtAt()) < started - 1000) throw new Error(`Building dist failed:\n${tsc.stdout}${tsc.stderr}`);
    // What ships: the entries bundled as `npm run build` does (scripts/bundle.mjs).
    const bundle = spawnSync(process.execPath, [path.join(REPO, "scripts/bundle.mjs")], { cwd: REPO, encoding: "utf8" });
    if (bundle.status !== 0) throw new Error(`Bundling dist failed:\n${bundle.stdout}${bundle.stderr}`);
  } finally {
    await rm(LOCK, { recursive: true, force: true, maxRetries: 5 });
  }
}

/** Runs `node dist/cli/main.js ...args` in `cwd`; stdin gets `input` (or is closed at once). */
export function cli(args: string[], options: { cwd: string; input?: string; timeoutMs?: number }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: options.cwd, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    // A hung command must fail its test, not the whole run.
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

/** A fresh temp folder; remove with `cleanup`. */
export async function tempDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), "ts-code-mode-cli-"));
}

export async function cleanup(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
}

/**
 * The base `init` makes, made by one `init` (a file's beforeAll) and copied for each test that
 * needs an initialised base: a CLI start costs seconds on a loaded machine, a copy milliseconds.
 * init writes no absolute paths, so a copy is the same base; test/cli/commands.test.ts tests init
 * itself.
 */
export interface InitTemplate {
  /** Copies the base to `<dir>/<name>` (default `base`); its path. */
  copyTo(dir: string, name?: string): Promise<string>;
  close(): Promise<void>;
}

export async function initTemplate(): Promise<InitTemplate> {
  const folder = await tempDir();
  const r = await cli(["init", "--base", "base"], { cwd: folder, timeoutMs: 90_000 });
  if (r.code !== 0) throw new Error(`init exited ${r.code}: ${r.stderr}`);
  return {
    copyTo: async (dir, name = "base") => {
      const to = path.join(dir, name);
      await cp(path.join(folder, "base"), to, { recursive: true, preserveTimestamps: true });
      return to;
    },
    close: () => cleanup(folder),
  };
}

/** A CLI server process (`serve`, `mcp --http`) and the URL it logged. */
export interface ListeningProcess {
  url: string;
  child: import("node:child_process").ChildProcess;
  stderr(): string;
  /** Sends `signal` (SIGTERM) and waits for the exit; SIGKILL after 10 s. Resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Spawns the built CLI with `args` and resolves once it logs "listening on <url>" on stderr;
 * rejects (naming `what`, with its output) if it exits first or does not listen within 20 s.
 */
export function spawnListening(args: string[], options: { what: string; cwd?: string; env?: NodeJS.ProcessEnv }): Promise<ListeningProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: options.cwd ?? REPO, stdio: ["ignore", "pipe", "pipe"], env: options.env ?? process.env });
    let stderr = "";
    let stdout = "";
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(kill);
      }
      return exited;
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${options.what} did not start:\n${stderr}`));
      // A bound for a server that hangs, not a speed check: a loaded CI machine took over 20 s.
    }, 90_000);
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d.slice(0, 65_536 - stdout.length)));
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve({ url: m[1], child, stderr: () => stderr, stop });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${options.what} exited (${code}) before listening:\n${stderr}${stdout}`));
    });
  });
}
