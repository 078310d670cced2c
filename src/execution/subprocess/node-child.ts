/**
 * How a guest process is started: the command, flags, stdio, environment and folder of child.js
 * under this Node (or of another guest program), and the one process a CLI `run` may start before
 * anything else is loaded (startEarlyChild). It imports nothing but Node's own modules and small
 * leaves, so the bin can start the child first (issue 42, cold start); ChildHandle
 * (./child-process.ts) owns the process once started.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { GuestProgram, SpawnOptions } from "./child-process.js";
import type { HostToGuest } from "../rpc/protocol.js";
import { withDeathSignal } from "../freeze.js";
import { GUEST_MARKER_ENV } from "./process-tree.js";
import { SIGINT_INTERRUPT_FLAG, SIGINT_INTERRUPTS } from "./interrupt.js";
import { configKey } from "./spare-children.js";

/** What starting a guest needs: SpawnOptions without the message listener, which belongs to its handle. */
export type LaunchOptions = Omit<SpawnOptions, "onMessage">;

/** A started guest process: its marker (in its environment, inherited by what it starts) and whether it may be frozen. */
export interface StartedGuest {
  process: ChildProcess;
  marker: string;
  freezable: boolean;
}

/**
 * Whether the child gets its own session and process group (`detached`), so that killing the group
 * ends what the agent's code started. Not on Linux: there the /proc sweep of process-tree.ts finds
 * more (detached and setsid processes too), and a new session puts the child in its own scheduler
 * autogroup, which made each tool call's round trip about twice as slow on a busy machine. Not on
 * Windows, where `detached` opens a console window.
 */
const OWN_SESSION = process.platform !== "linux" && process.platform !== "win32";

/** child.js next to this module in dist/; from the TypeScript sources (tests), the built copy. */
export function childScriptPath(): string {
  const here = fileURLToPath(import.meta.url);
  const sibling = path.join(path.dirname(here), "child.js");
  if (here.endsWith(".js") && existsSync(sibling)) return sibling;
  const root = path.resolve(path.dirname(here), "..", "..", "..");
  const built = path.join(root, "dist", "execution", "subprocess", "child.js");
  if (!existsSync(built)) throw new Error(`SubprocessExecutor needs the built child script at ${built}; run \`npm run build\` first`);
  return built;
}

/**
 * Start the guest: `options.program`, or child.js under this Node with explicit flags (the host's
 * own, such as a test runner's loaders or --inspect, must not leak into the child). Started so that
 * it dies with the host (see ../freeze.ts), which lets it be frozen.
 */
export function startGuest(options: LaunchOptions): StartedGuest {
  const marker = newMarker();
  const program = options.program ?? nodeChild(options);
  const { command, args, freezable } = withDeathSignal(program.command, program.args);
  const child = spawn(command, args, {
    ...(options.program ? { stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"] } : { serialization: "advanced", stdio: ["ignore", "pipe", "pipe", "ipc"] }),
    env: { ...options.env, [GUEST_MARKER_ENV]: marker },
    cwd: options.cwd,
    detached: OWN_SESSION,
  });
  return { process: child, marker, freezable };
}

/**
 * A new guest marker: 128 random bits, as hex. Read from /dev/urandom where there is one rather than
 * through node:crypto, whose loading (6–10 ms) came before the spawn of a library's early child:
 * that spawn is on the critical path of a fresh process's first result.
 */
function newMarker(): string {
  try {
    const fd = openSync("/dev/urandom", "r");
    try {
      const bytes = Buffer.alloc(16);
      if (readSync(fd, bytes, 0, 16, null) === 16) return bytes.toString("hex");
    } finally {
      closeSync(fd);
    }
  } catch {
    // No /dev/urandom (Windows): node:crypto below.
  }
  const { randomUUID } = createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
  return randomUUID();
}

/**
 * Whether `child` keeps the host's event loop alive (its process, IPC channel and pipes): a child
 * no session took yet must not; a session's child does.
 */
export function keepHostAlive(child: ChildProcess, keep: boolean): void {
  const method = keep ? "ref" : "unref";
  child[method]();
  for (const handle of [child.channel, child.stdout, child.stderr] as (Partial<Record<"ref" | "unref", () => void>> | null | undefined)[]) handle?.[method]?.();
}

/** The host's environment as the child's (Node's process.env may hold undefined values). */
export function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** child.js under this Node, with the flags its options ask for. */
function nodeChild(options: LaunchOptions): GuestProgram {
  const script = childScriptPath();
  return { command: process.execPath, args: [...execArgv(script, options), script] };
}

function execArgv(script: string, options: LaunchOptions): string[] {
  const args: string[] = SIGINT_INTERRUPTS && !options.shared ? [SIGINT_INTERRUPT_FLAG] : [];
  if (options.maxMemoryMb !== undefined) args.push(`--max-old-space-size=${options.maxMemoryMb}`);
  const p = options.permissions;
  if (p) {
    args.push("--experimental-permission", "--disable-warning=ExperimentalWarning");
    // The child must read its own code (dist/ of this package).
    const ownCode = path.resolve(path.dirname(script), "..", "..");
    for (const dir of [ownCode, ...(p.fsRead ?? [])]) args.push(`--allow-fs-read=${path.resolve(dir)}`);
    for (const dir of p.fsWrite ?? []) args.push(`--allow-fs-write=${path.resolve(dir)}`);
    if (p.childProcess) args.push("--allow-child-process");
  }
  return args;
}

// ---- the early child -----------------------------------------------------------------------------

/** What a started guest did before its handle listened: the handle gets it all, in order, when it takes the process. */
type HeldEvent = ["message", unknown] | ["exit", number | null, NodeJS.Signals | null] | ["error", Error];

/** The variable that names a child's import folders (guest-runtime.ts reads it at start). */
const IMPORT_BASES_ENV = "TS_CODE_MODE_IMPORT_BASES";

interface EarlyChild {
  key: string;
  /** Started before its session's import folders were known: they are sent to it when it is taken. */
  basesLater: boolean;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  started: StartedGuest;
  held: HeldEvent[];
  hold: { message: (m: unknown) => void; exit: (code: number | null, signal: NodeJS.Signals | null) => void; error: (err: Error) => void };
}

let early: EarlyChild | null = null;

/** How `startEarlyChild` starts its child. */
export interface EarlyChildOptions {
  /**
   * The session's import folders are not known yet (`import "ts-code-mode"` starts the child before
   * any storage exists): the child is started without them and takes any session whose child would
   * differ only in them, which sends them to it before its first run.
   */
  basesLater?: boolean;
  /** Killed when no session took it within this long (an unref'd timer); default: kept while the process lives. */
  idleMs?: number;
}

/**
 * Start the child a session of `options` would start, now: the CLI's bin does this for a `run` before
 * it loads anything else, and `import "ts-code-mode"` before the rest of the library is loaded
 * (./early-start.ts), so the child's node start-up overlaps the host's own (issue 42 item 1).
 * It does not keep the host alive, dies with it, and what it sends (its "ready") is held until a
 * ChildHandle takes it (takeEarlyChild). Throws when it cannot be started (no built child.js).
 */
export function startEarlyChild(options: LaunchOptions, { basesLater = false, idleMs }: EarlyChildOptions = {}): void {
  if (early) return;
  if (basesLater) options = withoutImportBases(options);
  const started = startGuest(options);
  const held: HeldEvent[] = [];
  const hold: EarlyChild["hold"] = {
    message: (m) => void held.push(["message", m]),
    exit: (code, signal) => void held.push(["exit", code, signal]),
    error: (err) => void held.push(["error", err]),
  };
  started.process.on("message", hold.message).once("exit", hold.exit).once("error", hold.error);
  keepHostAlive(started.process, false);
  const entry: EarlyChild = { key: configKey(options), basesLater, idleTimer: undefined, started, held, hold };
  if (idleMs !== undefined) {
    entry.idleTimer = setTimeout(() => {
      if (early !== entry) return;
      early = null;
      drop(entry);
    }, idleMs);
    entry.idleTimer.unref();
  }
  early = entry;
}

/**
 * The early child, when it is the very child `options` describe (same flags, environment, folder
 * and import folders) and still running; the caller (ChildHandle) listens to its process, then calls
 * `release()`, which hands over what the process sent meanwhile and lets it keep the host alive. Any
 * other early child is killed: the first child this process launches decides, so an early child
 * that does not fit would never be used.
 */
export function takeEarlyChild(options: LaunchOptions): { started: StartedGuest; release: () => void } | null {
  const taken = early;
  early = null;
  if (!taken) return null;
  clearTimeout(taken.idleTimer);
  const { process: child } = taken.started;
  const exited = taken.held.some(([event]) => event === "exit" || event === "error") || child.exitCode !== null || child.signalCode !== null;
  if (exited || taken.key !== configKey(taken.basesLater ? withoutImportBases(options) : options)) {
    drop(taken);
    return null;
  }
  const release = () => {
    child.off("message", taken.hold.message).off("exit", taken.hold.exit).off("error", taken.hold.error);
    keepHostAlive(child, true);
    // Its context imports from the session's folders, as the child started for the session would (guest-runtime.ts).
    if (taken.basesLater) child.send({ type: "open", importBases: importBasesOf(options) } satisfies HostToGuest);
    for (const [event, ...args] of taken.held) child.emit(event, ...args);
    taken.held.length = 0;
  };
  return { started: taken.started, release };
}

/** The early child not taken yet: its pid and how many events it holds for its handle (tests, diagnostics). */
export function earlyChild(): { pid: number | undefined; held: number } | null {
  return early && { pid: early.started.process.pid, held: early.held.length };
}

/** `options` without the import folders in the child's environment (what an early child started without them is compared by). */
function withoutImportBases(options: LaunchOptions): LaunchOptions {
  const { [IMPORT_BASES_ENV]: _bases, ...env } = options.env;
  const { importBases: _importBases, ...rest } = options;
  return { ...rest, env };
}

/** The session's import folders: as SpawnOptions names them, else as its environment does. */
function importBasesOf(options: LaunchOptions): string[] {
  if (options.importBases) return options.importBases;
  try {
    const bases: unknown = JSON.parse(options.env[IMPORT_BASES_ENV] ?? "[]");
    return Array.isArray(bases) && bases.every((b) => typeof b === "string") ? bases : [];
  } catch {
    return [];
  }
}

function drop(taken: EarlyChild): void {
  const { process: child } = taken.started;
  child.off("message", taken.hold.message);
  // Its exit still needs a listener until it comes: an 'error' without one would throw.
  child.on("error", () => undefined);
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}
