/**
 * One container running the guest runtime (entry.ts): created through the Docker Engine API with
 * the executor's locked-down HostConfig, reached over a unix socket in a private host folder that
 * is bind-mounted into the container (which has no network). Implements the GuestHandle the
 * subprocess executor's policy drives, so timeouts, crashes and restarts behave exactly as there.
 *
 * Everything the container sends is hostile: frames are size-capped (frames.ts) and each message
 * is checked against the protocol (../subprocess/messages.ts); a violation kills the container.
 */
import { chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import type { HostToGuest, GuestToHost } from "../rpc/protocol.js";
import type { WireError } from "../wire-error.js";
import { checkGuestMessage } from "../subprocess/messages.js";
import { STDERR_TAIL_CHARS, type ChildExit, type GuestHandle, type SpawnOptions } from "../subprocess/child-process.js";
import { encodeFrame, FrameReader } from "./frames.js";
import { statusOf, type DockerClient } from "./engine.js";
import { ENTRY_PATH } from "./image.js";
import { oomEvidence } from "./oom.js";

/** Inside the container: where the host's socket folder is mounted. */
export const SOCKET_DIR_IN_CONTAINER = "/run/ts-code-mode";
/** Every container this package starts carries this label (`containers prune` and the reaper look for it). */
export const CONTAINER_LABEL = "io.ts-code-mode";
/** The pid of the host process that owns the container (the reaper removes those whose owner is gone). */
export const OWNER_PID_LABEL = "io.ts-code-mode.owner-pid";
export const OWNER_HOST_LABEL = "io.ts-code-mode.owner-host";
/**
 * The uid of the owner process: one engine (a rootful podman socket, a shared Docker daemon) can
 * hold several users' sessions, and `containers prune --all` removes only its own user's.
 */
export const OWNER_UID_LABEL = "io.ts-code-mode.owner-uid";

/** The labels of a container this process starts. */
export function ownerLabels(): Record<string, string> {
  return { [CONTAINER_LABEL]: "1", [OWNER_PID_LABEL]: String(process.pid), [OWNER_HOST_LABEL]: os.hostname(), [OWNER_UID_LABEL]: String(currentUid()) };
}

/** This process's uid; -1 where there is none (Windows). */
export function currentUid(): number {
  return typeof process.getuid === "function" ? process.getuid() : -1;
}
/** Largest message a guest may send: namespace calls carry artifacts, so generous, but bounded. */
export const MAX_GUEST_FRAME_BYTES = 64 * 1024 * 1024;
/** Exit code of a process killed by SIGKILL (the kernel's OOM killer, or anyone else's) — or that called process.exit(137). */
const SIGKILL_EXIT = 137;
/** How long a guest that closed its socket has to exit by itself before it is removed. */
const CLOSE_GRACE_MS = 3_000;
const REMOVE_ATTEMPTS = 8;

export interface ContainerSpec {
  docker: DockerClient;
  image: string;
  /** The created container's config minus what each guest sets (command, socket mount, labels). */
  hostConfig: Docker.HostConfig;
  workdir: string;
  env: Record<string, string>;
  user: string;
  memoryMb: number | undefined;
  /** Runs once the container exists (the executor tracks ids for exec and cleanup). */
  onCreated?(container: Docker.Container): void;
}

export class ContainerGuest implements GuestHandle {
  readonly ready: Promise<void>;
  readonly exited: Promise<ChildExit>;
  private alive = true;
  private readyFlag = false;
  private killed = false;
  private socket: Socket | null = null;
  private server: Server | null = null;
  private container: Docker.Container | null = null;
  private fatal: WireError | null = null;
  private protocolViolation: string | null = null;
  private removal: Promise<void> | null = null;
  private socketDir: string | null = null;
  private markExited!: (exit: ChildExit) => void;

  constructor(
    private readonly spec: ContainerSpec,
    private readonly options: SpawnOptions,
  ) {
    this.exited = new Promise((resolve) => (this.markExited = resolve));
    this.ready = this.boot().catch(async (err: unknown) => {
      // Nothing of a failed start may stay behind: the socket, its folder, a created container.
      if (this.container) await this.remove();
      else {
        this.server?.close();
        if (this.socketDir) await rm(this.socketDir, { recursive: true, force: true });
        this.finish({ code: null, signal: null });
      }
      throw err;
    });
    // Nobody may be awaiting `ready` when the guest dies later; that is reported through `exited`.
    this.ready.catch(() => undefined);
  }

  get pid(): number | undefined {
    return undefined;
  }

  get isAlive(): boolean {
    return this.alive;
  }

  get isReady(): boolean {
    return this.readyFlag;
  }

  /** The container, once created (exec runs in it). */
  get handle(): Docker.Container | null {
    return this.container;
  }

  send(message: HostToGuest): void {
    if (!this.alive || !this.socket || this.socket.destroyed) throw new Error("the executor container is not running");
    this.socket.write(encodeFrame(message));
  }

  /** Containers are not frozen between runs (a pause would cost an API round trip per run); see capabilities(). */
  freeze(): boolean {
    return false;
  }

  resume(): void {}

  /** Only guests that stop a run on SIGINT (the Python runtime) are interrupted; the TypeScript guest interrupts itself. */
  interrupt(): boolean {
    return false;
  }

  async kill(): Promise<ChildExit> {
    if (!this.killed) {
      this.killed = true;
      this.socket?.destroy();
      this.server?.close();
      if (this.container) void this.remove();
      else if (this.alive) this.finish({ code: null, signal: "SIGKILL" });
    }
    const exit = await this.exited;
    await this.removal;
    return exit;
  }

  private async boot(): Promise<void> {
    const { docker } = this.spec;
    this.socketDir = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-sock-"));
    const [uid, gid] = this.spec.user.split(":").map((n) => Number.parseInt(n, 10));
    // The folder stays 0700: only its owner (the container's user) and host root may enter it.
    if (process.getuid?.() === 0 && uid !== undefined && Number.isInteger(uid)) await chown(this.socketDir, uid, gid ?? uid);
    const socketPath = path.join(this.socketDir, "host.sock");
    const connected = new Promise<Socket>((resolve, reject) => {
      const server = createServer((socket) => {
        // One guest per socket: a second connection is refused.
        if (this.socket) return void socket.destroy();
        this.socket = socket;
        server.close();
        resolve(socket);
      });
      server.once("error", reject);
      this.server = server;
      server.listen(socketPath);
    });
    await new Promise<void>((resolve, reject) => {
      this.server?.once("listening", resolve);
      this.server?.once("error", reject);
    });
    await chmod(socketPath, 0o666);
    if (this.killed) throw new Error("the executor container was stopped during start-up");
    const nodeArgs = this.options.maxMemoryMb !== undefined ? [`--max-old-space-size=${Math.max(16, Math.floor(this.options.maxMemoryMb * 0.75))}`] : [];
    const container = await docker.createContainer({
      Image: this.spec.image,
      Cmd: ["node", ...nodeArgs, ENTRY_PATH],
      Env: Object.entries({
        PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        HOME: "/tmp",
        ...this.spec.env,
        ...this.options.env,
        TS_CODE_MODE_SOCKET: `${SOCKET_DIR_IN_CONTAINER}/host.sock`,
      }).map(([k, v]) => `${k}=${v}`),
      WorkingDir: this.spec.workdir,
      User: this.spec.user,
      NetworkDisabled: this.spec.hostConfig.NetworkMode === "none",
      Labels: ownerLabels(),
      HostConfig: {
        ...this.spec.hostConfig,
        Mounts: [...(this.spec.hostConfig.Mounts ?? []), { Type: "bind", Source: this.socketDir, Target: SOCKET_DIR_IN_CONTAINER, ReadOnly: true }],
      },
    });
    this.container = container;
    this.spec.onCreated?.(container);
    if (this.killed) {
      await this.remove();
      throw new Error("the executor container was stopped during start-up");
    }
    await container.start();
    // After start: podman's wait ("not-running") returns at once, with -1, for a created container.
    void container.wait().then(
      (r: { StatusCode?: number }) => this.onContainerExit(typeof r.StatusCode === "number" ? r.StatusCode : null),
      () => this.onContainerExit(null),
    );
    const socket = await Promise.race([connected, this.exited.then((exit) => Promise.reject(startError(exit)))]);
    await new Promise<void>((resolve, reject) => {
      const reader = new FrameReader(MAX_GUEST_FRAME_BYTES, (raw) => {
        const checked = checkGuestMessage(raw);
        if (!checked.ok) return this.violation(checked.problem);
        const message: GuestToHost = checked.message;
        if (message.type === "ready") {
          this.readyFlag = true;
          resolve();
        } else if (message.type === "fatal") this.fatal = message.error;
        else this.options.onMessage(message);
      }, (problem) => this.violation(problem));
      socket.on("data", (chunk: Buffer) => reader.push(chunk));
      socket.on("error", () => undefined);
      // The guest closed its end: usually it is exiting (its exit code tells why, so wait for it);
      // if its code closed the socket and lives on, it cannot be reached any more and is stopped.
      socket.on("close", () => {
        if (this.alive) setTimeout(() => void this.stopIfStillRunning(), CLOSE_GRACE_MS).unref();
      });
      void this.exited.then((exit) => reject(startError(exit)));
    });
  }

  /**
   * After the guest closed its socket: a container still running is stopped (its code closed the
   * socket and cannot be reached). One that has exited is not: on a loaded machine the engine may
   * report its exit after the grace, and a kill then would hide its exit code (a guest SIGKILL, 137)
   * behind "stopped by the host".
   */
  private async stopIfStillRunning(): Promise<void> {
    if (!this.alive || this.killed || !this.container) return;
    const running = await this.container.inspect().then(
      (info) => info.State?.Running === true,
      () => false,
    );
    if (running && this.alive) await this.kill();
  }

  private violation(problem: string): void {
    this.protocolViolation ??= problem;
    void this.kill();
  }

  private async onContainerExit(code: number | null): Promise<void> {
    if (!this.alive) return;
    // Exit 137 that the host did not cause is the memory cap's OOM killer only when the engine or
    // the kernel says so (oom.ts); a guest SIGKILL or process.exit(137) is a crash with that code.
    const oom = !this.killed && code === SIGKILL_EXIT && this.container && this.options.maxMemoryMb !== undefined ? (await oomEvidence(this.container)).oomKilled : false;
    const stderrTail = !this.killed && code !== 0 ? await this.stderrTail() : "";
    this.finish({ code: this.killed ? null : code, signal: this.killed || oom ? "SIGKILL" : null, stderrTail, memoryExceededMb: oom ? (this.options.maxMemoryMb ?? null) : null });
    void this.remove();
  }

  private finish(exit: Pick<ChildExit, "code" | "signal"> & Partial<ChildExit>): void {
    if (!this.alive) return;
    this.alive = false;
    this.socket?.destroy();
    this.server?.close();
    this.markExited({ stderrTail: "", memoryExceededMb: null, ...exit, fatal: this.fatal, protocolViolation: this.protocolViolation });
  }

  /** The last lines the container wrote to stderr (V8's out-of-memory report lands there). */
  private async stderrTail(): Promise<string> {
    try {
      const raw = (await this.container?.logs({ stdout: false, stderr: true, tail: 50, follow: false })) as unknown as Buffer;
      return demux(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw))).slice(-STDERR_TAIL_CHARS);
    } catch {
      return "";
    }
  }

  private remove(): Promise<void> {
    this.removal ??= (async () => {
      if (this.container) await removeContainer(this.container);
      this.finish({ code: null, signal: "SIGKILL" });
      if (this.socketDir) await rm(this.socketDir, { recursive: true, force: true });
    })();
    return this.removal;
  }
}

/**
 * Remove a container, retrying: an engine may refuse while the container is still stopping
 * ("container state improper" on podman), which once left exited containers behind. Gone (404) is done.
 */
async function removeContainer(container: Docker.Container): Promise<void> {
  for (let attempt = 0; attempt < REMOVE_ATTEMPTS; attempt++) {
    try {
      await container.remove({ force: true, v: true });
      return;
    } catch (err) {
      if (statusOf(err) === 404) return;
      await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
    }
  }
}

function startError(exit: ChildExit): Error {
  const err = new Error(`the executor container exited during start-up (${exit.code !== null ? `exit code ${exit.code}` : "stopped"})${exit.stderrTail ? `: ${exit.stderrTail.trim().slice(-2_000)}` : ""}`);
  err.name = "ExecutorStartError";
  return err;
}

/** The Docker API's multiplexed log stream (8-byte headers) as text; unframed input is returned as is. */
export function demux(buf: Buffer): string {
  const parts: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length) {
    const kind = buf[i];
    if (kind !== 0 && kind !== 1 && kind !== 2) return buf.toString("utf8");
    const size = buf.readUInt32BE(i + 4);
    parts.push(buf.subarray(i + 8, Math.min(buf.length, i + 8 + size)));
    i += 8 + size;
  }
  return Buffer.concat(parts).toString("utf8");
}
