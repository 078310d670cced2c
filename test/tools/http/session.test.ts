/**
 * End to end: the sample HTTP tool YAML (test/fixtures/http/api.yaml, base_url pointed at a local
 * server) loaded from a tools directory by a real Session, called from agent code in the
 * in-process and the subprocess executor, and its `tools.describe` text type-checked with tsc.
 */
import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { InProcessExecutor } from "../../../src/execution/in-process/executor.js";
import type { Executor } from "../../../src/execution/protocol.js";
import { SubprocessExecutor } from "../../../src/execution/subprocess/executor.js";
import { Session } from "../../../src/session.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import { json, startServer, type TestServer } from "./server.js";

const FIXTURE = fileURLToPath(new URL("../../fixtures/http/api.yaml", import.meta.url));
const TOKEN = "e2e-secret-Token-7781";

/** Type-check `code` as a standalone script with strict options; return the diagnostics as text. */
function typeErrors(code: string): string[] {
  const fileName = "/virtual/check.ts";
  const options: ts.CompilerOptions = { noEmit: true, strict: true, noUncheckedIndexedAccess: true, target: ts.ScriptTarget.ES2022, lib: ["lib.es2022.d.ts"], types: [] };
  const host = ts.createCompilerHost(options);
  const original = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, onError, create) => (name === fileName ? ts.createSourceFile(name, code, lang) : original(name, lang, onError, create));
  const baseFileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === fileName || baseFileExists(name);
  const program = ts.createProgram([fileName], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}

let server: TestServer;
let dir: string;
let toolsPath: string;
let previousToken: string | undefined;

beforeAll(async () => {
  server = await startServer((req, res) => {
    const m = /^\/v1\/users\/([^/?]+)$/.exec(req.url);
    const id = m ? decodeURIComponent(m[1]!) : "";
    if (id === "missing") return json(res, 404, { error: "no such user" });
    // A careless server that echoes the credentials it got into its error body.
    if (id === "reflect") return json(res, 401, { error: "bad token", got: req.headers.authorization });
    json(res, 200, { id, authorized: req.headers.authorization === `Bearer ${TOKEN}` });
  });
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-http-"));
  toolsPath = path.join(dir, "tools");
  await mkdir(toolsPath);
  const doc = parseYaml(await readFile(FIXTURE, "utf8")) as Record<string, unknown>;
  await writeFile(path.join(toolsPath, "api.yaml"), stringifyYaml({ ...doc, base_url: `${server.url}/v1` }));
  // Tools run on the host side in every executor, so the host's environment supplies ${VAR}s.
  previousToken = process.env["EXAMPLE_API_TOKEN"];
  process.env["EXAMPLE_API_TOKEN"] = TOKEN;
});

afterAll(async () => {
  if (previousToken === undefined) delete process.env["EXAMPLE_API_TOKEN"];
  else process.env["EXAMPLE_API_TOKEN"] = previousToken;
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

const executors: Array<[string, () => Executor]> = [
  ["InProcessExecutor", () => new InProcessExecutor({ toolsPath, defaultTimeoutMs: 10_000 })],
  ["SubprocessExecutor", () => new SubprocessExecutor({ toolsPath, defaultTimeoutMs: 10_000 })],
];

for (const [label, make] of executors) {
  describe(`HTTP tool in a Session with ${label}`, () => {
    let session: Session;

    beforeAll(async () => {
      session = new Session({ storage: new FileStorage({ basePath: path.join(dir, `storage-${label}`) }), executor: make() });
      await session.start();
    });

    afterAll(async () => {
      await session?.close();
    });

    it("calls an endpoint from agent code", async () => {
      const r = await session.run('await tools.api.get_user({ id: "a b" })');
      expect(r.error).toBeNull();
      expect(r.value).toEqual({ id: "a b", authorized: true });
      expect(server.requests.at(-1)?.url).toBe("/v1/users/a%20b");
    });

    it("throws a ToolError with code and status that agent code can branch on", async () => {
      const r = await session.run(`
        let out;
        try { await tools.api.get_user({ id: "missing" }); } catch (e) { out = [e.name, e.code, e.status, e.message]; }
        out`);
      expect(r.error).toBeNull();
      const [name, code, status, message] = r.value as [string, string, number, string];
      expect([name, code, status]).toEqual(["ToolError", "NOT_FOUND", 404]);
      expect(message).toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/v1\/users\/missing returned 404 Not Found: \{"error":"no such user"\}/);
    });

    it("keeps the token out of the error the agent sees", async () => {
      const r = await session.run('await tools.api.get_user({ id: "reflect" })');
      expect(r.error?.name).toBe("ToolError");
      expect(r.error?.message).toContain('"got":"***"');
      expect(JSON.stringify(r)).not.toContain(TOKEN);
    });

    it("describes the tool with a declaration that compiles", async () => {
      const r = await session.run('await tools.describe("api")');
      expect(r.error).toBeNull();
      const decl = r.value as string;
      expect(decl).toContain("get_user(args: api.GetUserArgs): Promise<unknown>;");
      const usage = `
async function use() {
  await tools.api.get_user({ id: "a b" });
  await tools.api.search_users({ q: "ann", tag: ["x"], limit: 5 });
  await tools.api.create_user({ name: "Ann", role: "admin" });
  await tools.api.delete_user({ id: "1", "If-Match": "etag" });
}
void use;`;
      expect(typeErrors(decl + usage)).toEqual([]);
      expect(typeErrors(`${decl}\nvoid tools.api.create_user({ name: "Ann", role: "root" });`).length).toBeGreaterThan(0);
      expect(typeErrors(`${decl}\nvoid tools.api.get_user({});`).join("\n")).toMatch(/id/);
    });
  });
}
