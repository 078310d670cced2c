import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/errors.js";
import { createToolAdapter } from "../../../src/tools/adapters/index.js";
import { HttpToolAdapter } from "../../../src/tools/adapters/http/adapter.js";
import { parseHttpTool } from "../../../src/tools/adapters/http/schema.js";

const FIXTURE = fileURLToPath(new URL("../../fixtures/http/api.yaml", import.meta.url));

const base = {
  name: "api",
  type: "http",
  base_url: "https://api.example.com/v1/",
  endpoints: { get_user: { path: "/users/{id}", params: { id: { type: "string" } } } },
};

/** The message of the ValidationError that parsing `doc` throws (fails the test if it parses). */
function problems(doc: unknown): string {
  try {
    parseHttpTool(doc, "api.yaml");
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as Error).message;
  }
  throw new Error("expected a ValidationError");
}

describe("parseHttpTool", () => {
  it("normalises a minimal document: GET by default, path params required, base URL without trailing slash", () => {
    const spec = parseHttpTool(base, "api.yaml");
    expect(spec.baseUrl).toBe("https://api.example.com/v1");
    expect(spec.timeoutMs).toBe(30_000);
    expect(spec.endpoints).toEqual([
      { name: "get_user", method: "GET", path: "/users/{id}", description: "", params: [{ name: "id", type: "string", in: "path", description: "", required: true }] },
    ]);
  });

  it("places params by default: path if in the path, body for POST/PUT/PATCH, query otherwise", () => {
    const spec = parseHttpTool(
      {
        ...base,
        endpoints: {
          post: { method: "post", path: "/x/{id}", params: { id: {}, a: {}, h: { in: "header" } } },
          del: { method: "DELETE", path: "/x", params: { a: {}, b: { in: "body" } } },
          get: { path: "/x", params: { a: { type: "array", items: "integer" } } },
        },
      },
      "api.yaml",
    );
    const where = spec.endpoints.map((e) => [e.method, e.params.map((p) => `${p.name}:${p.in}`)]);
    expect(where).toEqual([
      ["POST", ["id:path", "a:body", "h:header"]],
      ["DELETE", ["a:query", "b:body"]],
      ["GET", ["a:query"]],
    ]);
  });

  it("loads the sample fixture", async () => {
    const doc: unknown = parseYaml(await readFile(FIXTURE, "utf8"));
    const adapter = await createToolAdapter(doc, { file: FIXTURE, dir: "." });
    expect(adapter).toBeInstanceOf(HttpToolAdapter);
    const info = await adapter.info();
    expect(info.type).toBe("http");
    expect(info.direct).toBeNull();
    expect(info.callables.map((c) => c.name)).toEqual(["get_user", "search_users", "create_user", "delete_user"]);
  });

  it("rejects a bad base_url: not a URL, another scheme, credentials, a query string", () => {
    expect(problems({ ...base, base_url: "api.example.com" })).toMatch(/base_url: expected an http:\/\/ or https:\/\/ URL.*got string "api.example.com"/);
    expect(problems({ ...base, base_url: "ftp://example.com" })).toMatch(/base_url: .*scheme "ftp"/);
    expect(problems({ ...base, base_url: "https://u:p@example.com" })).toMatch(/base_url: must not contain credentials/);
    expect(problems({ ...base, base_url: "https://example.com/?key=1" })).toMatch(/base_url: must not contain a query string/);
    expect(problems({ ...base, base_url: undefined })).toMatch(/base_url: expected an http/);
  });

  it("reports a {param} in the path that no param declares, and a path param missing from the path", () => {
    const msg = problems({
      ...base,
      endpoints: { e: { path: "/orgs/{org}/users/{id}", params: { id: {}, extra: { in: "path" } } } },
    });
    expect(msg).toMatch(/api\.yaml/);
    expect(msg).toMatch(/endpoints\.e\.path: \{org\} is not a declared param; add params\.org \(declared: id, extra\)/);
    expect(msg).toMatch(/endpoints\.e\.params\.extra\.in: 'path' but the path has no \{extra\} placeholder/);
  });

  it("rejects an unknown method, listing the accepted ones", () => {
    expect(problems({ ...base, endpoints: { e: { method: "FETCH", path: "/x" } } })).toMatch(
      /endpoints\.e\.method: expected one of GET, POST, PUT, PATCH, DELETE, HEAD; got string "FETCH"/,
    );
  });

  it("rejects malformed ${VAR} references and bad header names at load", () => {
    const msg = problems({ ...base, headers: { Authorization: "Bearer ${API TOKEN}", "X-Key": "${OPEN", "Bad Name": "x", Host: "h" } });
    expect(msg).toMatch(/headers\.Authorization: \$\{API TOKEN\} is not an environment variable reference/);
    expect(msg).toMatch(/headers\.X-Key: unterminated \$\{/);
    expect(msg).toMatch(/headers\.Bad Name: not a valid header name/);
    expect(msg).toMatch(/headers\.Host: the HTTP client sets Host itself/);
  });

  it("does not read the environment at load: a missing variable is a call-time error", () => {
    const spec = parseHttpTool({ ...base, headers: { Authorization: "Bearer ${SURELY_NOT_SET_TCM_TOKEN}" } }, "api.yaml");
    expect(spec.headers).toEqual([{ name: "Authorization", template: "Bearer ${SURELY_NOT_SET_TCM_TOKEN}" }]);
  });

  it("reports every problem at once: path syntax, body on GET, typed defaults, enums, optional path params, unknown keys", () => {
    const msg = problems({
      ...base,
      base_url: "nope",
      timeout: -1,
      colour: "red",
      endpoints: {
        a: { path: "users", params: {} },
        b: { path: "/x/{id}?q=1", params: { id: { required: false }, n: { type: "integer", default: "five" }, flag: { type: "boolean", enum: [1] }, bad: { type: "tuple" } } },
        c: { method: "GET", path: "/x", params: { p: { in: "body" } } },
        "not-ok": { path: "/x" },
      },
    });
    expect(msg).toMatch(/\(top level\): unknown key 'colour'; accepted: name, type, description, tags, base_url, headers, timeout, endpoints/);
    expect(msg).toMatch(/timeout: expected a positive number of seconds/);
    expect(msg).toMatch(/base_url: expected an http:\/\/ or https:\/\/ URL/);
    expect(msg).toMatch(/endpoints\.a\.path: expected a path starting with \//);
    expect(msg).toMatch(/endpoints\.b\.params\.bad\.type: expected one of string, integer, number, boolean, array, object/);
    // A broken field or endpoint hides nothing: the endpoints that parsed get their cross-field checks.
    expect(msg).toMatch(/endpoints\.c\.params\.p\.in: a GET request has no body/);
    expect(msg).toMatch(/endpoints\.not-ok: endpoint names must be identifiers/);
    // Cross-field checks of an endpoint run once its shape is right.
    const second = problems({
      ...base,
      endpoints: {
        b: { path: "/x/{id}?q=1", params: { id: { required: false }, n: { type: "integer", default: "five" }, flag: { type: "boolean", enum: [1] } } },
        c: { method: "GET", path: "/x", params: { p: { in: "body" } } },
        "not-ok": { path: "/x" },
      },
    });
    expect(second).toMatch(/endpoints\.b\.path: must not contain \? or #/);
    expect(second).toMatch(/endpoints\.b\.params\.id\.required: a path param cannot be optional/);
    expect(second).toMatch(/endpoints\.b\.params\.n: 'default' expected integer, got string "five"/);
    expect(second).toMatch(/endpoints\.b\.params\.flag\.enum: enum is only for string, integer and number params/);
    expect(second).toMatch(/endpoints\.c\.params\.p\.in: a GET request has no body/);
    expect(second).toMatch(/endpoints\.not-ok: endpoint names must be identifiers/);
  });

  it("rejects an http tool without endpoints and a reserved tool name", () => {
    expect(problems({ ...base, endpoints: {} })).toMatch(/endpoints: expected at least one endpoint/);
    expect(problems({ ...base, endpoints: undefined })).toMatch(/endpoints: expected a mapping of endpoint names/);
    expect(problems({ ...base, name: "list" })).toMatch(/name: tool name 'list' is reserved/);
  });

  it("rejects array/object path params and a header param with a bad name", () => {
    const msg = problems({ ...base, endpoints: { e: { path: "/x/{ids}", params: { ids: { type: "array" }, "a b": { in: "header" } } } } });
    expect(msg).toMatch(/endpoints\.e\.params\.ids\.type: a path param must be a string, integer, number or boolean; got array/);
    expect(msg).toMatch(/endpoints\.e\.params\.a b: "a b" is not a valid header name/);
  });
});
