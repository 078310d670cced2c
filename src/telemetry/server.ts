/**
 * The SERVER span of one HTTP request we serve (`serve`, MCP over HTTP), parented by the request's
 * `traceparent`: the run it starts and the run's tool calls then sit in the caller's trace.
 */
import { ATTR } from "./names.js";
import { extractTraceContext } from "./propagation.js";
import { inSpan, type Span } from "./spans.js";
import { liveApi } from "./api.js";

export interface ServedRequest {
  method: string;
  path: string;
  /** One request header by lower-case name. */
  header: (name: string) => string | undefined;
}

/**
 * Runs `handle` (which answers the request and returns its status and, once known, its route
 * template) inside the request's span; the span is named `METHOD route`.
 */
export function traceServedRequest(req: ServedRequest, handle: (span: Span | undefined) => Promise<{ status: number; route?: string | undefined }>): Promise<void> {
  if (!liveApi()) return handle(undefined).then(() => undefined);
  const attributes = { [ATTR.httpMethod]: req.method, [ATTR.urlPath]: req.path };
  return inSpan(req.method, attributes, async (span) => {
    const { status, route } = await handle(span);
    if (!span) return;
    span.setAttribute(ATTR.httpStatus, status);
    if (route !== undefined && route !== "*" && route !== "/*") {
      span.setAttribute(ATTR.httpRoute, route);
      span.updateName(`${req.method} ${route}`);
    }
    // HTTP server spans: only 5xx is an error of ours (semantic conventions).
    if (status >= 500) {
      span.setAttribute(ATTR.errorType, String(status));
      span.setStatus({ code: 2 });
    }
  }, { kind: "server", parent: extractTraceContext(req.header) });
}
