/**
 * docs/openapi.md, run: its tool file (with base_url pointed at the local GitHub stand-in instead of
 * port 8080, and the vendored spec at the relative path it names) loaded by a Session, and its
 * agent-code block run as it is written.
 */
import { copyFile, mkdir, readFile, rm, writeFile, mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubprocessExecutor } from "../../../src/execution/subprocess/executor.js";
import { Session } from "../../../src/session.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import type { TestServer } from "../http/server.js";
import { GITHUB_SPEC, startGitHubServer } from "./github-server.js";

const DOC = fileURLToPath(new URL("../../../docs/openapi.md", import.meta.url));
const TOKEN = "ghp_docExampleToken_0042";

function block(markdown: string, lang: string): string {
  const m = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(markdown);
  if (!m) throw new Error(`docs/openapi.md has no \`\`\`${lang} block`);
  return m[1]!;
}

let server: TestServer;
let dir: string;
let previous: string | undefined;

beforeAll(async () => {
  server = await startGitHubServer(TOKEN);
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-openapi-doc-"));
  const markdown = await readFile(DOC, "utf8");
  const yaml = block(markdown, "yaml");
  expect(yaml).toContain("base_url: http://127.0.0.1:8080");
  await mkdir(path.join(dir, "tools", "github"), { recursive: true });
  await writeFile(path.join(dir, "tools", "github.yaml"), yaml.replace("http://127.0.0.1:8080", server.url));
  await copyFile(GITHUB_SPEC, path.join(dir, "tools", "github", "api.github.com.json.gz"));
  previous = process.env["GITHUB_TOKEN"];
  process.env["GITHUB_TOKEN"] = TOKEN;
});

afterAll(async () => {
  if (previous === undefined) delete process.env["GITHUB_TOKEN"];
  else process.env["GITHUB_TOKEN"] = previous;
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

describe("docs/openapi.md", () => {
  it("runs its agent code against its tool file", async () => {
    const session = new Session({
      storage: new FileStorage({ basePath: path.join(dir, "storage") }),
      executor: new SubprocessExecutor({ toolsPath: path.join(dir, "tools"), defaultTimeoutMs: 120_000, search: { embedder: "lexical" } }),
    });
    await session.start();
    try {
      const r = await session.run(block(await readFile(DOC, "utf8"), "ts"));
      expect(r.error).toBeNull();
      expect(r.value).toMatchObject({ number: 1, short: true });
      expect((r.value as { found: string[] }).found).toContain("github.issues_create");
      const create = server.requests.find((q) => q.method === "POST")!;
      expect(create.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(create.headers["x-github-api-version"]).toBe("2022-11-28");
      // The filters of the doc's file: only issues/pulls/repos/markdown operations under its paths.
      const info = await session.describeTool("github");
      expect(info).toContain("issues_create(");
      expect(info).not.toContain("gists_create(");
    } finally {
      await session.close();
    }
  }, 180_000);
});
