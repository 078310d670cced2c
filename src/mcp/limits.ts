/** Limits and the log line format of the MCP server, apart from server.ts so the CLI can read them without loading the SDK. */

/** Longest text a tool returns unless told otherwise (about 6,000 tokens). */
export const DEFAULT_MAX_OUTPUT = 24_000;
/** Below this the labels and cut markers would not fit. */
export const MIN_MAX_OUTPUT = 500;

export function stderrLog(line: string): void {
  process.stderr.write(`ts-code-mode mcp: ${line}\n`);
}
