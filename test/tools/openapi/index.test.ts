/**
 * The operation index (src/tools/adapters/openapi/operation-index.ts): a load with an index
 * folder writes one small file per tool, and the next load lists and searches from it without
 * parsing the spec — but only while the spec's bytes and the tool's settings are the same, and
 * only when every field of the file passes its checks. A changed spec, a torn, edited or foreign
 * file, or a writer killed halfway is never read as an index: the spec is parsed and the index
 * written again. Sessions on a file base keep it in `<base>/tool-index`.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { InProcessExecutor } from "../../../src/execution/in-process/executor.js";
import { Session } from "../../../src/session.js";
import { setFaultHook } from "../../../src/storage/faults.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { transpileTree } from "../../storage/transpile.js";
import { json, startServer, type TestServer } from "../http/server.js";

let dir: string;
let server: TestServer;
let counter = 0;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-openapi-index-"));
  server = await startServer((req, res) => json(res, 200, { method: req.method, url: req.url }));
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** A spec with one GET per entry (operationId → summary); `/things/{id}` ones take a path param. */
function spec(ops: Record<string, string>): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [id, summary] of Object.entries(ops)) {
    paths[`/${id}/{id}`] = { get: { operationId: id, summary, parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" }, description: `Which ${id}` }] } };
  }
  return { openapi: "3.0.3", info: { title: "Things", description: "Things to list." }, servers: [{ url: `${server.url}/v1` }], paths };
}

const OPS = { listPets: "List pets", getOwner: "Get an owner", deleteToy: "Delete a toy" };

interface Fixture {
  tools: string;
  indexDir: string;
  specFile: string;
  writeSpec(doc: Record<string, unknown>): Promise<void>;
  load(): Promise<ToolRegistry>;
  indexFiles(): Promise<string[]>;
}

/** A tools folder with one openapi tool `t` whose spec is a gzip JSON, YAML or plain JSON file. */
async function fixture(format: "json.gz" | "yaml" | "json" = "json.gz"): Promise<Fixture> {
  const root = path.join(dir, `case-${++counter}`);
  const tools = path.join(root, "tools");
  const indexDir = path.join(root, "tool-index");
  await mkdir(tools, { recursive: true });
  const specFile = path.join(root, `spec.${format}`);
  const writeSpec = async (doc: Record<string, unknown>) => {
    const text = format === "yaml" ? stringifyYaml(doc) : JSON.stringify(doc);
    await writeFile(specFile, format === "json.gz" ? gzipSync(text) : text);
  };
  await writeSpec(spec(OPS));
  await writeFile(path.join(tools, "t.yaml"), stringifyYaml({ name: "t", type: "openapi", spec: specFile }));
  return {
    tools,
    indexDir,
    specFile,
    writeSpec,
    load: () => ToolRegistry.load(tools, { indexDir }),
    indexFiles: async () => (await readdir(path.join(indexDir, "openapi")).catch(() => [] as string[])).sort(),
  };
}

async function withRegistry<T>(f: Fixture, fn: (r: ToolRegistry) => Promise<T>): Promise<T> {
  const r = await f.load();
  try {
    return await fn(r);
  } finally {
    await r.close();
  }
}

async function listing(f: Fixture): Promise<Array<[string, string]>> {
  return withRegistry(f, async (r) => (await r.info("t")).callables.map((c) => [c.name, c.description] as [string, string]));
}

async function indexJson(f: Fixture): Promise<{ file: string; body: { format: number; key: string; index: { operations: Array<{ name: string; description: string }>; baseUrl: string } } }> {
  const files = (await f.indexFiles()).filter((n) => n.endsWith(".json"));
  expect(files).toHaveLength(1);
  const file = path.join(f.indexDir, "openapi", files[0]!);
  return { file, body: JSON.parse(await readFile(file, "utf8")) as never };
}

describe("the operation index", () => {
  it.each(["json.gz", "yaml", "json"] as const)("is written by a first load and used by the next (%s spec); describe and call then parse the spec", async (format) => {
    const f = await fixture(format);
    const cold = await listing(f);
    expect(cold.map(([n]) => n)).toEqual(["listPets", "getOwner", "deleteToy"]);
    const { file, body } = await indexJson(f);
    expect(body.index.operations).toEqual(cold.map(([name, description]) => ({ name, description })));

    // Proof that the next load reads the index: a description only the index holds is listed.
    body.index.operations[0]!.description = "From the index (GET /listPets/{id})";
    await writeFile(file, JSON.stringify(body));
    await withRegistry(f, async (r) => {
      expect((await r.info("t")).callables[0]!.description).toBe("From the index (GET /listPets/{id})");
      // A small tool is searched whole; its listing gives every operation's signature (params: the spec is parsed).
      expect((await r.search("delete a toy", { limit: 1 }))[0]?.callables.map((c) => c.signature)).toContain("deleteToy(args: { id: number }): Promise<unknown>");
      const decl = await r.describe("t.getOwner");
      expect(decl).toContain("getOwner(args: ");
      expect(decl).toContain("Which getOwner");
      expect(await r.call("t", "getOwner", { id: 7 })).toEqual({ method: "GET", url: "/v1/getOwner/7" });
      await expect(r.call("t", "getOwner", {})).rejects.toMatchObject({ name: "ToolError", code: "MISSING_PARAM" });
    });
  });

  it("is ignored and replaced when the spec changes, and when the tool's filters change", async () => {
    const f = await fixture();
    await listing(f);
    const before = await indexJson(f);
    before.body.index.operations[0]!.description = "stale";
    await writeFile(before.file, JSON.stringify(before.body));

    await f.writeSpec(spec({ ...OPS, addedOne: "A new operation" }));
    const names = (await listing(f)).map(([n, d]) => `${n}: ${d}`);
    expect(names).toEqual(["listPets: List pets (GET /listPets/{id})", "getOwner: Get an owner (GET /getOwner/{id})", "deleteToy: Delete a toy (GET /deleteToy/{id})", "addedOne: A new operation (GET /addedOne/{id})"]);
    const after = await indexJson(f);
    expect(after.file).toBe(before.file);
    expect(after.body.key).not.toBe(before.body.key);
    expect(after.body.index.operations.map((o) => o.name)).toContain("addedOne");

    // The same spec under other settings is another index key.
    await writeFile(path.join(f.tools, "t.yaml"), stringifyYaml({ name: "t", type: "openapi", spec: f.specFile, operations: { paths: ["/getOwner/**"] } }));
    expect((await listing(f)).map(([n]) => n)).toEqual(["getOwner"]);
    expect((await indexJson(f)).body.index.operations.map((o) => o.name)).toEqual(["getOwner"]);
  });

  const CORRUPTIONS: Array<[string, (text: string) => string]> = [
    ["truncated halfway", (t) => t.slice(0, t.length >> 1)],
    ["empty", () => ""],
    ["not JSON", () => "\u0000\u0001garbage"],
    ["JSON but not an object", () => "[1,2,3]"],
    ["another format", (t) => JSON.stringify({ ...(JSON.parse(t) as object), format: 999 })],
    ["another key", (t) => JSON.stringify({ ...(JSON.parse(t) as object), key: "0".repeat(64) })],
    ["a name that is not an identifier", (t) => t.replace('"name":"listPets"', '"name":"list-pets"')],
    ["a reserved name", (t) => t.replace('"name":"listPets"', '"name":"__proto__"')],
    ["two operations with one name", (t) => t.replace('"name":"getOwner"', '"name":"listPets"')],
    ["a description that is not text", (t) => t.replace(/"description":"List pets[^"]*"/, '"description":42')],
    ["a base URL with credentials", (t) => t.replace(/"baseUrl":"http:\/\//, '"baseUrl":"http://user:pw@')],
    ["no operations list", (t) => t.replace('"operations":', '"operationz":')],
  ];

  it.each(CORRUPTIONS)("that is %s is not used: the spec is parsed and the index written again", async (_label, corrupt) => {
    const f = await fixture();
    const cold = await listing(f);
    const { file } = await indexJson(f);
    const good = await readFile(file, "utf8");
    const bad = corrupt(good);
    expect(bad).not.toBe(good);
    await writeFile(file, bad);
    expect(await listing(f)).toEqual(cold);
    expect(await readFile(file, "utf8")).toBe(good);
  });

  it("a write that fails halfway leaves no index and no temp file; the load itself succeeds", async () => {
    const f = await fixture();
    setFaultHook((point, target) => {
      if (point === "temp-partial" && target.startsWith(f.indexDir)) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    });
    try {
      expect((await listing(f)).map(([n]) => n)).toEqual(["listPets", "getOwner", "deleteToy"]);
    } finally {
      setFaultHook(undefined);
    }
    expect(await f.indexFiles()).toEqual([]);
    await listing(f);
    expect((await f.indexFiles()).filter((n) => n.endsWith(".json"))).toHaveLength(1);
  });

  it("a writer killed halfway through the index leaves only its temp file, which no load reads", async () => {
    const f = await fixture();
    const code = path.join(dir, "code");
    const entry = pathToFileURL(await transpileTree("src/tools/registry.ts", code)).href;
    const faults = new URL("../storage/faults.js", entry).href;
    const script = path.join(dir, "kill-index.mjs");
    await writeFile(
      script,
      `const [entry, faults, tools, indexDir] = process.argv.slice(2);
const { ToolRegistry } = await import(entry);
const { setFaultHook } = await import(faults);
setFaultHook((point, target) => { if (point === "temp-partial" && target.startsWith(indexDir)) process.kill(process.pid, "SIGKILL"); });
const r = await ToolRegistry.load(tools, { indexDir });
await r.info("t");
process.exit(3); // never reached: the hook kills the process
`,
    );
    const child = spawn(process.execPath, [script, entry, faults, f.tools, f.indexDir], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on("close", (_code, sig) => resolve(sig)));
    expect(signal, stderr).toBe("SIGKILL");
    const left = await f.indexFiles();
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/^\.\d+-[0-9a-f]{16}\.tmp$/);

    expect((await listing(f)).map(([n]) => n)).toEqual(["listPets", "getOwner", "deleteToy"]);
    const { body } = await indexJson(f);
    expect(body.index.operations).toHaveLength(3);
  }, 120_000);

  it("a session on a file base keeps it in <base>/tool-index and a new session uses it", async () => {
    const f = await fixture();
    const base = path.dirname(f.tools);
    const run = async () => {
      const session = new Session({ storage: new FileStorage({ basePath: base }), executor: new InProcessExecutor({ toolsPath: f.tools, search: { embedder: "lexical" } }) });
      await session.start();
      try {
        const r = await session.run(`(await tools.search("get an owner", { limit: 1 }))[0].callables.filter((c) => c.name === "getOwner").map((c) => c.name + ": " + c.description)`);
        expect(r.error).toBeNull();
        return r.value;
      } finally {
        await session.close();
      }
    };
    expect(await run()).toEqual(["getOwner: Get an owner (GET /getOwner/{id})"]);
    const { file, body } = await indexJson(f);
    expect(file.startsWith(path.join(base, "tool-index", "openapi"))).toBe(true);
    body.index.operations[1]!.description = "Get an owner, from the index (GET /getOwner/{id})";
    await writeFile(file, JSON.stringify(body));
    expect(await run()).toEqual(["getOwner: Get an owner, from the index (GET /getOwner/{id})"]);
  }, 60_000);
});
