/**
 * Who may talk to the HTTP server. Fail closed: a server reachable from other machines needs a
 * bearer token unless auth is switched off explicitly; tokens are compared in constant time; and a
 * server bound to loopback only answers requests addressed to loopback names, so a web page cannot
 * reach it through DNS rebinding.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import net from "node:net";

/** Shorter tokens are refused: a bearer token is the only thing guarding code execution. */
export const MIN_TOKEN_LENGTH = 16;

export interface AuthConfig {
  /** Address the server binds. */
  host: string;
  /** Bearer token clients must send; undefined means none. */
  token?: string;
  /** Explicit consent to serve a non-loopback address without a token. */
  noAuth?: boolean;
}

/** Why this configuration must not start, or null when it may. */
export function authConfigProblem(config: AuthConfig): string | null {
  if (config.token !== undefined && config.noAuth) return "--token and --no-auth contradict each other; give one";
  if (config.token !== undefined && config.token.length < MIN_TOKEN_LENGTH) {
    return `the token must be at least ${MIN_TOKEN_LENGTH} characters long, e.g. one made by: openssl rand -hex 32`;
  }
  if (config.token === undefined && !config.noAuth && !isLoopbackHost(config.host)) {
    return (
      `refusing to serve ${config.host} without a token: anyone who can reach it could run code on this machine. ` +
      "Give --token (e.g. --token \"$(openssl rand -hex 32)\"), bind 127.0.0.1, or pass --no-auth if the network is trusted"
    );
  }
  return null;
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and "localhost". 0.0.0.0 and :: listen everywhere, so they are not. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (net.isIPv4(h)) return h.startsWith("127.");
  if (net.isIPv6(h)) return h === "::1" || /^::ffff:127\./.test(h) || /^0{0,4}(:0{0,4}){6}:0{0,3}1$/.test(h);
  return false;
}

/**
 * True when `header` is `Bearer <token>`. Both sides are hashed first so the comparison runs over
 * equal-length digests in constant time and leaks neither the token nor its length.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer +(\S+)\s*$/i.exec(header ?? "");
  const given = createHash("sha256").update(match?.[1] ?? "").digest();
  const wanted = createHash("sha256").update(token).digest();
  return timingSafeEqual(given, wanted) && match !== null;
}

/**
 * For a server bound to loopback: the Host header (and Origin, when a browser sends one) must name
 * a loopback host. A DNS-rebinding page reaches 127.0.0.1 under its own hostname and fails here.
 */
export function loopbackRequestAllowed(req: IncomingMessage): boolean {
  const host = hostnameOf(req.headers.host);
  if (host === null || !isLoopbackHost(host)) return false;
  const origin = req.headers.origin;
  if (origin === undefined || origin === "null") return origin === undefined;
  try {
    return isLoopbackHost(new URL(origin).hostname);
  } catch {
    return false;
  }
}

/** `localhost:8080` → `localhost`; `[::1]:80` → `[::1]`. */
function hostnameOf(hostHeader: string | undefined): string | null {
  if (!hostHeader) return null;
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return null;
  }
}
