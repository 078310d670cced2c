/**
 * The TypeScript compiler, loaded on first use: importing it costs ~150 ms, so neither a process
 * start nor a workflow save that needs no parsing pays for it. Kept apart from signature.ts so the
 * package's declarations never mention `typescript`.
 *
 * It is an optional dependency (23 MB of the install): without it, `loadTypeScript()` gives null,
 * once says so on stderr, and its callers fall back to lighter readers (signature-light.ts, the
 * console's acorn highlighting). Any other failure to load it is thrown as is.
 */
import type ts from "typescript";
import { INTEGRATION_PACKAGES, loadPeer, MissingPeerError } from "../adapters/peer.js";

let typescript: Promise<typeof ts | null> | undefined;
/** On globalThis: the bundled build may hold this module twice (the main entry's chunk and dist/console), and the notice is once per process. */
const NOTICED = Symbol.for("ts-code-mode.typescript-missing-noticed");

/** The `typescript` package, or null when it is not installed. */
export function loadTypeScript(): Promise<typeof ts | null> {
  typescript ??= loadPeer<{ default: typeof ts }>(INTEGRATION_PACKAGES.typescript).then(
    (m) => m.default,
    (err: unknown) => {
      if (err instanceof MissingPeerError) {
        const g = globalThis as { [NOTICED]?: boolean };
        if (!g[NOTICED]) {
          g[NOTICED] = true;
          process.stderr.write(`ts-code-mode: the optional package "typescript" is not installed: workflow parameters are read by a lighter parser (types as written) and the console highlights without it. For exact signatures: npm install ${INTEGRATION_PACKAGES.typescript.install}\n`);
        }
        return null;
      }
      typescript = undefined; // let a later call retry instead of caching the failure forever
      throw err;
    },
  );
  return typescript;
}
