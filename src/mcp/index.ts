/** ts-code-mode as one MCP tool server: the server itself and its stdio and Streamable HTTP hosting. */
export {
  createCodeModeServer,
  DEFAULT_MAX_OUTPUT,
  MIN_MAX_OUTPUT,
  type CodeModeMcpServer,
  type CodeModeServer,
  type CodeModeServerOptions,
  type McpJsonRpcMessage,
  type McpServerTransport,
} from "./server.js";
export { serveStdio, type StdioServeOptions, type StdioServing } from "./stdio.js";
export {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MCP_PATH,
  McpAuthConfigError,
  serveHttp,
  type HttpServeOptions,
  type HttpServing,
} from "./http.js";
export { ClientApprovals, DEFAULT_APPROVAL_TIMEOUT_MS, NO_ELICITATION_REASON, type ClientApprovalsOptions } from "./approvals.js";
export { MCP_SURFACES, type McpSurface } from "./tools.js";
