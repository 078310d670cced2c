/**
 * One span per MCP request our server answers (`tools/call run_code`, `resources/read`, ...),
 * around each handler of the protocol server. A request
 * whose `params._meta` carries a `traceparent` (as MCP clients that propagate context put it) is
 * parented by it; over HTTP the request's span (server.ts) is the parent otherwise.
 */
import { liveApi } from "./api.js";
import { ATTR } from "./names.js";
import { extractTraceContext } from "./propagation.js";
import { inSpan } from "./spans.js";

interface McpRequest {
  method: string;
  params?: { name?: unknown; _meta?: Record<string, unknown> } | undefined;
}

/**
 * Wraps every request handler `protocol` (the MCP SDK's Server) has in a span. Called once all
 * handlers are registered: the SDK registers some in its constructor (a capability declared in the
 * options gets its handlers at once), so wrapping setRequestHandler alone would miss tools/call.
 * The handlers live in the protocol's method → handler map; if a later SDK keeps them elsewhere,
 * test/telemetry/mcp-otel.test.ts fails.
 */
export function traceMcpRequests(protocol: object): void {
  const handlers = (protocol as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map)) return;
  for (const [method, handler] of handlers as Map<string, Handler>) {
    handlers.set(method, (request: McpRequest, extra: unknown) => (liveApi() ? traced(request, () => handler(request, extra)) : handler(request, extra)));
  }
}

type Handler = (request: McpRequest, extra: unknown) => unknown;

function traced(request: McpRequest, handle: () => unknown): Promise<unknown> {
  const method = String(request.method);
  const target = typeof request.params?.name === "string" ? request.params.name : undefined;
  const attributes: Record<string, string> = { [ATTR.mcpMethod]: method, [ATTR.rpcSystem]: "jsonrpc", [ATTR.rpcMethod]: method };
  if (method === "tools/call" && target !== undefined) {
    attributes[ATTR.genAiOperation] = "execute_tool";
    attributes[ATTR.genAiToolName] = target;
  }
  const meta = request.params?._meta;
  const parent = typeof meta?.traceparent === "string" ? extractTraceContext((k) => (typeof meta[k] === "string" ? (meta[k] as string) : undefined)) : undefined;
  return inSpan(target === undefined ? method : `${method} ${target}`, attributes, async () => handle(), { kind: "server", parent });
}
