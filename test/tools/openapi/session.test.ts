/**
 * End to end: GitHub's real published OpenAPI description (1,223 operations) as a `type: openapi`
 * tool, its base_url pointed at a local server implementing a few of its operations, loaded from a
 * tools folder by a real Session and called from agent code in the in-process and the subprocess
 * executor: flattened JSON bodies, query and path parameters, a text/plain body, a text/html
 * answer, the bearer token and a fixed header from the YAML, errors with the token redacted.
 */
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { InProcessExecutor } from "../../../src/execution/in-process/executor.js";
import type { Executor } from "../../../src/execution/protocol.js";
import { SubprocessExecutor } from "../../../src/execution/subprocess/executor.js";
import { Session } from "../../../src/session.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import type { TestServer } from "../http/server.js";
import { GITHUB_SPEC, startGitHubServer } from "./github-server.js";

const TOKEN = "ghp_e2eSecretToken_5521";
const TOKEN_VAR = "TCM_OPENAPI_TEST_GITHUB_TOKEN";

let server: TestServer;
let dir: string;
let toolsPath: string;
let previousToken: string | undefined;

beforeAll(async () => {
  server = await startGitHubServer(TOKEN);
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-openapi-"));
  toolsPath = path.join(dir, "tools");
  await mkdir(toolsPath);
  await writeFile(
    path.join(toolsPath, "github.yaml"),
    stringifyYaml({
      name: "github",
      type: "openapi",
      spec: GITHUB_SPEC,
      base_url: server.url,
      bearer: `\${${TOKEN_VAR}}`,
      headers: { "X-GitHub-Api-Version": "2022-11-28" },
    }),
  );
  // Tools run on the host side in every executor, so the host's environment supplies ${VAR}s.
  previousToken = process.env[TOKEN_VAR];
  process.env[TOKEN_VAR] = TOKEN;
}, 60_000);

afterAll(async () => {
  if (previousToken === undefined) delete process.env[TOKEN_VAR];
  else process.env[TOKEN_VAR] = previousToken;
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

const executors: Array<[string, () => Executor]> = [
  ["InProcessExecutor", () => new InProcessExecutor({ toolsPath, defaultTimeoutMs: 60_000, search: { embedder: "lexical" } })],
  ["SubprocessExecutor", () => new SubprocessExecutor({ toolsPath, defaultTimeoutMs: 60_000, search: { embedder: "lexical" } })],
];

for (const [label, make] of executors) {
  describe(`OpenAPI tool (GitHub's spec) in a Session with ${label}`, () => {
    let session: Session;

    beforeAll(async () => {
      session = new Session({ storage: new FileStorage({ basePath: path.join(dir, `storage-${label}`) }), executor: make() });
      await session.start();
    }, 60_000);

    afterAll(async () => {
      await session?.close();
    });

    it("creates an issue with a flattened JSON body, path params and the bearer token", async () => {
      const r = await session.run(`
        const issue = await tools.github.issues_create({ owner: "octo", repo: "hello", title: "Found a bug", labels: ["bug"] });
        const open = await tools.github.issues_list_for_repo({ owner: "octo", repo: "hello", state: "open", per_page: 5 });
        ({ number: issue.number, title: issue.title, open: open.map((i) => i.title) })`);
      expect(r.error).toBeNull();
      expect(r.value).toMatchObject({ title: "Found a bug", open: expect.arrayContaining(["Found a bug"]) });
      const create = server.requests.find((q) => q.method === "POST" && q.url === "/repos/octo/hello/issues")!;
      expect(JSON.parse(create.body)).toEqual({ title: "Found a bug", labels: ["bug"] });
      expect(create.headers["content-type"]).toBe("application/json");
      expect(create.headers["x-github-api-version"]).toBe("2022-11-28");
      expect(server.requests.at(-1)?.url).toBe("/repos/octo/hello/issues?state=open&per_page=5");
    }, 60_000);

    it("sends a text/plain body and returns a text/html answer as a string", async () => {
      const r = await session.run('await tools.github.markdown_render_raw({ body: "Hello **world**" })');
      expect(r.error).toBeNull();
      expect(r.value).toBe("<p>Hello **world**</p>");
      expect(server.requests.at(-1)?.headers["content-type"]).toBe("text/plain");
    }, 60_000);

    it("checks arguments against the spec before any request", async () => {
      const before = server.requests.length;
      const r = await session.run(`
        const out = [];
        for (const args of [{ owner: "octo" }, { owner: "octo", repo: "hello", state: "maybe" }, { owner: "octo", repo: "hello", title: "t", colour: "red" }]) {
          try { await tools.github.issues_list_for_repo(args); } catch (e) { out.push(e.code + ": " + e.message); }
        }
        out`);
      expect(r.error).toBeNull();
      const [missing, badEnum, unknownArg] = r.value as string[];
      expect(missing).toMatch(/^MISSING_PARAM: tools\.github\.issues_list_for_repo: Missing required argument 'repo'/);
      expect(badEnum).toMatch(/^INVALID_INPUT: .*'state' expected one of "open", "closed", "all"/);
      expect(unknownArg).toMatch(/^INVALID_INPUT: .*Unknown argument 'title'/);
      expect(server.requests.length).toBe(before);
    }, 60_000);

    it("keeps the token out of the error the agent sees, and the ToolError carries the status", async () => {
      const r = await session.run(`
        let out;
        try { await tools.github.users_get_by_username({ username: "ghost" }); } catch (e) { out = [e.name, e.code, e.status, e.message]; }
        out`);
      expect(r.error).toBeNull();
      const [name, code, status, message] = r.value as [string, string, number, string];
      expect([name, code, status]).toEqual(["ToolError", "NOT_FOUND", 404]);
      expect(message).toContain('"authorization":"***"');
      expect(JSON.stringify(r)).not.toContain(TOKEN);
    }, 60_000);

    it("finds an operation with tools.search and describes it in a few lines", async () => {
      const r = await session.run(`
        const hits = await tools.search("create an issue", { limit: 3 });
        const decl = await tools.describe("github.issues_create");
        ({ hits: hits.map((h) => h.name + "." + h.callables[0].name), one: hits[0].callables.length, decl })`);
      expect(r.error).toBeNull();
      const { hits, one, decl } = r.value as { hits: string[]; one: number; decl: string };
      expect(hits).toContain("github.issues_create");
      expect(one).toBe(1);
      expect(decl).toContain("issues_create(args: github.IssuesCreateArgs): Promise<");
      expect(decl).toContain("(POST /repos/{owner}/{repo}/issues)");
      expect(decl.length).toBeLessThan(4_000);
    }, 60_000);
  });
}
