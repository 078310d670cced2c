/**
 * HttpToolAdapter against a real local HTTP server, called through a ToolRegistry (so argument
 * validation runs as it does for agents): request building, response decoding, status mapping,
 * secrets, timeouts, aborts, size cap and redirects.
 */
import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolError } from "../../../src/errors.js";
import { HttpToolAdapter, type HttpToolAdapterOptions } from "../../../src/tools/adapters/http/adapter.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { freePort, json, startServer, type SeenRequest, type TestServer } from "./server.js";

const SECRET = "s3cr3t-Tok3n-value-42";
const API_KEY = "k3y-Value-99";
const ENV = { TCM_TEST_TOKEN: SECRET, TCM_TEST_KEY: API_KEY };

let server: TestServer;
let other: TestServer;

/** Echo of what the server received, as the `echo` routes answer it. */
interface Echo {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

function echo(req: SeenRequest, res: http.ServerResponse): void {
  json(res, 200, { method: req.method, url: req.url, headers: req.headers, body: req.body });
}

/** Writes 64 KiB chunks for as long as the client keeps reading. */
function endless(res: http.ServerResponse): void {
  res.on("error", () => undefined);
  res.writeHead(200, { "content-type": "application/octet-stream" });
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const pump = () => {
    while (!res.destroyed && res.write(chunk)) {
      /* keep writing until the socket pushes back */
    }
    if (!res.destroyed) res.once("drain", pump);
  };
  pump();
}

function route(req: SeenRequest, res: http.ServerResponse): void {
  const url = new URL(req.url, "http://localhost");
  const kind = url.pathname.startsWith("/v1/r/") ? url.pathname.slice("/v1/r/".length) : "echo";
  switch (kind) {
    case "echo":
      return echo(req, res);
    case "json":
      return json(res, 200, { hello: "world", n: [1, 2] });
    case "problem-json":
      res.writeHead(200, { "content-type": "application/problem+json" });
      return void res.end('{"title":"ok"}');
    case "text":
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      return void res.end("plain text é");
    case "latin1":
      res.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" });
      return void res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    case "binary":
      res.writeHead(200, { "content-type": "image/png" });
      return void res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]));
    case "octet":
      res.writeHead(200, { "content-type": "application/octet-stream" });
      return void res.end(Buffer.from([1, 2, 3]));
    case "unknown-utf8":
      res.writeHead(200, { "content-type": "application/x-thing" });
      return void res.end("abc");
    case "unknown-bytes":
      res.writeHead(200);
      return void res.end(Buffer.from([0xff, 0xfe, 0x00]));
    case "empty":
      res.writeHead(204);
      return void res.end();
    case "bad-json":
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end("{nope");
    case "status": {
      const status = Number(url.searchParams.get("status"));
      res.writeHead(status, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ error: `failed with ${status}` }));
    }
    case "long-error":
      res.writeHead(500, { "content-type": "text/plain" });
      return void res.end(`${"x".repeat(5_000)}END`);
    case "binary-error":
      res.writeHead(500, { "content-type": "image/png" });
      return void res.end(Buffer.alloc(300, 1));
    case "reflect":
      // A careless server that puts the request headers into its error body.
      return json(res, 401, { error: "denied", received: req.headers, again: `auth was ${req.headers.authorization ?? ""}` });
    case "reflect-encoded": {
      // A server that echoes the credential encoded: a debug dump, a JWT-like blob, a query string.
      const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
      const bytes = Buffer.from(token);
      return json(res, 401, {
        base64: bytes.toString("base64"),
        base64url: bytes.toString("base64url"),
        hex: bytes.toString("hex"),
        HEX: bytes.toString("hex").toUpperCase(),
        url: encodeURIComponent(token),
        form: new URLSearchParams({ t: token }).toString(),
        // The token one and two bytes into a base64 stream: its own base64 is not a substring there.
        inside1: Buffer.from(`xx${JSON.stringify({ authorization: req.headers.authorization })}`).toString("base64"),
        inside2: Buffer.from(`xy${token}z`).toString("base64url"),
      });
    }
    case "hang":
      return;
    case "stream":
      return endless(res);
    case "sized":
      res.writeHead(200, { "content-type": "text/plain", "content-length": 5_000 });
      return void res.end("y".repeat(5_000));
    case "redirect-same":
      res.writeHead(302, { location: "/v1/r/echo" });
      return void res.end();
    case "redirect-cross":
      res.writeHead(307, { location: `${other.url}/v1/r/echo` });
      return void res.end();
    case "redirect-loop":
      res.writeHead(302, { location: "/v1/r/redirect-loop" });
      return void res.end();
    default:
      res.writeHead(404);
      res.end("no such route");
  }
}

function apiDoc(baseUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "api",
    type: "http",
    base_url: `${baseUrl}/v1`,
    headers: { Authorization: "Bearer ${TCM_TEST_TOKEN}", "X-Api-Key": "${TCM_TEST_KEY}", "X-Client": "ts-code-mode" },
    timeout: 5,
    endpoints: {
      get_user: { path: "/users/{id}", params: { id: {} } },
      search: { path: "/search", params: { q: { required: true }, tag: { type: "array", items: "string" }, limit: { type: "integer", default: 20 }, exact: { type: "boolean" } } },
      create: {
        method: "POST",
        path: "/users",
        params: { name: { required: true }, tags: { type: "array" }, admin: { type: "boolean", default: false }, meta: { type: "object" }, trace: { in: "query" } },
      },
      remove: { method: "DELETE", path: "/users/{id}", params: { id: {}, "If-Match": { in: "header" } } },
      head: { method: "HEAD", path: "/users/{id}", params: { id: {} } },
      fetch: { path: "/r/{kind}", params: { kind: {}, status: { type: "integer" }, token: {} } },
    },
    ...extra,
  };
}

function registry(doc: Record<string, unknown> = apiDoc(server.url), options: HttpToolAdapterOptions = {}): ToolRegistry {
  const r = new ToolRegistry();
  r.register(HttpToolAdapter.fromDocument(doc, "api.yaml", { env: ENV, ...options }));
  return r;
}

/** The error a promise rejects with (fails the test if it resolves). */
async function caught(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ToolError);
    return e as ToolError;
  }
  throw new Error("expected a rejection");
}

function expectNoSecret(e: Error & { stderr?: string }): void {
  for (const text of [e.message, e.stack ?? "", e.stderr ?? "", JSON.stringify(e)]) {
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(API_KEY);
  }
}

beforeAll(async () => {
  server = await startServer(route);
  other = await startServer(route);
});

afterAll(async () => {
  await server?.close();
  await other?.close();
});

describe("HttpToolAdapter requests", () => {
  it("substitutes path params percent-encoded (a space and a slash stay inside one segment)", async () => {
    const r = (await registry().call("api", "get_user", { id: "a b/c?d" })) as Echo;
    expect(r.method).toBe("GET");
    expect(r.url).toBe("/v1/users/a%20b%2Fc%3Fd");
  });

  it("refuses path values that URL parsing would resolve away", async () => {
    const e = await caught(registry().call("api", "get_user", { id: ".." }));
    expect(e.code).toBe("INVALID_INPUT");
    expect(e.message).toMatch(/path param 'id' cannot be "\.\."/);
  });

  it("puts the other params of a GET into the query string; arrays repeat the key; defaults apply", async () => {
    const r = (await registry().call("api", "search", { q: "a b&c", tag: ["x", "y z"], exact: true })) as Echo;
    expect(r.url).toBe("/v1/search?q=a+b%26c&tag=x&tag=y+z&limit=20&exact=true");
    expect(r.body).toBe("");
  });

  it("sends the params of a POST as a JSON body, except those declared in: query", async () => {
    const r = (await registry().call("api", "create", { name: "Ann", tags: ["a", 1], meta: { k: { deep: true } }, trace: "t1" })) as Echo;
    expect(r.method).toBe("POST");
    expect(r.url).toBe("/v1/users?trace=t1");
    expect(r.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(r.body)).toEqual({ name: "Ann", tags: ["a", 1], admin: false, meta: { k: { deep: true } } });
  });

  it("sends header params and the YAML headers with ${ENV} values resolved", async () => {
    const r = (await registry().call("api", "remove", { id: "7", "If-Match": '"etag-1"' })) as Echo;
    expect(r.method).toBe("DELETE");
    expect(r.headers["if-match"]).toBe('"etag-1"');
    expect(r.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(r.headers["x-api-key"]).toBe(API_KEY);
    expect(r.headers["x-client"]).toBe("ts-code-mode");
    expect(r.headers.accept).toMatch(/^application\/json/);
  });

  it("refuses a header param value with a line break", async () => {
    const e = await caught(registry().call("api", "remove", { id: "7", "If-Match": "a\r\nX-Evil: 1" }));
    expect(e.code).toBe("INVALID_INPUT");
    expect(e.message).toMatch(/header param 'If-Match' cannot contain line breaks/);
  });

  it("validates arguments against the endpoint's params before sending anything", async () => {
    const before = server.requests.length;
    const missing = await caught(registry().call("api", "create", {}));
    expect(missing.code).toBe("MISSING_PARAM");
    const unknown = await caught(registry().call("api", "get_user", { id: "1", idd: 2 }));
    expect(unknown.code).toBe("INVALID_INPUT");
    expect(unknown.message).toMatch(/Unknown argument 'idd'/);
    const wrongType = await caught(registry().call("api", "search", { q: "x", limit: "ten" }));
    expect(wrongType.message).toMatch(/'limit' expected integer/);
    expect(server.requests.length).toBe(before);
  });

  it("has no escape hatch: tools.api(args) names the endpoints", async () => {
    await expect(registry().call("api", null, {})).rejects.toThrow(/cannot be called directly; call one of its endpoints: tools\.api\.get_user/);
  });
});

describe("HttpToolAdapter responses", () => {
  const fetchKind = (kind: string, reg = registry()) => reg.call("api", "fetch", { kind });

  it("parses JSON (application/json and +json)", async () => {
    expect(await fetchKind("json")).toEqual({ hello: "world", n: [1, 2] });
    expect(await fetchKind("problem-json")).toEqual({ title: "ok" });
  });

  it("returns text as a string, decoded with the declared charset", async () => {
    expect(await fetchKind("text")).toBe("plain text é");
    expect(await fetchKind("latin1")).toBe("café");
  });

  it("returns binary content types as a Uint8Array", async () => {
    const png = await fetchKind("binary");
    expect(png).toBeInstanceOf(Uint8Array);
    expect([...(png as Uint8Array)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
    expect([...((await fetchKind("octet")) as Uint8Array)]).toEqual([1, 2, 3]);
  });

  it("returns an unknown content type as text when it is UTF-8 and as bytes otherwise", async () => {
    expect(await fetchKind("unknown-utf8")).toBe("abc");
    expect([...((await fetchKind("unknown-bytes")) as Uint8Array)]).toEqual([0xff, 0xfe, 0x00]);
  });

  it("returns null for 204 and for HEAD", async () => {
    expect(await fetchKind("empty")).toBeNull();
    expect(await registry().call("api", "head", { id: "1" })).toBeNull();
    expect(server.requests.at(-1)?.method).toBe("HEAD");
  });

  it("reports a JSON body that does not parse as DEPENDENCY", async () => {
    const e = await caught(fetchKind("bad-json"));
    expect(e.code).toBe("DEPENDENCY");
    expect(e.message).toMatch(/returned invalid JSON .*the body starts: \{nope/);
  });
});

describe("HttpToolAdapter errors", () => {
  const cases: Array<[number, string]> = [
    [400, "INVALID_INPUT"],
    [422, "INVALID_INPUT"],
    [401, "PERMISSION"],
    [403, "PERMISSION"],
    [404, "NOT_FOUND"],
    [409, "CONFLICT"],
    [412, "PRECONDITION"],
    [408, "TIMEOUT"],
    [504, "TIMEOUT"],
    [500, "DEPENDENCY"],
    [502, "DEPENDENCY"],
    [503, "DEPENDENCY"],
    [418, "INTERNAL"],
    [410, "INTERNAL"],
  ];
  for (const [status, code] of cases) {
    it(`maps status ${status} to ${code} with the status, method, URL and body excerpt`, async () => {
      const e = await caught(registry().call("api", "fetch", { kind: "status", status }));
      expect(e.code).toBe(code);
      expect(e.status).toBe(status);
      expect(e.tool).toBe("api");
      expect(e.callable).toBe("fetch");
      expect(e.message).toContain(`tools.api.fetch: GET ${server.url}/v1/r/status?status=${status} returned ${status}`);
      expect(e.message).toContain(`{"error":"failed with ${status}"}`);
      expect(e.stderr).toBe(`{"error":"failed with ${status}"}`);
    });
  }

  it("bounds the body excerpt to 1000 characters", async () => {
    const e = await caught(registry().call("api", "fetch", { kind: "long-error" }));
    expect(e.stderr!.length).toBeLessThanOrEqual(1_000);
    expect(e.stderr).toMatch(/^x+…$/);
    expect(e.message).not.toContain("END");
    expect(e.message.length).toBeLessThan(1_200);
  });

  it("does not put binary error bodies into the message", async () => {
    const e = await caught(registry().call("api", "fetch", { kind: "binary-error" }));
    expect(e.stderr).toBe("(300 bytes of image/png)");
  });

  it("masks secret-looking query values in the URL it shows", async () => {
    const e = await caught(registry().call("api", "fetch", { kind: "status", status: 404, token: "query-secret-1" }));
    expect(e.message).toContain("status=404&token=***");
    expect(e.message).not.toContain("query-secret-1");
  });

  it("never shows a ${VAR} header value, even when the server echoes it in its error body", async () => {
    const e = await caught(registry().call("api", "fetch", { kind: "reflect" }));
    expect(server.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(e.code).toBe("PERMISSION");
    expect(e.message).toContain("auth was ***");
    expect(e.message).toContain('"x-api-key":"***"');
    expectNoSecret(e);
  });

  it("never shows a ${VAR} header value in its base64, base64url, hex or URL-encoded form either", async () => {
    const secret = "p@ss/w0rd+&=? 42!~x";
    const e = await caught(registry(apiDoc(server.url), { env: { ...ENV, TCM_TEST_TOKEN: secret } }).call("api", "fetch", { kind: "reflect-encoded" }));
    expect(server.requests.at(-1)?.headers.authorization).toBe(`Bearer ${secret}`);
    const bytes = Buffer.from(secret);
    const shown = [e.message, e.stderr ?? ""].join("\n");
    for (const form of [secret, bytes.toString("base64"), bytes.toString("base64").replace(/=+$/, ""), bytes.toString("base64url"), bytes.toString("hex"), bytes.toString("hex").toUpperCase(), encodeURIComponent(secret), new URLSearchParams({ t: secret }).toString().slice(2)]) {
      expect(shown).not.toContain(form);
    }
    for (const offset of [1, 2]) {
      // The fixed middle of the secret's base64 at that offset (the edge characters mix in its neighbours' bits).
      const middle = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64url").slice(offset + 1, -2);
      expect(shown).not.toContain(middle);
    }
    expect(shown).toContain('"base64":"***"');
    expect(shown).toContain('"hex":"***"');
  });

  it("fails a call (not the load) when a ${VAR} is missing, naming only the variables", async () => {
    const before = server.requests.length;
    const reg = registry(apiDoc(server.url), { env: { TCM_TEST_KEY: "" } });
    expect((await reg.list()).map((t) => t.name)).toEqual(["api"]);
    const e = await caught(reg.call("api", "get_user", { id: "1" }));
    expect(e.code).toBe("DEPENDENCY");
    expect(e.message).toMatch(/header 'Authorization' needs the environment variable TCM_TEST_TOKEN, which is not set \(or empty\); also missing: TCM_TEST_KEY/);
    expect(server.requests.length).toBe(before);
  });

  it("refuses a ${VAR} value with a line break without showing it", async () => {
    const reg = registry(apiDoc(server.url), { env: { ...ENV, TCM_TEST_KEY: `${API_KEY}\r\nX-Injected: 1` } });
    const e = await caught(reg.call("api", "get_user", { id: "1" }));
    expect(e.code).toBe("DEPENDENCY");
    expect(e.message).toMatch(/the value of header 'X-Api-Key' \(from TCM_TEST_KEY\) contains a line break/);
    expectNoSecret(e);
  });

  it("maps a refused connection to DEPENDENCY", async () => {
    const port = await freePort();
    const e = await caught(registry(apiDoc(`http://127.0.0.1:${port}`)).call("api", "get_user", { id: "1" }));
    expect(e.code).toBe("DEPENDENCY");
    expect(e.message).toContain(`tools.api.get_user: GET http://127.0.0.1:${port}/v1/users/1 failed: connect ECONNREFUSED`);
    expect(e.message).toMatch(/is the service running\?/);
    expectNoSecret(e);
  });
});

describe("HttpToolAdapter limits", () => {
  it("times out after the YAML timeout and cancels the request", async () => {
    const next = server.nextRequest();
    const e = await caught(registry(apiDoc(server.url, { timeout: 0.2 })).call("api", "fetch", { kind: "hang" }));
    expect(e.code).toBe("TIMEOUT");
    expect(e.message).toMatch(/tools\.api\.fetch: GET .*\/v1\/r\/hang timed out after 200 ms; the request was cancelled/);
    const seen = await next;
    await seen.closed;
    expect(seen.aborted()).toBe(true);
  });

  it("uses the caller's timeout when it is shorter than the YAML timeout", async () => {
    const e = await caught(registry().call("api", "fetch", { kind: "hang" }, { timeoutMs: 50 }));
    expect(e.code).toBe("TIMEOUT");
    expect(e.message).toMatch(/timed out after 50 ms/);
  });

  it("stops when ctx.signal aborts, and says why", async () => {
    const ac = new AbortController();
    const next = server.nextRequest();
    const pending = caught(registry().call("api", "fetch", { kind: "hang" }, { signal: ac.signal }));
    const seen = await next;
    ac.abort(new Error("the run was stopped"));
    const e = await pending;
    expect(e.code).toBe("INTERNAL");
    expect(e.message).toMatch(/was aborted \(the run was stopped\); the request was cancelled/);
    await seen.closed;
    expect(seen.aborted()).toBe(true);
  });

  it("reports an abort whose reason is a TimeoutError as TIMEOUT, and sends nothing when already aborted", async () => {
    const before = server.requests.length;
    const e = await caught(registry().call("api", "get_user", { id: "1" }, { signal: AbortSignal.abort(new DOMException("run deadline", "TimeoutError")) }));
    expect(e.code).toBe("TIMEOUT");
    expect(server.requests.length).toBe(before);
  });

  it("stops reading an endless body at the 10 MiB cap and closes the connection", async () => {
    const next = server.nextRequest();
    // A long timeout, so the connection can only have closed because the adapter cancelled the body.
    const e = await caught(registry(apiDoc(server.url, { timeout: 600 })).call("api", "fetch", { kind: "stream" }));
    expect(e.code).toBe("INTERNAL");
    expect(e.message).toMatch(/returned more than 10 MiB \(the response size cap\); the rest was not read/);
    const seen = await next;
    await seen.closed;
    expect(seen.aborted()).toBe(true);
  });

  it("refuses a body whose content-length is over the cap without reading it", async () => {
    const e = await caught(registry(apiDoc(server.url), { maxResponseBytes: 1_000 }).call("api", "fetch", { kind: "sized" }));
    expect(e.code).toBe("INTERNAL");
    expect(e.message).toMatch(/more than 1000 bytes \(the response size cap\)/);
  });
});

describe("HttpToolAdapter redirects", () => {
  it("follows a same-origin redirect with every header", async () => {
    const r = (await registry().call("api", "fetch", { kind: "redirect-same" })) as Echo;
    expect(r.url).toBe("/v1/r/echo");
    expect(r.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(r.headers["x-api-key"]).toBe(API_KEY);
  });

  it("drops the headers that carry secrets when a redirect leads to another origin", async () => {
    const r = (await registry().call("api", "fetch", { kind: "redirect-cross" })) as Echo;
    expect(other.requests.at(-1)?.url).toBe("/v1/r/echo");
    expect(r.headers.authorization).toBeUndefined();
    expect(r.headers["x-api-key"]).toBeUndefined();
    expect(r.headers["x-client"]).toBe("ts-code-mode");
  });

  it("gives up after 5 redirects", async () => {
    const e = await caught(registry().call("api", "fetch", { kind: "redirect-loop" }));
    expect(e.code).toBe("DEPENDENCY");
    expect(e.message).toMatch(/was redirected more than 5 times/);
  });
});
