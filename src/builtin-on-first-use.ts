/**
 * Node built-in modules that only some paths use, loaded where they are first used instead of at
 * import (issue 42, cold start). A static `import "node:http"` (or zlib, worker_threads, v8) makes
 * every process that imports the package load and initialise it — `node:http` alone brings a
 * dozen internal modules — although a run of `1+1` never serves HTTP, inflates a spec or starts a
 * worker. Sync call sites use `builtin(name)`; async ones may just `await import(name)`.
 * test/package/lazy-import.test.ts checks that importing the package loads none of these.
 */
import { createRequire } from "node:module";

/** The built-ins loaded on first use, by specifier. */
interface OnFirstUse {
  "node:http": typeof import("node:http");
  "node:v8": typeof import("node:v8");
  "node:worker_threads": typeof import("node:worker_threads");
  "node:zlib": typeof import("node:zlib");
}

// Built-ins resolve the same from any base. A fixed one keeps `import.meta.url` out of this module: the
// bundle rewrites it to this file's path in dist/, which the container image (frames.ts runs there)
// would then have to hold.
const require = createRequire("/");

/** The modules loaded so far: a second `require` of a built-in still costs ~1 µs, and the container's frames ask per message. */
const loaded: Partial<OnFirstUse> = {};

/** The built-in module `name`, loaded now if it was not yet. */
export function builtin<K extends keyof OnFirstUse>(name: K): OnFirstUse[K] {
  return (loaded[name] ??= require(name) as OnFirstUse[K]) as OnFirstUse[K];
}
