/**
 * One span per MCP request our server answers (`tools/call run_code`, `resources/read`, ...), at
 * the one place every handler is registered: the protocol server's setRequestHandler. A request
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

/** What setRequestHandler looks like on the MCP SDK's protocol classes (loosely: we only wrap it). */
type Handler = (request: McpRequest, extra: unknown) => unknown;
interface HandlerRegistry {
  setRequestHandler: (schema: unknown, handler: Handler) => void;
}

/** Wraps every request handler registered on `protocol` from now on in a span. */
export function traceMcpRequests(protocol: object): void {
  const registry = protocol as HandlerRegistry;
  const register = registry.setRequestHandler.bind(registry);
  registry.setRequestHandler = (schema, handler) => register(schema, (request, extra) => (liveApi() ? traced(request, () => handler(request, extra)) : handler(request, extra)));
}

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
