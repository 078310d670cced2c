/**
 * The floor of "MCP server ready" in bench/cold.mjs: the bare MCP SDK (which loads zod) answering
 * initialize and tools/list over stdio with one tool, and nothing of ours.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "floor", version: "1" });
server.registerTool("noop", { description: "does nothing" }, () => ({ content: [{ type: "text", text: "" }] }));
await server.connect(new StdioServerTransport());
