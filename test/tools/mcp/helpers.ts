/**
 * Shared pieces of the MCP adapter tests: where the fixture server is, a temp tools folder with
 * YAML files, the HTTP fixture as a real child process on a free port, process liveness by pid,
 * and a TypeScript type check of generated declarations.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { waitFor as waitForCondition } from "../../helpers/processes.js";

export const FIXTURE_SERVER = fileURLToPath(new URL("../../fixtures/mcp/server.mjs", import.meta.url));
export const EVERYTHING_SERVER = fileURLToPath(new URL("../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));
/** The node running the tests: a stdio server must not depend on which `node` is first on PATH. */
export const NODE = process.execPath;

/** A YAML mapping as text; JSON is valid YAML and keeps quoting exact. */
export function yamlText(doc: Record<string, unknown>): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** A fresh temp folder holding the given `<name>.yaml` files. */
export async function toolsDir(files: Record<string, Record<string, unknown> | string>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-mcp-"));
  for (const [name, doc] of Object.entries(files)) await writeFile(path.join(dir, `${name}.yaml`), typeof doc === "string" ? doc : yamlText(doc));
  return dir;
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
}

/** The fixture over stdio, as a tool YAML document. */
export function fixtureTool(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, type: "mcp", description: "Fixture math server", tags: ["math", "test"], transport: "stdio", command: NODE, args: [FIXTURE_SERVER], ...extra };
}

export function isAlive(pid: number | null | undefined): boolean {
  if (pid === null || pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function waitFor(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  return waitForCondition(check, what, ms);
}

export interface HttpFixture {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Start the fixture in HTTP mode, on a free port unless `port` is given (the server picks it and
 * prints it); `requireKey` makes it answer 401 without `x-api-key: <key>`.
 */
export async function startHttpFixture(options: { port?: number; requireKey?: string } = {}): Promise<HttpFixture> {
  const args = [FIXTURE_SERVER, "--http", String(options.port ?? 0), ...(options.requireKey !== undefined ? ["--require-key", options.requireKey] : [])];
  const child = spawn(NODE, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    // A bound for a fixture that hangs, not a speed check (a loaded CI machine is slow to start node).
    const timer = setTimeout(() => reject(new Error(`HTTP fixture did not start: ${stderr}`)), 90_000);
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`HTTP fixture exited with ${code}: ${stderr}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
    },
  };
}

export { typeErrors } from "../../helpers/typecheck.js";
