/**
 * Every adapter type together, as a user meets them: one agent run calls a CLI recipe, an MCP
 * server's tool and an HTTP endpoint; a deny rule and an approval callback stop calls before they
 * happen; and the `tools.describe` blocks of docs/tools.md are the real generated text and compile.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { approval, policy } from "../../src/tools/middleware/index.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { setEnv } from "../helpers/env.js";
import { json, startServer, type TestServer } from "./http/server.js";
import { fixtureTool, typeErrors, yamlText } from "./mcp/helpers.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
let dir: string;
let api: TestServer;
let restoreEnv: (() => void) | undefined;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-all-"));
  api = await startServer((req, res) => {
    const m = /^\/v1\/users\/([^/?]+)/.exec(req.url);
    if (m && req.method === "GET") return json(res, 200, { id: decodeURIComponent(m[1]!), auth: req.headers["authorization"] });
    json(res, 404, { error: "no route" });
  });
  restoreEnv = setEnv({ EXAMPLE_API_TOKEN: "t0ken" });
  await copyFile(path.join(ROOT, "examples", "tools", "echo.yaml"), path.join(dir, "echo.yaml"));
  await writeFile(path.join(dir, "math.yaml"), yamlText({ ...fixtureTool("math"), description: "Arithmetic over MCP", tags: ["math"] }));
  const apiYaml = (await readFile(path.join(ROOT, "test", "fixtures", "http", "api.yaml"), "utf8")).replace("http://127.0.0.1:8080/v1", `${api.url}/v1`);
  await writeFile(path.join(dir, "api.yaml"), apiYaml);
});

afterAll(async () => {
  restoreEnv?.();
  await api.close();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

describe("CLI, MCP and HTTP tools together", () => {
  it("one run calls a CLI recipe, an MCP tool and an HTTP endpoint; deny and approval stop calls first", async () => {
    const asked: string[] = [];
    const executor = new SubprocessExecutor({
      toolsPath: dir,
      middleware: [
        policy({ deny: ["api.delete_user"] }),
        approval(({ tool, callable }) => (asked.push(`${tool}.${callable}`), callable === "echo_json" ? { approve: false, reason: "no echoing" } : true)),
      ],
    });
    const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "store") }), executor });
    try {
      const r = await session.run(`
        const [said, sum, user] = await Promise.all([
          tools.echo.say({ text: ["hello"] }),
          tools.math.add({ a: 2, b: 3 }),
          tools.api.get_user({ id: "a b" }),
        ]);
        [said.trim(), sum, user]`);
      expect(r.error).toBeNull();
      expect(r.value).toEqual(["hello", { sum: 5 }, { id: "a b", auth: "Bearer t0ken" }]);

      const before = api.requests.length;
      const denied = await session.run("await tools.api.delete_user({ id: 'x' })");
      expect(denied.error?.message).toMatch(/api\.delete_user is denied by policy/);
      expect(api.requests.length).toBe(before);
      expect(asked).not.toContain("api.delete_user");

      const refused = await session.run("await tools.math.echo_json({ message: 'hi' })");
      expect(refused.error?.name).toBe("ToolError");
      expect(refused.error?.message).toMatch(/math\.echo_json was not approved: no echoing/);
      const calls = await session.run("(await tools.math.calls())");
      // The fixture counts the calls it answered before this one: add only (echo_json never reached it).
      expect(calls.value).toEqual({ count: 1 });
    } finally {
      await session.close();
    }
  }, 60_000);

  it("the tools.describe blocks of docs/tools.md are the generated text (in order) and compile", async () => {
    const doc = await readFile(path.join(ROOT, "docs/tools.md"), "utf8");
    const start = doc.indexOf("### What `tools.describe` shows");
    expect(start).toBeGreaterThan(-1);
    const section = doc.slice(start, doc.indexOf("\n## ", start));
    const blocks = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks).toHaveLength(3);
    const registry = await ToolRegistry.load(dir);
    try {
      for (const [i, name] of ["echo", "math", "api"].entries()) {
        const block = blocks[i]!;
        expect(typeErrors(block), name).toEqual([]);
        // Every line of the doc appears in the generated declaration, in the same order (MCP is an excerpt).
        const generated = (await registry.describe(name)).split("\n");
        let at = 0;
        for (const line of block.trimEnd().split("\n")) {
          const found = generated.indexOf(line, at);
          expect(found, `${name}: docs/tools.md line not in the generated text (in order): ${line}`).toBeGreaterThanOrEqual(0);
          at = found + 1;
        }
      }
    } finally {
      await registry.close();
    }
  }, 60_000);
});
