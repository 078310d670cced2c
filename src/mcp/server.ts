/**
 * One MCP server over one ts-code-mode Session. Transport-agnostic: stdio connects one of these,
 * Streamable HTTP one per MCP session (see ./http.ts). The server owns nothing it did not create;
 * closing the Session is the caller's job.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Session } from "../session.js";
import { SERVER_INSTRUCTIONS } from "./descriptions.js";
import { registerCodeModeTools } from "./tools.js";

import { DEFAULT_MAX_OUTPUT, MIN_MAX_OUTPUT, stderrLog } from "./limits.js";

export { DEFAULT_MAX_OUTPUT, MIN_MAX_OUTPUT, stderrLog } from "./limits.js";

export interface CodeModeServerOptions {
  /** Longest text a tool returns, in characters (default 24,000). */
  maxOutput?: number;
  /**
   * Offer add_dep/remove_dep. Default true; they are offered only when the executor also declares
   * the "depsInstall" capability.
   */
  runtimeDeps?: boolean;
  /** Reported to clients in the initialize result. */
  serverInfo?: { name: string; version: string };
  /** Where the server logs (never stdout, which may be the protocol stream). Default: stderr. */
  log?: (line: string) => void;
}

export interface CodeModeServer {
  server: McpServer;
  /** The MCP tool names, as `tools/list` returns them. */
  tools: string[];
}

export function createCodeModeServer(session: Session, options: CodeModeServerOptions = {}): CodeModeServer {
  const maxOutput = options.maxOutput ?? DEFAULT_MAX_OUTPUT;
  if (!Number.isInteger(maxOutput) || maxOutput < MIN_MAX_OUTPUT) {
    throw new TypeError(`createCodeModeServer: maxOutput must be a whole number of characters, at least ${MIN_MAX_OUTPUT}; got ${String(maxOutput)}`);
  }
  const server = new McpServer(options.serverInfo ?? { name: "ts-code-mode", version: "0.0.0" }, {
    capabilities: { tools: {} },
    instructions: SERVER_INSTRUCTIONS,
  });
  const tools = registerCodeModeTools(server, session, {
    maxOutput,
    runtimeDeps: options.runtimeDeps !== false && session.supports("depsInstall"),
    log: options.log ?? stderrLog,
  });
  return { server, tools };
}

