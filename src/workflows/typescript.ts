/**
 * The TypeScript compiler, loaded on first use: importing it costs ~150 ms, so neither a process
 * start nor a workflow save that needs no parsing pays for it. Kept apart from signature.ts so the
 * package's declarations never mention `typescript`.
 */
import type ts from "typescript";

let typescript: Promise<typeof ts> | undefined;

export function loadTypeScript(): Promise<typeof ts> {
  typescript ??= import("typescript").then(
    (m) => m.default,
    (err: unknown) => {
      typescript = undefined; // let a later call retry instead of caching the failure forever
      throw err;
    },
  );
  return typescript;
}
