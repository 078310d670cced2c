/**
 * One `deno` process running the guest program (driver.ts) with no permissions at all: no
 * `--allow-*` flag and `--no-prompt`, so every file, network, environment, subprocess and FFI
 * access is denied. Its environment holds only DENO_DIR (a private temp folder, also where the
 * guest program lives) and switches that keep Deno quiet and offline. stdin/stdout carry frames
 * (see driver.ts); stderr is kept (bounded) because V8's out-of-memory report lands there.
 *
 * This module owns the process and the framing; the engine (engine.ts) owns the policy.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { installedPackage } from "./installed-package.js";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { Freezer, withDeathSignal } from "../../freeze.js";

export interface Frame {
  header: Record<string, unknown>;
  buffers: ArrayBuffer[];
}

export interface DenoExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderrTail: string;
  /** Set when the host ended the process itself (kill()). */
  killed: boolean;
}

const STDERR_TAIL_CHARS = 8_192;
/** A frame larger than this from the guest is treated as a broken channel. */
const MAX_FRAME_BYTES = 256 * 1_048_576;
/** Every frame starts with these four bytes ("TCM1"), then the u32 LE length of its body. */
export const FRAME_MAGIC = 0x314d4354;
const HEADER_BYTES = 8;
/** Frames from the guest carry the process's key right after the length (see driver.ts). */
const KEY_BYTES = 16;
/** The `b` of a frame without buffers (most frames): one array, not one per frame. */
const NO_BUFFERS: readonly number[] = [];

/**
 * How deno is run. No --allow-* flag and --no-prompt: every permission is denied. Imports: only
 * the guest program itself and Deno's built-in modules (node:*, which act with the same denied
 * permissions) — --deny-import refuses every remote host (Deno otherwise allows deno.land, jsr.io,
 * esm.sh, ... by default, also from eval and new Function), --no-remote and --cached-only refuse
 * remote modules before any request, --no-npm refuses npm: specifiers. No --location, no config,
 * no lock file. The deno dir is unusable (see DenoProcess), so web storage (localStorage, the
 * Cache API) and every cache fail instead of writing to disk.
 */
export function denoArgs(memoryMb: number, script: string, readable?: string): string[] {
  return [
    "run",
    "--no-prompt",
    "--no-config",
    "--no-lock",
    "--quiet",
    "--no-remote",
    "--no-npm",
    "--cached-only",
    "--deny-import",
    "--deny-net",
    // The Python mode's one grant: reading the Pyodide folder (a --deny-read would override it).
    ...(readable === undefined ? ["--deny-read"] : [`--allow-read=${readable}`]),
    "--deny-write",
    "--deny-env",
    "--deny-sys",
    "--deny-run",
    "--deny-ffi",
    `--v8-flags=--max-old-space-size=${memoryMb}`,
    script,
  ];
}

/** The deno binary shipped by the `deno` npm package (installed next to ts-code-mode; tests get it from scripts/prerequisites.mjs). */
export function denoBinaryPath(): string {
  const dir = installedPackage("deno")?.dir;
  if (dir === undefined) throw new Error("the deno engine needs the deno package, which ships the binary: npm install deno@2.9.6");
  const bin = path.join(dir, process.platform === "win32" ? "deno.exe" : "deno");
  if (!existsSync(bin)) throw new Error(`the deno engine needs the deno package, but its binary is missing at ${bin}: npm install deno@2.9.6`);
  return bin;
}

export class DenoProcess {
  readonly exited: Promise<DenoExit>;
  readonly ready: Promise<void>;
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private stderrTail = "";
  private chunks: Buffer[] = [];
  private buffered = 0;
  private alive = true;
  private killedByHost = false;
  private markReady!: () => void;

  private readonly key = randomBytes(KEY_BYTES);
  /** Only a process that dies with the host may be frozen (a frozen one cannot see stdin close). */
  private readonly freezer: Freezer;

  /**
   * `cwd`: a folder of the engine's (the guest cannot read it). `blocker`: a regular FILE; DENO_DIR
   * points below it, so deno can create nothing there — not even as root (ENOTDIR) — and nothing a
   * guest does (localStorage, caches, from any thread or Node-compat module) is written anywhere.
   */
  constructor(
    binary: string,
    script: string,
    cwd: string,
    blocker: string,
    memoryMb: number,
    private readonly onFrame: (frame: Frame) => void,
    readable?: string,
  ) {
    const { command, args, freezable } = withDeathSignal(binary, denoArgs(memoryMb, script, readable));
    this.child = spawn(command, args, {
      cwd,
      env: { DENO_DIR: path.join(blocker, "deno-dir"), DENO_NO_UPDATE_CHECK: "1", DENO_NO_PROMPT: "1", NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.freezer = new Freezer(freezable ? () => (this.alive && this.child.pid !== undefined && this.child.kill("SIGSTOP") ? [this.child.pid] : []) : null);
    this.child.stdin.write(this.key);
    let failReady!: (err: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      this.markReady = resolve;
      failReady = reject;
    });
    this.child.stdin.on("error", () => undefined);
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
    });
    this.child.stdout.on("data", (chunk: Buffer) => this.receive(chunk));
    this.exited = new Promise<DenoExit>((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        if (!this.alive) return;
        this.alive = false;
        this.freezer.forget();
        const exit = { code, signal, stderrTail: this.stderrTail, killed: this.killedByHost };
        failReady(new Error(`the deno process exited before it was ready (${describeExit(exit)})`));
        resolve(exit);
      };
      this.child.on("error", (err) => {
        this.stderrTail += `\n${err.message}`;
        done(null, null);
      });
      // "close", not "exit": stderr is complete by then (V8's out-of-memory report).
      this.child.on("close", done);
    });
    // The ready promise may be abandoned when the process is killed before it is ready.
    this.ready.catch(() => undefined);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.alive;
  }

  /**
   * Resident memory of the process in bytes, from /proc (Linux); null where that is not available.
   * V8's --max-old-space-size does not count ArrayBuffers, so the engine also watches this.
   */
  rssBytes(): number | null {
    if (!this.alive || this.child.pid === undefined || process.platform !== "linux") return null;
    try {
      const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${this.child.pid}/status`, "utf8"));
      return m ? Number(m[1]) * 1024 : null;
    } catch {
      return null;
    }
  }

  send(header: Record<string, unknown>, buffers: readonly ArrayBuffer[] = []): void {
    if (!this.alive) return;
    let size = 0;
    for (const b of buffers) size += b.byteLength;
    // Object.assign, not `{ ...header, b }`: on Node 20 a spread followed by more properties takes V8's slow path (microseconds, every frame).
    const head = JSON.stringify(Object.assign(Object.assign({}, header), { b: buffers.length === 0 ? NO_BUFFERS : buffers.map((b) => b.byteLength) }));
    const headBytes = Buffer.byteLength(head, "utf8");
    // One buffer written in place (every byte of it is set below), not a prefix, a header and a concat of the three.
    const frame = Buffer.allocUnsafe(12 + headBytes + size);
    frame.writeUInt32LE(FRAME_MAGIC, 0);
    frame.writeUInt32LE(4 + headBytes + size, 4);
    frame.writeUInt32LE(headBytes, 8);
    frame.write(head, 12, headBytes, "utf8");
    let at = 12 + headBytes;
    for (const b of buffers) {
      frame.set(new Uint8Array(b), at);
      at += b.byteLength;
    }
    this.child.stdin.write(frame);
  }

  /**
   * Stop the process between runs (SIGSTOP): nothing of the guest — a promise loop, a message
   * loop, a Node-compat timer, a worker thread — executes until resume(). Only where the process
   * was started with a parent-death signal (see ../../freeze.ts): a frozen process cannot notice
   * its stdin closing, so without it a host that dies would leave it behind.
   */
  freeze(): boolean {
    return this.freezer.freeze();
  }

  resume(): void {
    this.freezer.resume();
  }

  get isFrozen(): boolean {
    return this.freezer.isFrozen;
  }

  /** Kill the process (SIGKILL: a busy guest cannot be asked). Resolves when it is gone. */
  async kill(): Promise<DenoExit> {
    if (this.alive) {
      this.killedByHost = true;
      this.child.kill("SIGKILL");
    }
    return this.exited;
  }

  private receive(chunk: Buffer): void {
    // Chunks are joined only once a whole frame is there: a large value arrives in many chunks.
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.buffered < HEADER_BYTES) return;
      if (this.chunks.length > 1 && (this.chunks[0] as Buffer).length < HEADER_BYTES) this.join();
      const first = this.chunks[0] as Buffer;
      const len = first.readUInt32LE(4);
      if (first.readUInt32LE(0) !== FRAME_MAGIC || len > MAX_FRAME_BYTES || len < 4) return this.malformed();
      if (len < KEY_BYTES + 4) return this.malformed();
      if (this.buffered < 8 + len) return;
      if (first.length < 8 + len) this.join();
      const data = this.chunks[0] as Buffer;
      const end = 8 + len;
      // A frame without this process's key was written by agent code, not the driver.
      if (this.key.compare(data, 8, 8 + KEY_BYTES) !== 0) return this.malformed("a frame without the driver's key (agent code writing to the protocol channel)");
      const frame = parseFrame(data, 8 + KEY_BYTES, end);
      if (!frame) return this.malformed();
      this.chunks = end < data.length ? [data.subarray(end)] : [];
      this.buffered -= end;
      if (frame.header["t"] === "ready") this.markReady();
      else this.onFrame(frame);
    }
  }

  private join(): void {
    this.chunks = [Buffer.concat(this.chunks)];
  }

  private malformed(what = "something that is not a frame"): void {
    this.chunks = [];
    this.buffered = 0;
    this.stderrTail += `\n[ts-code-mode] the sandbox wrote ${what} to its protocol channel (stdout)`;
    void this.kill();
  }
}

/** A frame's body, `data[start, end)`: u32 LE header length, the JSON header, the buffers its `b` array sizes. */
function parseFrame(data: Buffer, start: number, end: number): Frame | null {
  try {
    const headLen = data.readUInt32LE(start);
    if (headLen > end - start - 4) return null;
    const header: unknown = JSON.parse(data.toString("utf8", start + 4, start + 4 + headLen));
    if (typeof header !== "object" || header === null || Array.isArray(header)) return null;
    const sizes = (header as { b?: unknown }).b;
    const buffers: ArrayBuffer[] = [];
    let at = start + 4 + headLen;
    if (Array.isArray(sizes)) {
      for (const size of sizes) {
        if (typeof size !== "number" || !Number.isInteger(size) || size < 0 || at + size > end) return null;
        buffers.push(new Uint8Array(data.subarray(at, at + size)).buffer);
        at += size;
      }
    }
    return { header: header as Record<string, unknown>, buffers };
  } catch {
    return null;
  }
}

export function describeExit(exit: Pick<DenoExit, "code" | "signal">): string {
  return exit.signal ? `signal ${exit.signal}` : `exit code ${String(exit.code)}`;
}
