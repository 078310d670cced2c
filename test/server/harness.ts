/**
 * Spawns the built CLI's `serve` (port 0) and reads its URL from the "listening on" line. Each
 * server is stopped with SIGTERM (SIGKILL after a grace period) by `stop()`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { MAIN, REPO } from "../cli/harness.js";

export { cleanup, ensureBuilt, tempDir, REPO } from "../cli/harness.js";
export const TOKEN = "test-token-0123456789abcdef";

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function startServe(args: string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, "serve", "--port", "0", ...args], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"], env: options.env ?? process.env });
    let stderr = "";
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(kill);
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`serve did not start:\n${stderr}`));
    }, 20_000);
    child.stdout.resume();
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve({ url: m[1], child, stderr: () => stderr, stop });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before listening:\n${stderr}`));
    });
  });
}

/** fetch with the test token (unless `token: null`) and JSON in and out. */
export async function api(base: string, method: string, path: string, options: { json?: unknown; token?: string | null; headers?: Record<string, string>; body?: string | Uint8Array } = {}): Promise<{ status: number; body: unknown; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? TOKEN : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (options.json !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(new URL(path, base), { method, headers, body: options.json !== undefined ? JSON.stringify(options.json) : (options.body ?? null), signal: AbortSignal.timeout(60_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body, headers: res.headers };
}
