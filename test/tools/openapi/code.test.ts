/**
 * The OpenAPI tool source from code: `tools: { github: openapiTools({ spec, baseUrl, bearer }) }`
 * on the in-process and subprocess executors (GitHub's real spec, the local stand-in server), a
 * parsed document given as an object, and option mistakes refused at the call with the YAML's
 * messages.
 */
import path from "node:path";
import os from "node:os";
import { mkdtemp, rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../../src/execution/in-process/executor.js";
import type { Executor } from "../../../src/execution/protocol.js";
import { SubprocessExecutor } from "../../../src/execution/subprocess/executor.js";
import { Session } from "../../../src/session.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import { openapiTools, type CodeToolsInput } from "../../../src/index.js";
import type { TestServer } from "../http/server.js";
import { GITHUB_SPEC, startGitHubServer } from "./github-server.js";

const TOKEN = "ghp_codeToolsToken_9931";
const TOKEN_VAR = "TCM_OPENAPI_CODE_TEST_TOKEN";

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startGitHubServer(TOKEN);
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-openapi-code-"));
  process.env[TOKEN_VAR] = TOKEN;
});

afterAll(async () => {
  delete process.env[TOKEN_VAR];
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

const executors: Array<[string, (tools: CodeToolsInput) => Executor]> = [
  ["InProcessExecutor", (tools) => new InProcessExecutor({ tools, defaultTimeoutMs: 60_000, search: { embedder: "lexical" } })],
  ["SubprocessExecutor", (tools) => new SubprocessExecutor({ tools, defaultTimeoutMs: 60_000, search: { embedder: "lexical" } })],
];

for (const [label, make] of executors) {
  describe(`openapiTools() in the tools option of ${label}`, () => {
    it("calls GitHub's operations from agent code, with the bearer token from the environment", async () => {
      const session = new Session({
        storage: new FileStorage({ basePath: path.join(dir, `s-${label}`) }),
        executor: make({ github: openapiTools({ spec: GITHUB_SPEC, baseUrl: server.url, bearer: `\${${TOKEN_VAR}}`, operations: { tags: ["issues", "users"] } }) }),
      });
      await session.start();
      try {
        const r = await session.run(`
          const issue = await tools.github.issues_create({ owner: "o", repo: "r", title: "From code" });
          const user = await tools.github.users_get_by_username({ username: "ann" });
          const found = await tools.search("get a user", { limit: 3 });
          ({ title: issue.title, login: user.login, found: found.map((f) => f.name + "." + f.callables[0].name) })`);
        expect(r.error, JSON.stringify(r.error)).toBeNull();
        expect(r.value).toMatchObject({ title: "From code", login: "ann" });
        expect((r.value as { found: string[] }).found).toContain("github.users_get_by_username");
        expect(JSON.stringify(await session.listTools())).not.toContain(TOKEN);
      } finally {
        await session.close();
      }
    }, 120_000);

    it("takes a parsed document and a literal token, and keeps the token out of errors", async () => {
      const doc = {
        openapi: "3.1.0",
        info: { title: "Users" },
        paths: { "/users/{username}": { get: { operationId: "getUser", parameters: [{ name: "username", in: "path", required: true, schema: { type: "string" } }] } } },
      };
      const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, `d-${label}`) }), executor: make({ users: openapiTools({ spec: doc, baseUrl: server.url, bearer: TOKEN }) }) });
      await session.start();
      try {
        const ok = await session.run('(await tools.users.getUser({ username: "bo" })).login');
        expect(ok.value).toBe("bo");
        const r = await session.run('await tools.users.getUser({ username: "ghost" })');
        expect(r.error?.name).toBe("ToolError");
        expect(r.error?.message).toContain('"authorization":"***"');
        expect(JSON.stringify(r)).not.toContain(TOKEN);
      } finally {
        await session.close();
      }
    }, 120_000);
  });
}

describe("openapiTools() options", () => {
  it("refuses mistakes at the call, with the same wording as the YAML", () => {
    expect(() => openapiTools({ spec: "./x.json", baseUrl: "ftp://nope", bearer: "${NOT VALID}" })).toThrow(TypeError);
    expect(() => openapiTools({ spec: "./x.json", baseUrl: "ftp://nope" })).toThrow(/Invalid options of openapiTools\(\):\n {2}base_url: expected an http:\/\/ or https:\/\/ URL/);
    expect(() => openapiTools({ spec: "./x.json", operations: { paths: ["repos/**"] } })).toThrow(/operations\.paths\[0\]: a path glob starts with \//);
  });
});
