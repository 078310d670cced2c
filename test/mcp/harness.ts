/**
 * Drives the BUILT `ts-code-mode mcp` the way an MCP client does: the SDK's Client over stdio
 * (StdioClientTransport spawns `node dist/cli/main.js mcp ...`) or over Streamable HTTP (the
 * server is spawned, its URL read from the "listening on" line it logs to stderr).
 */
import { spawn } from "node:child_process";
import { cp, mkdir } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { MAIN, REPO, spawnListening, type ListeningProcess } from "../cli/harness.js";
import { waitFor } from "../helpers/processes.js";

export { cleanup, cli, ensureBuilt, MAIN, REPO, tempDir } from "../cli/harness.js";

export const EXAMPLE_TOOLS = path.join(REPO, "examples", "tools");

export interface StdioConnection {
  client: Client;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
  /** The server process's pid. */
  pid: number | null;
}

/** Spawns `node <command...>` (default: the built CLI's `mcp` with `args`) and connects a Client (default: a new one) over stdio. */
export async function connectStdio(args: string[], options: { cwd: string; command?: string; fullArgs?: string[]; client?: Client; env?: Record<string, string> }): Promise<StdioConnection> {
  const transport = new StdioClientTransport({
    command: options.command ?? process.execPath,
    args: options.fullArgs ?? [MAIN, "mcp", ...args],
    cwd: options.cwd,
    // What a desktop client passes (the SDK's default), plus the tests' shared Pyodide snapshot
    // folder (vitest.config.ts) so a Python sandbox server never writes into the user's ~/.cache.
    env: { ...getDefaultEnvironment(), ...(process.env.TCM_PYODIDE_CACHE_DIR ? { TCM_PYODIDE_CACHE_DIR: process.env.TCM_PYODIDE_CACHE_DIR } : {}), ...options.env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const client = options.client ?? new Client({ name: "ts-code-mode-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close(), pid: transport.pid };
}

/** A base folder at `<dir>/base` with the example tools copied into base/tools. */
export async function baseWithExampleTools(dir: string): Promise<string> {
  const base = path.join(dir, "base");
  await mkdir(base, { recursive: true });
  await cp(EXAMPLE_TOOLS, path.join(base, "tools"), { recursive: true });
  return base;
}

/** True while a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Resolves once `check()` is true; rejects after `limitMs` (a hang guard, not a timing assertion). */
export function waitUntil(check: () => boolean | Promise<boolean>, what: string, limitMs = 20_000): Promise<void> {
  return waitFor(check, what, limitMs, 50);
}

/** The text of a tool result's first content block. */
export function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  const first = content[0];
  if (!first || first.type !== "text") throw new Error(`expected a text result, got ${JSON.stringify(result)}`);
  return first.text;
}

export function structuredOf<T = Record<string, unknown>>(result: unknown): T {
  return (result as CallToolResult).structuredContent as T;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** Runs `node dist/cli/main.js ...args` to completion with stdin closed; like cli() of the CLI harness, plus `env`. */
export function runCli(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: options.cwd, env: options.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end();
  });
}

export type HttpServerProcess = ListeningProcess;

/** Spawns `mcp --http 0 ...` and waits for the URL it logs. */
export function startHttpServer(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<HttpServerProcess> {
  return spawnListening(["mcp", "--http", "0", ...args], { what: "the HTTP server", ...options });
}

export async function connectHttp(url: string, token?: string, client = new Client({ name: "ts-code-mode-test", version: "1.0.0" })): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), token !== undefined ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {});
  await client.connect(transport);
  return client;
}
