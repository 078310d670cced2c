/**
 * Issue 32 item 6: the host never dies because of a guest. Node's default (`--unhandled-rejections=
 * throw`) ends a host process on any rejection nobody handles, so every test runs with those
 * semantics for host code: an unhandled rejection fails the test it happened in (or, past the last
 * test, the file). Registered as a vitest setup file, so it runs in every worker (forks included).
 *
 * Rejections of an in-process guest's own promises are not the host's: InProcessExecutor routes
 * them to the run's stderr (src/execution/in-process/guest-failures.ts). They are made in the
 * guest's vm realm, so their prototype chain does not end in this realm's `Object.prototype`.
 */
import { afterAll, afterEach } from "vitest";

/**
 * One listener per process, wherever this file is evaluated again: vitest evaluates setup files
 * before each test file, and files of the shared-process project (vitest.config.ts) run one after
 * another in one worker. A rejection left over from an earlier file fails the next file's first
 * test instead of going unseen.
 */
const CAUGHT = Symbol.for("ts-code-mode.test.host-rejections");
const processState = process as NodeJS.Process & { [CAUGHT]?: unknown[] };
const caught: unknown[] = processState[CAUGHT] ?? listen();

/** An object made in another realm (a vm context): not an instance of this realm's Object. */
function otherRealm(value: unknown): boolean {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  return !(value instanceof Object) && Object.getPrototypeOf(value) !== null;
}

function listen(): unknown[] {
  const list: unknown[] = [];
  processState[CAUGHT] = list;
  process.on("unhandledRejection", (reason: unknown, promise: Promise<unknown>) => {
    if (otherRealm(promise) || otherRealm(reason)) return;
    list.push(reason);
  });
  return list;
}

function failOnCaught(): void {
  if (caught.length === 0) return;
  const reasons = caught.splice(0);
  const text = reasons.map((r) => (r instanceof Error ? (r.stack ?? `${r.name}: ${r.message}`) : String(r))).join("\n---\n");
  throw new Error(`${reasons.length} unhandled rejection(s) in host code (a host under Node's default would have exited 1):\n${text}`, { cause: reasons[0] });
}

/** Node reports unhandled rejections after the microtask queue drains: let one macrotask turn pass first. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

afterEach(async () => {
  await turn();
  failOnCaught();
});

afterAll(async () => {
  await turn();
  failOnCaught();
});
