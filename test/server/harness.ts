/**
 * Spawns the built CLI's `serve` (port 0) and reads its URL from the "listening on" line. Each
 * server is stopped with SIGTERM (SIGKILL after a grace period) by `stop()`.
 */
import { spawnListening, type ListeningProcess } from "../cli/harness.js";

export { cleanup, ensureBuilt, tempDir, REPO } from "../cli/harness.js";
export const TOKEN = "test-token-0123456789abcdef";

export type ServeProcess = ListeningProcess;

export function startServe(args: string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<ServeProcess> {
  return spawnListening(["serve", "--port", "0", ...args], { what: "serve", ...options });
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
