/**
 * Pyodide memory snapshots for the Python sandbox's cold start. Loading Pyodide runs CPython's
 * start-up and imports runtime.py (~3 s of CPU); restoring a snapshot of the interpreter's memory
 * taken right after that takes ~0.3 s. The snapshot is made ONCE per (pyodide version, deno
 * version, guest program) by the HOST: a separate deno process with the guest's permissions loads
 * Pyodide and the adapter — no agent code ever runs in it — and writes the snapshot to its stdout;
 * the host stores it atomically (temp + rename) in a per-user cache folder. A guest only gets
 * --allow-read on that one file, never write.
 *
 * File format: SNAPSHOT_HEADER_BYTES of header (64 hex characters of the SHA-256 of the rest, then
 * "\n"s), the snapshot. The host checks the
 * digest when the file is new to it (changed size, mtime or inode); a bad file is removed and
 * rebuilt. The guest checks the digest again (the file could change after the host's check) and
 * loads normally on any mismatch.
 *
 * Cache folder: $TCM_PYODIDE_CACHE_DIR, else $XDG_CACHE_HOME/ts-code-mode/pyodide, else
 * ~/.cache/ts-code-mode/pyodide (created 0700). TCM_PYODIDE_SNAPSHOT=off: no snapshot, every
 * start loads Pyodide (and nothing is written to the cache).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, stat, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { writeFileAtomic } from "../../../storage/atomic.js";
import { withDeathSignal } from "../../freeze.js";
import { installedPackage } from "./installed-package.js";
import { denoArgs } from "./process.js";
import { pyodideSnapshotMaker, SNAPSHOT_HEADER_BYTES, type SnapshotRef } from "./pyodide.js";

const DIGEST_HEX = 64;
/** The maker's output bound (a snapshot is ~30 MB). */
const MAX_SNAPSHOT_BYTES = 512 * 1_048_576;
const MAKE_TIMEOUT_MS = 120_000;

export function snapshotCacheDir(): string {
  const own = process.env.TCM_PYODIDE_CACHE_DIR;
  if (own) return path.resolve(own);
  const base = process.env.XDG_CACHE_HOME ? path.resolve(process.env.XDG_CACHE_HOME) : path.join(os.homedir(), ".cache");
  return path.join(base, "ts-code-mode", "pyodide");
}

function packageVersion(name: string): string {
  return installedPackage(name)?.version ?? "unknown";
}

/** Files the host has verified in this process: path → the stat it had, and its digest. */
const verified = new Map<string, { stamp: string; sha256: string }>();
/**
 * Builds in flight, one per file (concurrent engines share it). A build is stopped (its deno process
 * killed) once every engine waiting for it has gone: a closed session leaves no process behind.
 */
interface Build {
  result: Promise<SnapshotRef | undefined>;
  /** Engines waiting that may still leave; one that cannot leave (no signal) pins the build. */
  waiters: number;
  pinned: boolean;
  stop: AbortController;
}
const building = new Map<string, Build>();

const stampOf = (s: { size: number; mtimeMs: number; ino: number }): string => `${s.size}:${s.mtimeMs}:${s.ino}`;

function headerFor(snapshot: Uint8Array): Buffer {
  const digest = createHash("sha256").update(snapshot).digest("hex");
  return Buffer.from(digest.padEnd(SNAPSHOT_HEADER_BYTES, "\n"), "latin1");
}

/** The verified snapshot at `file`, or undefined (missing or bad; a bad one is removed). */
async function checked(file: string): Promise<SnapshotRef | undefined> {
  const before = await stat(file).catch(() => null);
  if (!before) return undefined;
  const known = verified.get(file);
  if (known && known.stamp === stampOf(before)) return { file, sha256: known.sha256 };
  const data = await readFile(file).catch(() => null);
  const header = headerFor(data?.subarray(SNAPSHOT_HEADER_BYTES) ?? Buffer.alloc(0));
  if (!data || data.length <= SNAPSHOT_HEADER_BYTES || !header.equals(data.subarray(0, SNAPSHOT_HEADER_BYTES))) {
    await unlink(file).catch(() => undefined);
    return undefined;
  }
  const sha256 = header.subarray(0, DIGEST_HEX).toString("latin1");
  verified.set(file, { stamp: stampOf(before), sha256 });
  return { file, sha256 };
}

/** Runs the maker in a deno process with the guest's permissions; the snapshot bytes, or undefined. */
async function make(binary: string, folder: string, program: string, memoryMb: number, signal: AbortSignal): Promise<Buffer | undefined> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-pysnap-"));
  try {
    const script = path.join(dir, "maker.js");
    await writeFile(script, program);
    const blocker = path.join(dir, "no-deno-dir");
    await writeFile(blocker, "");
    const { command, args } = withDeathSignal(binary, denoArgs(memoryMb, script, folder));
    const child = spawn(command, args, {
      cwd: dir,
      env: { DENO_DIR: path.join(blocker, "deno-dir"), DENO_NO_UPDATE_CHECK: "1", DENO_NO_PROMPT: "1", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "ignore"],
      signal,
      killSignal: "SIGKILL",
    });
    const chunks: Buffer[] = [];
    let size = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_SNAPSHOT_BYTES) child.kill("SIGKILL");
      else chunks.push(chunk);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), MAKE_TIMEOUT_MS);
    const code = await new Promise<number | null>((resolve) => {
      child.on("error", () => resolve(null));
      child.on("close", (c) => resolve(c));
    }).finally(() => clearTimeout(timer));
    return code === 0 && size > 0 && size <= MAX_SNAPSHOT_BYTES ? Buffer.concat(chunks) : undefined;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The snapshot for this guest program, made first if there is none (or it is bad). Undefined when
 * it cannot be had (the maker failed, the cache folder is not writable, its path has a comma):
 * the guest then loads Pyodide normally.
 */
export async function pyodideSnapshot(
  binary: string,
  folder: string,
  guestFiles: Record<string, string>,
  memoryMb: number,
  signal?: AbortSignal,
): Promise<SnapshotRef | undefined> {
  if (process.env.TCM_PYODIDE_SNAPSHOT === "off") return undefined;
  const program = pyodideSnapshotMaker(folder, guestFiles);
  const pyodideVersion = packageVersion("pyodide");
  const key = createHash("sha256").update(JSON.stringify([pyodideVersion, packageVersion("deno"), program])).digest("hex").slice(0, 24);
  const dir = snapshotCacheDir();
  const file = path.join(dir, `pyodide-${pyodideVersion}-${key}.snap`);
  // deno's --allow-read takes a comma-separated list: a comma would widen or break the grant.
  if (file.includes(",")) return undefined;
  const ready = await checked(file);
  if (ready) return ready;
  let build = building.get(file);
  if (!build) {
    const stop = new AbortController();
    const result = (async () => {
      const bytes = await make(binary, folder, program, memoryMb, stop.signal);
      if (!bytes) return undefined;
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFileAtomic(file, [headerFor(bytes), bytes]);
      return checked(file);
    })()
      .catch(() => undefined)
      .finally(() => building.delete(file));
    build = { result, waiters: 0, pinned: false, stop };
    building.set(file, build);
  }
  return waitForBuild(build, signal);
}

/** The build's snapshot, or undefined at once when `signal` aborts (the last waiter to leave stops it). */
function waitForBuild(build: Build, signal: AbortSignal | undefined): Promise<SnapshotRef | undefined> {
  if (!signal) {
    build.pinned = true;
    return build.result;
  }
  if (signal.aborted) return Promise.resolve(undefined);
  build.waiters += 1;
  return new Promise((resolve) => {
    const leave = (): void => {
      build.waiters -= 1;
      if (build.waiters === 0 && !build.pinned) build.stop.abort();
      resolve(undefined);
    };
    signal.addEventListener("abort", leave, { once: true });
    void build.result.then((ref) => {
      signal.removeEventListener("abort", leave);
      resolve(ref);
    });
  });
}
