/**
 * What `import { z } from "zod"` means inside the bundled build (scripts/bundle.mjs aliases it here):
 * the same `z`, loaded on its first use instead of at import. zod is ~95 modules and ~60 ms of a
 * fresh process here; the main entry, the CLI's commands and the MCP handshake mostly never need it
 * (issue 24). Sources keep importing "zod" for their types and run unbundled under the tests.
 *
 * The load is synchronous because validation is: `require()` of zod's ES module entry (Node ≥ 20.19)
 * gives the very module instance `import "zod"` gives, so a user's schemas, the MCP SDK's and ours are
 * one zod with one registry. An older Node cannot require an ES module; there the CommonJS build
 * loads instead (zod keeps its registry on globalThis and answers `instanceof` by traits, so two
 * copies still interoperate).
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { z as Zod } from "zod";
import { lazy } from "./lazy.js";

function load(): typeof Zod {
  const require = createRequire(import.meta.url);
  try {
    return (require(fileURLToPath(import.meta.resolve("zod"))) as { z: typeof Zod }).z;
  } catch (err) {
    if ((err as { code?: unknown }).code !== "ERR_REQUIRE_ESM") throw err;
    return (require("zod") as { z: typeof Zod }).z;
  }
}

export const z: typeof Zod = lazy(load);
