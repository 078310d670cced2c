/**
 * A lock per (folder, name) that every process on this host sees: what serializes saves and
 * deletes of one workflow name across processes (FileWorkflowStore), so a TypeScript save and a
 * Python save of the same name, which write two different files, cannot interleave and remove each
 * other's file (issue 35.2).
 *
 * On Linux the lock is a unix socket bound in the abstract namespace (`\0ts-code-mode-lock/<hash>`):
 * binding is atomic (EADDRINUSE while another process holds it), and the kernel releases it when its
 * holder exits in any way, SIGKILL included, so there is no stale lock file to detect or steal, and
 * nothing is left on disk. It is scoped to the network namespace: processes in different network
 * namespaces (a container with its own network writing to a bind-mounted store) do not see each
 * other's locks. Elsewhere (macOS, Windows) there is no abstract namespace and the lock only
 * serializes the calls of this process (docs/storage.md says so).
 *
 * Within one process the socket cannot be bound twice either, so calls of this process queue on an
 * in-memory chain first; only the head of the chain binds the socket.
 */
import { createHash } from "node:crypto";
import net from "node:net";
import path from "node:path";
import { StorageError } from "../../errors.js";

/** How long a save waits for another process's save or delete of the same name before it fails. */
export const NAME_LOCK_TIMEOUT_MS = 30_000;

const ABSTRACT_SOCKETS = process.platform === "linux";

/** Per key: the tail of this process's queue for it. */
const queues = new Map<string, Promise<void>>();

export interface NameLockOptions {
  /** Give up after this long (default NAME_LOCK_TIMEOUT_MS). */
  timeoutMs?: number;
  /** What the lock guards, for the timeout's message ("save workflow \"x\""). */
  what: string;
}

/**
 * Runs `fn` while holding the lock of `name` in `folder` (an absolute path; callers pass a
 * realpath so two spellings of one folder share a lock). Throws StorageError (code "IO") when the
 * lock is not free within the timeout, without running `fn`.
 */
export async function withNameLock<T>(folder: string, name: string, options: NameLockOptions, fn: () => Promise<T>): Promise<T> {
  const key = lockKey(folder, name);
  const previous = queues.get(key) ?? Promise.resolve();
  let releaseQueue!: () => void;
  const mine = new Promise<void>((resolve) => (releaseQueue = resolve));
  const tail = previous.then(() => mine);
  queues.set(key, tail);
  try {
    await previous;
    const release = await acquire(key, options);
    try {
      return await fn();
    } finally {
      await release();
    }
  } finally {
    releaseQueue();
    if (queues.get(key) === tail) queues.delete(key);
  }
}

function lockKey(folder: string, name: string): string {
  return createHash("sha256").update(path.resolve(folder)).update("\0").update(name).digest("hex").slice(0, 40);
}

/** Binds the key's abstract socket, retrying while another process holds it; resolves to its release. */
async function acquire(key: string, options: NameLockOptions): Promise<() => Promise<void>> {
  if (!ABSTRACT_SOCKETS) return async () => undefined;
  const timeoutMs = options.timeoutMs ?? NAME_LOCK_TIMEOUT_MS;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const server = net.createServer();
    const bound = await new Promise<Error | null>((resolve) => {
      server.once("error", resolve);
      server.listen({ path: `\0ts-code-mode-lock/${key}`, exclusive: true }, () => resolve(null));
    });
    if (!bound) {
      // A held lock must not keep a process alive that has nothing else to do.
      server.unref();
      return () => new Promise<void>((resolve) => server.close(() => resolve()));
    }
    server.close();
    if ((bound as NodeJS.ErrnoException).code !== "EADDRINUSE") {
      throw new StorageError(`Could not ${options.what}: cannot take its lock (${(bound as NodeJS.ErrnoException).code ?? bound.message})`, { cause: bound });
    }
    if (Date.now() - started >= timeoutMs) {
      throw new StorageError(
        `Could not ${options.what}: another process has been saving or deleting it for over ${Math.round(timeoutMs / 1000)} s (it may be stopped); try again`,
      );
    }
    // Saves take milliseconds: poll fast at first, then back off, with jitter so waiters do not move in step.
    await new Promise((r) => setTimeout(r, Math.min(50, 1 + attempt * 2) * (0.5 + Math.random())));
  }
}
