/**
 * The `type: openapi` adapter on small specs written for each case: the YAML format and its
 * errors, operation names and filters, parameters from `$ref`/`allOf`/`oneOf` (cycles and
 * exploding references bounded), query-string credentials redacted, specs from a URL, and the
 * limits that keep a hostile spec (gzip bomb, YAML alias bomb, too many operations, a huge YAML)
 * from costing unbounded time or memory.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { ToolError } from "../../../src/errors.js";
import { OpenApiToolAdapter } from "../../../src/tools/adapters/openapi/adapter.js";
import { parseOpenApiTool } from "../../../src/tools/adapters/openapi/schema.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { json, startServer, type TestServer } from "../http/server.js";

let dir: string;
let server: TestServer;
let counter = 0;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-openapi-unit-"));
  server = await startServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    if (url.pathname === "/spec.json") return json(res, 200, petSpec());
    if (url.pathname === "/broken.json") return json(res, 500, { error: "down" });
    if (url.pathname.startsWith("/v1/pets/") && url.pathname.endsWith("/echo")) return json(res, 400, { echoed: url.search });
    json(res, 200, { method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), body: req.body ? (JSON.parse(req.body) as unknown) : null });
  });
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** A small OpenAPI 3.1 document: pets, with shared parameters, allOf/oneOf bodies and a cycle. */
function petSpec(): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: { title: "Pet store", description: "Pets and their owners.\n\nMore text." },
    servers: [{ url: "{scheme}://127.0.0.1:{port}/v1", variables: { scheme: { default: "http" }, port: { default: String(server.port) } } }],
    paths: {
      "/pets": {
        get: { operationId: "listPets", summary: "List pets", tags: ["pets"], parameters: [{ $ref: "#/components/parameters/limit" }, { name: "tag", in: "query", schema: { type: "array", items: { type: "string" } } }] },
        post: {
          operationId: "pets/create",
          summary: "Create a pet",
          tags: ["pets"],
          requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/NewPet" } } } },
        },
      },
      "/pets/{petId}": {
        parameters: [{ name: "petId", in: "path", required: true, schema: { type: "integer" } }],
        get: { operationId: "get-pet", summary: "Get a pet", tags: ["pets"], responses: { "200": { description: "ok", content: { "application/json": { schema: { $ref: "#/components/schemas/Pet" } } } } } },
        delete: { summary: "Delete a pet", tags: ["admin"] },
      },
      "/pets/{petId}/echo": { get: { operationId: "echo", tags: ["pets"] } },
      "/owners/{ownerId}/pets": { get: { operationId: "then", summary: "An operationId that is a reserved name", tags: ["owners"] } },
      "/tree": {
        put: {
          operationId: "putTree",
          requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/Node" } } } },
        },
        post: { operationId: "postMany", requestBody: { content: { "application/json": { schema: { type: "array", items: { $ref: "#/components/schemas/Pet" } } } } } },
      },
    },
    components: {
      parameters: { limit: { name: "limit", in: "query", schema: { type: "integer", default: 20 }, description: "How many" } },
      schemas: {
        Pet: { allOf: [{ $ref: "#/components/schemas/NewPet" }, { type: "object", required: ["id"], properties: { id: { type: "integer" } } }] },
        NewPet: {
          type: "object",
          required: ["name"],
          properties: { name: { type: "string" }, kind: { oneOf: [{ $ref: "#/components/schemas/Cat" }, { $ref: "#/components/schemas/Dog" }] } },
        },
        Cat: { type: "object", properties: { purrs: { type: "boolean" } } },
        Dog: { type: "object", properties: { barks: { type: "boolean" } } },
        Node: { type: "object", properties: { value: { type: "string" }, children: { type: "array", items: { $ref: "#/components/schemas/Node" } }, parent: { $ref: "#/components/schemas/Node" } } },
      },
      examples: { big: { value: "x".repeat(1000) } },
    },
  };
}

/** A tools folder with one openapi tool whose spec is `spec` (an object written as JSON, or raw bytes). */
async function toolsWith(yaml: Record<string, unknown>, spec?: unknown, specName = "spec.json"): Promise<string> {
  const folder = path.join(dir, `t${++counter}`);
  const { mkdir } = await import("node:fs/promises");
  await mkdir(folder);
  if (spec !== undefined) await writeFile(path.join(folder, specName), spec instanceof Uint8Array || typeof spec === "string" ? spec : JSON.stringify(spec));
  await writeFile(path.join(folder, "pets.yaml"), stringifyYaml({ name: "pets", type: "openapi", spec: `./${specName}`, ...yaml }));
  return folder;
}

describe("the tool YAML", () => {
  it("reports every problem at once, naming the field, and never a credential's value", () => {
    const source = { file: "/x/pets.yaml", dir: "/x" };
    expect(() =>
      parseOpenApiTool({ name: "pets", type: "openapi", base_url: "ftp://x", bearer: "${BAD VAR}", query: { key: "${OK}" }, operations: { paths: ["pets"] }, colour: 1 }, source),
    ).toThrow(
      /Invalid tool definition in \/x\/pets\.yaml:[\s\S]*unknown key 'colour'[\s\S]*spec: [\s\S]*operations\.paths\[0\]: a path glob starts with \/[\s\S]*base_url: expected an http:\/\/ or https:\/\/ URL[\s\S]*bearer: \$\{BAD VAR\} is not an environment variable reference/,
    );
  });

  it("resolves a relative spec path against the YAML's folder; refuses other URL schemes", () => {
    expect(parseOpenApiTool({ name: "p", type: "openapi", spec: "./specs/api.json" }, { file: "/x/p.yaml", dir: "/x" }).spec).toEqual({ kind: "file", path: "/x/specs/api.json" });
    expect(() => parseOpenApiTool({ name: "p", type: "openapi", spec: "file:///etc/passwd" }, { file: "/x/p.yaml", dir: "/x" })).toThrow(/expected a file path or an http\(s\):\/\/ URL/);
  });
});

describe("operations as callables", () => {
  it("names them from operationId or method + path, and takes the server URL from the spec", async () => {
    const registry = await ToolRegistry.load(await toolsWith({}, petSpec()));
    const info = await registry.info("pets");
    expect(info.type).toBe("openapi");
    expect(info.callables.map((c) => c.name).sort()).toEqual(["delete_pets_petId", "echo", "get_pet", "listPets", "pets_create", "postMany", "putTree", "then_"]);
    expect(info.description).toMatch(/^Pet store: Pets and their owners\. \(8 operations/);
    const r = (await registry.call("pets", "get_pet", { petId: 7 })) as { path: string };
    expect(r.path).toBe("/v1/pets/7");
    await registry.close();
  });

  it("keeps only the operations of the given tags and path globs", async () => {
    const byTag = await ToolRegistry.load(await toolsWith({ operations: { tags: ["ADMIN", "owners"] } }, petSpec()));
    expect((await byTag.info("pets")).callables.map((c) => c.name).sort()).toEqual(["delete_pets_petId", "then_"]);
    const byPath = await ToolRegistry.load(await toolsWith({ operations: { paths: ["/pets/*"] } }, petSpec()));
    expect((await byPath.info("pets")).callables.map((c) => c.name).sort()).toEqual(["delete_pets_petId", "get_pet"]);
    const deep = await ToolRegistry.load(await toolsWith({ operations: { paths: ["/pets/**"], tags: ["pets"] } }, petSpec()));
    expect((await deep.info("pets")).callables.map((c) => c.name).sort()).toEqual(["echo", "get_pet"]);
  });

  it("resolves $ref parameters, merges allOf and oneOf bodies into arguments, and types the result", async () => {
    const registry = await ToolRegistry.load(await toolsWith({}, petSpec()));
    const info = await registry.info("pets");
    const list = info.callables.find((c) => c.name === "listPets")!;
    expect(list.params).toEqual([
      { name: "limit", type: "integer", required: false, default: 20, description: "How many" },
      { name: "tag", type: "array", items: "string", required: false },
    ]);
    const create = info.callables.find((c) => c.name === "pets_create")!;
    expect(create.params).toEqual([
      { name: "name", type: "string", required: true },
      { name: "kind", type: "object", required: false, properties: [{ name: "purrs", type: "boolean", required: false }, { name: "barks", type: "boolean", required: false }] },
    ]);
    const get = info.callables.find((c) => c.name === "get_pet")!;
    // Result types keep two levels (describe stays short); deeper values are `unknown`.
    expect(get.returns).toBe("{ name: string; kind?: unknown } & { id: number }");
    const sent = (await registry.call("pets", "pets_create", { name: "Rex", kind: { barks: true } })) as { body: unknown; method: string };
    expect(sent).toMatchObject({ method: "POST", body: { name: "Rex", kind: { barks: true } } });
    // An array body is one argument, sent as the whole body.
    const many = (await registry.call("pets", "postMany", { body: [{ name: "a" }] })) as { body: unknown };
    expect(many.body).toEqual([{ name: "a" }]);
    await expect(registry.call("pets", "listPets", { limit: "ten" })).rejects.toThrow(/'limit' expected integer/);
  });

  it("survives cyclic schemas: a tree's describe is bounded and a call still works", async () => {
    const registry = await ToolRegistry.load(await toolsWith({}, petSpec()));
    const decl = await registry.describe("pets.putTree");
    expect(decl).toContain("putTree(args?: pets.PutTreeArgs)");
    expect(decl.length).toBeLessThan(3_000);
    const sent = (await registry.call("pets", "putTree", { value: "root", parent: { value: "up" } })) as { body: unknown };
    expect(sent.body).toEqual({ value: "root", parent: { value: "up" } });
  });

  it("bounds the work of a schema whose references explode (40 properties × 40, six levels)", async () => {
    const schemas: Record<string, unknown> = {};
    for (let level = 0; level < 6; level++) {
      const properties: Record<string, unknown> = {};
      for (let i = 0; i < 40; i++) properties[`p${i}`] = level < 5 ? { $ref: `#/components/schemas/L${level + 1}` } : { type: "string" };
      schemas[`L${level}`] = { type: "object", properties };
    }
    const spec = { openapi: "3.0.3", info: { title: "bomb" }, servers: [{ url: server.url }], paths: { "/x": { post: { operationId: "boom", requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/L0" } } } }, responses: { "200": { description: "", content: { "application/json": { schema: { $ref: "#/components/schemas/L0" } } } } } } } }, components: { schemas } };
    const registry = await ToolRegistry.load(await toolsWith({}, spec));
    const started = Date.now();
    const decl = await registry.describe("pets.boom");
    // 40^6 = 4 billion nodes unbounded; the node budget makes it a few thousand.
    expect(decl.length).toBeLessThan(400_000);
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe("credentials", () => {
  it("sends query-string credentials and keeps their values out of errors; a missing variable names the variable", async () => {
    const env = { PET_KEY: "k3y-s3cret-value" };
    const { parseOpenApiTool: parse } = await import("../../../src/tools/adapters/openapi/schema.js");
    const folder = await toolsWith({ query: { api_key: "${PET_KEY}" } }, petSpec());
    const spec = parse({ name: "pets", type: "openapi", spec: "./spec.json", query: { api_key: "${PET_KEY}" } }, { file: path.join(folder, "pets.yaml"), dir: folder });
    const adapter = new OpenApiToolAdapter(spec, { env });
    const ok = (await adapter.call("listPets", {}, {})) as { query: Record<string, string> };
    expect(ok.query).toEqual({ api_key: "k3y-s3cret-value" });
    const err = await adapter.call("echo", { petId: 1 }, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).message).toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/v1\/pets\/1\/echo\?api_key=\*\*\* returned 400/);
    expect(JSON.stringify(err) + (err as Error).message + ((err as ToolError).stderr ?? "")).not.toContain("k3y-s3cret-value");
    const missing = new OpenApiToolAdapter(spec, { env: {} });
    await expect(missing.call("listPets", {}, {})).rejects.toThrow(/query parameter 'api_key' needs the environment variable PET_KEY, which is not set/);
    // Discovery never needs (or shows) the credential.
    expect(JSON.stringify(await missing.info())).not.toContain("PET_KEY");
  });
});

describe("specs from a URL and specs that cannot be read", () => {
  it("fetches a spec URL on first use; one that fails shows the tool as unavailable without failing the others", async () => {
    const folder = path.join(dir, `t${++counter}`);
    const { mkdir } = await import("node:fs/promises");
    await mkdir(folder);
    await writeFile(path.join(folder, "pets.yaml"), stringifyYaml({ name: "pets", type: "openapi", spec: `${server.url}/spec.json` }));
    await writeFile(path.join(folder, "down.yaml"), stringifyYaml({ name: "down", type: "openapi", spec: `${server.url}/broken.json` }));
    const registry = await ToolRegistry.load(folder);
    const listed = await registry.list();
    expect(listed.find((t) => t.name === "pets")?.callables.length).toBe(8);
    expect(listed.find((t) => t.name === "down")?.description).toMatch(/unavailable: .*fetching the spec from http:\/\/127\.0\.0\.1:\d+\/broken\.json returned 500/);
  });

  it("refuses a gzip bomb, a YAML alias bomb, a YAML spec past its size cap, too many operations and Swagger 2", async () => {
    const info = async (yaml: Record<string, unknown>, spec: unknown, name = "spec.json", options = {}) => {
      const folder = await toolsWith(yaml, spec, name);
      const parsed = parseOpenApiTool({ name: "pets", type: "openapi", spec: `./${name}`, ...yaml }, { file: path.join(folder, "pets.yaml"), dir: folder });
      return new OpenApiToolAdapter(parsed, options).info();
    };
    // 64 MiB + 1 of zeros compresses to ~65 kB.
    await expect(info({}, gzipSync(Buffer.alloc(64 * 1024 * 1024 + 1)), "spec.json.gz")).rejects.toThrow(/decompresses to more than 64 MiB/);
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]", ...Array.from({ length: 8 }, (_, i) => `${"bcdefghi"[i]}: &${"bcdefghi"[i]} [${Array(10).fill(`*${"abcdefgh"[i]}`).join(", ")}]`)].join("\n");
    await expect(info({}, `openapi: 3.0.0\n${bomb}\n`, "spec.yaml")).rejects.toThrow(/not valid YAML or JSON: .*alias/i);
    await expect(info({}, `openapi: 3.0.0\n# ${"x".repeat(2000)}\n`, "spec.yaml", { maxYamlBytes: 1000 })).rejects.toThrow(/YAML specs up to/);
    await expect(info({}, petSpec(), "spec.json", { maxOperations: 5 })).rejects.toThrow(/more than 5 operations; narrow it with operations: \{ tags/);
    await expect(info({}, { swagger: "2.0", info: {}, paths: {} })).rejects.toThrow(/expected an OpenAPI 3\.0 or 3\.1 document .*Swagger 2\.0/);
    await expect(info({}, { openapi: "3.0.0", info: {}, paths: {}, components: { schemas: { A: { $ref: "#/__proto__/x" } } } })).rejects.toThrow(/names no servers; set base_url/);
  });
});
