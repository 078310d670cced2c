/**
 * The MCP SDK, loaded on first use. Importing its client and transports costs ~0.4 s of module
 * evaluation (zod schemas for the whole protocol); every process that loads ts-code-mode (the CLI,
 * every session) would pay that even with no MCP tool configured. So this module imports only
 * types statically, loads the client core and the one transport a server needs when the first
 * connection opens, and classifies SDK errors by their stable protocol codes.
 */
import type { Client as ClientType } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport as StdioType } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StreamableHTTPClientTransport as HttpType, StreamableHTTPError as HttpErrorType } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export type { Tool } from "@modelcontextprotocol/sdk/types.js";
export type Client = ClientType;
export type StdioClientTransport = StdioType;
export type StreamableHTTPClientTransport = HttpType;

/** JSON-RPC / MCP error codes (stable protocol numbers, the SDK's `ErrorCode`). */
export const MCP_ERROR = {
  ConnectionClosed: -32000,
  RequestTimeout: -32001,
  MethodNotFound: -32601,
  InvalidParams: -32602,
} as const;

let clientModule: Promise<typeof import("@modelcontextprotocol/sdk/client/index.js")> | null = null;
let stdioModule: Promise<typeof import("@modelcontextprotocol/sdk/client/stdio.js")> | null = null;
let httpModule: Promise<typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js")> | null = null;
/** Set once the HTTP transport is loaded: only then can a StreamableHTTPError exist. */
let HttpError: (new (...args: never[]) => HttpErrorType) | null = null;

export async function loadClient(): Promise<typeof ClientType> {
  clientModule ??= import("@modelcontextprotocol/sdk/client/index.js");
  return (await clientModule).Client;
}

export async function loadStdioTransport(): Promise<typeof StdioType> {
  stdioModule ??= import("@modelcontextprotocol/sdk/client/stdio.js");
  return (await stdioModule).StdioClientTransport;
}

export async function loadHttpTransport(): Promise<typeof HttpType> {
  httpModule ??= import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const mod = await httpModule;
  HttpError = mod.StreamableHTTPError;
  return mod.StreamableHTTPClientTransport;
}

/** The SDK's McpError (protocol error with a numeric `code`), recognised by its name and shape. */
export function mcpErrorCode(e: unknown): number | null {
  if (!(e instanceof Error) || e.name !== "McpError") return null;
  const code = (e as { code?: unknown }).code;
  return typeof code === "number" ? code : null;
}

/** The HTTP status of a StreamableHTTPError (-1 for "unexpected content type"), or null. */
export function httpErrorStatus(e: unknown): number | null {
  if (!HttpError || !(e instanceof HttpError)) return null;
  return typeof e.code === "number" ? e.code : null;
}
