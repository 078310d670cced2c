/** ts-code-mode as one MCP tool server: the server itself and its stdio and Streamable HTTP hosting. */
export { createCodeModeServer, DEFAULT_MAX_OUTPUT, MIN_MAX_OUTPUT, type CodeModeServer, type CodeModeServerOptions } from "./server.js";
export { serveStdio, type StdioServeOptions, type StdioServing } from "./stdio.js";
export { DEFAULT_MAX_SESSIONS, DEFAULT_MCP_PATH, McpAuthConfigError, serveHttp, type HttpServeOptions, type HttpServing } from "./http.js";
