/**
 * The OpenTelemetry API, loaded only once an application has registered something with it.
 *
 * `@opentelemetry/api` keeps everything an SDK registers (tracer and meter providers, the context
 * manager, the propagator) on one global object, `globalThis[Symbol.for("opentelemetry.js.api.1")]`.
 * Until that object exists every span and metric would be a no-op anyway, so the instrumentation
 * asks `liveApi()` first: one property read, no module load, no allocation. Importing ts-code-mode
 * stays free of the API's ~50 modules (issue 24: import cost), and a run without an SDK pays ~nothing.
 *
 * Once the global exists (the application, or `--otel`, registered an SDK) the API is required
 * synchronously — the same module instance any `import "@opentelemetry/api"` of the application
 * gets, and it reads that shared global whatever copy it is.
 */
import { createRequire } from "node:module";

export type OtelApi = typeof import("@opentelemetry/api");

/** Where @opentelemetry/api 1.x keeps its registered globals (api/src/internal/global-utils.ts). */
const GLOBAL_KEY = Symbol.for("opentelemetry.js.api.1");

/** undefined: not loaded yet; null: not installed (see requireApi). */
let api: OtelApi | null | undefined;

/** True when some SDK (or the application) has registered with the OpenTelemetry API in this process. */
export function telemetryRegistered(): boolean {
  return (globalThis as Record<symbol, unknown>)[GLOBAL_KEY] !== undefined;
}

/** The API when something is registered with it; undefined (nothing to record) otherwise. */
export function liveApi(): OtelApi | undefined {
  if ((globalThis as Record<symbol, unknown>)[GLOBAL_KEY] === undefined || api === null) return undefined;
  return (api ??= requireApi()) ?? undefined;
}

/**
 * `@opentelemetry/api` is an optional peer: an application that registers an SDK has it, and a
 * layout where our package cannot resolve that copy (say, a strict pnpm tree without the peer
 * declared) records nothing rather than failing every run. Said once, on stderr.
 */
function requireApi(): OtelApi | null {
  try {
    return createRequire(import.meta.url)("@opentelemetry/api") as OtelApi;
  } catch (err) {
    if ((err as { code?: unknown }).code !== "MODULE_NOT_FOUND") throw err;
    process.emitWarning("an OpenTelemetry SDK is registered, but ts-code-mode cannot load @opentelemetry/api (install it next to ts-code-mode: npm install @opentelemetry/api@^1.9): its runs are not traced", { code: "TCM_OTEL_API_MISSING" });
    return null;
  }
}
