/**
 * What `import "ts-code-mode"` does first (issue 42 item 1, cold start): start the child the first
 * subprocess session (the default executor) will take, before the rest of the library is loaded,
 * so the child's node start-up overlaps the host's import instead of following the session's start.
 * dist/index.js (written by scripts/bundle.mjs) imports this module, then the library.
 *
 * The session's storage, and so the folders its guest imports packages from, is not known yet: the
 * child starts without them and gets them when a session takes it (node-child.ts, `basesLater`).
 * A session that would start another child (other environment, folder, flags, executor) ends it.
 * Nobody's child costs little: it never keeps the process alive, dies with it, and is killed when
 * no session took it within SPARE_IDLE_MS. TS_CODE_MODE_EARLY_CHILD=0 turns it off (a process that
 * imports the library but runs no subprocess session).
 */
import { startEarlyChild, stringEnv } from "./node-child.js";
import { SPARE_IDLE_MS } from "./spare-children.js";

/** Set to "0" in the environment: `import "ts-code-mode"` starts no child. */
export const EARLY_CHILD_ENV = "TS_CODE_MODE_EARLY_CHILD";

if (process.env[EARLY_CHILD_ENV] !== "0") {
  try {
    startEarlyChild({ maxMemoryMb: undefined, permissions: undefined, env: stringEnv(process.env), cwd: process.cwd() }, { basesLater: true, idleMs: SPARE_IDLE_MS });
  } catch {
    // Not startable here (no built child.js, ...): the session starts its child the ordinary way and reports why.
  }
}
