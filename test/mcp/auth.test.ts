/** Who may reach the HTTP server: loopback detection, bearer tokens, the fail-closed configuration check. */
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { authConfigProblem, bearerMatches, isLoopbackHost, loopbackRequestAllowed } from "../../src/mcp/auth.js";

const TOKEN = "0123456789abcdef-token";

describe("isLoopbackHost", () => {
  it("knows loopback addresses and names", () => {
    for (const h of ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"]) {
      expect(isLoopbackHost(h), h).toBe(true);
    }
  });

  it("treats wildcard and other addresses as reachable from outside", () => {
    for (const h of ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "example.com", "128.0.0.1", "::2"]) {
      expect(isLoopbackHost(h), h).toBe(false);
    }
  });
});

describe("bearerMatches", () => {
  it("accepts exactly `Bearer <token>`", () => {
    expect(bearerMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(bearerMatches(`bearer ${TOKEN}`, TOKEN)).toBe(true);
  });

  it("refuses a missing, different, longer, shorter or scheme-less token", () => {
    for (const header of [undefined, "", TOKEN, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, "Bearer ", `Basic ${TOKEN}`, `Bearer ${TOKEN} extra`]) {
      expect(bearerMatches(header, TOKEN), String(header)).toBe(false);
    }
  });
});

describe("authConfigProblem (fail closed)", () => {
  it("allows loopback without a token, and any host with a token", () => {
    expect(authConfigProblem({ host: "127.0.0.1" })).toBeNull();
    expect(authConfigProblem({ host: "0.0.0.0", token: TOKEN })).toBeNull();
  });

  it("refuses a non-loopback host without a token unless auth is switched off explicitly", () => {
    expect(authConfigProblem({ host: "0.0.0.0" })).toMatch(/refusing to serve 0\.0\.0\.0 without a token/);
    expect(authConfigProblem({ host: "0.0.0.0", noAuth: true })).toBeNull();
  });

  it("refuses short tokens and a token together with --no-auth", () => {
    expect(authConfigProblem({ host: "127.0.0.1", token: "short" })).toMatch(/at least 16 characters/);
    expect(authConfigProblem({ host: "127.0.0.1", token: TOKEN, noAuth: true })).toMatch(/contradict/);
  });
});

describe("loopbackRequestAllowed", () => {
  const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
  it("accepts requests addressed to loopback names, with or without a loopback Origin", () => {
    expect(loopbackRequestAllowed(req({ host: "127.0.0.1:8765" }))).toBe(true);
    expect(loopbackRequestAllowed(req({ host: "localhost:8765", origin: "http://localhost:3000" }))).toBe(true);
    expect(loopbackRequestAllowed(req({ host: "[::1]:8765" }))).toBe(true);
  });

  it("refuses other Host names (DNS rebinding) and foreign origins", () => {
    expect(loopbackRequestAllowed(req({ host: "evil.example:8765" }))).toBe(false);
    expect(loopbackRequestAllowed(req({}))).toBe(false);
    expect(loopbackRequestAllowed(req({ host: "127.0.0.1:8765", origin: "https://evil.example" }))).toBe(false);
    expect(loopbackRequestAllowed(req({ host: "127.0.0.1:8765", origin: "null" }))).toBe(false);
  });
});
