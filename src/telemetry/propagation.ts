/**
 * W3C trace context across processes: `traceparent`/`tracestate` (and baggage, whatever the
 * registered propagator carries) out with our HTTP requests, in from the requests we serve.
 * Without an SDK nothing is added or read.
 */
import { liveApi } from "./api.js";
import type { TraceContext } from "./spans.js";

/** Adds the active context's propagation headers to `headers` (mutated and returned). */
export function injectTraceHeaders<H extends Record<string, string>>(headers: H): H {
  const api = liveApi();
  if (api) api.propagation.inject(api.context.active(), headers);
  return headers;
}

/**
 * The context a request's headers carry (its `traceparent`), for the spans serving it.
 * `get` reads one header by lower-case name.
 */
export function extractTraceContext(get: (name: string) => string | string[] | null | undefined): TraceContext | undefined {
  const api = liveApi();
  if (!api) return undefined;
  return api.propagation.extract(api.context.active(), null, {
    get: (_carrier, key) => get(key.toLowerCase()) ?? undefined,
    keys: () => [],
  }) as unknown as TraceContext;
}

/**
 * `fetch` that sends the active trace context: for clients whose requests are made by a library
 * (the MCP SDK's HTTP transport) rather than by our own code.
 */
export const tracedFetch: typeof fetch = (input, init) => {
  const api = liveApi();
  if (!api) return fetch(input, init);
  const carrier: Record<string, string> = {};
  api.propagation.inject(api.context.active(), carrier);
  if (Object.keys(carrier).length === 0) return fetch(input, init);
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  for (const [k, v] of Object.entries(carrier)) headers.set(k, v);
  return fetch(input, { ...init, headers });
};
