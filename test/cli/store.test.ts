/** `ts-code-mode store bootstrap|list|pull|diff` (the built command) against a real redis-server. */
import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FileStorage } from "../../src/storage/file/storage.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { loadToolDocuments } from "../../src/storage/redis/tools.js";
import { createToolAdapter, defaultToolFactories } from "../../src/tools/adapters/index.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { deleteKeys, freePort, startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";
import { cleanup, cli, ensureBuilt, initTemplate, MAIN, tempDir, type InitTemplate } from "./harness.js";
import { markedShellBlock, runDocShell } from "../helpers/docs.js";

let server: RedisServer;
let dir: string;
let prefix: string;
const open: RedisStorage[] = [];

/** The base one `init` made (harness.ts's initTemplate): the tests that need one get a copy. */
let template: InitTemplate;

beforeAll(async () => {
  [server] = await Promise.all([startRedis(), ensureBuilt()]);
  template = await initTemplate();
}, 120_000);
afterAll(async () => {
  await template?.close();
  await server?.close();
});
beforeEach(async () => {
  dir = await tempDir();
  prefix = uniquePrefix("cli");
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  await deleteKeys(server.url, `${prefix}:`);
  await cleanup(dir);
});

function store(args: string[]) {
  return cli(["store", ...args], { cwd: dir });
}

/** Like the harness's cli(), with extra environment variables. */
function storeWithEnv(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, "store", ...args], { cwd: dir, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function redis(workspaceId?: string): RedisStorage {
  const s = new RedisStorage({ url: server.url, prefix, ...(workspaceId ? { workspaceId } : {}) });
  open.push(s);
  return s;
}

async function initBase(): Promise<string> {
  return template.copyTo(dir);
}

describe("store bootstrap", () => {
  it("copies a base folder's workflows with their params and descriptions, then list shows them", async () => {
    await initBase();
    const r = await store(["bootstrap", "--source", "base", "--target", server.url, "--prefix", prefix, "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { written: string[]; removed: string[]; target: string; prefix: string };
    expect(report).toMatchObject({ written: ["count_lines", "system_report", "triple"], removed: [], target: `127.0.0.1:${server.port}`, prefix });
    const triple = await redis().workflows.get("triple");
    expect(triple).toMatchObject({ description: expect.stringMatching(/^Triple a number/), params: [{ name: "n", type: "number" }] });

    const list = await store(["list", "--target", server.url, "--prefix", prefix]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^WORKFLOW\s+PARAMS/);
    expect(list.stdout).toMatch(/^triple\s+1\s/m);
  });

  it("derives params and description for hand-written files, warns about broken ones, and --clear replaces the set atomically", async () => {
    const src = path.join(dir, "flows");
    await mkdir(src);
    await writeFile(path.join(src, "add.ts"), "/** Add two numbers. */\nexport async function run({ a, b }: { a: number; b: number }) { return a + b; }\n");
    await writeFile(path.join(src, "broken.ts"), "export async function run( {\n");
    await redis().workflows.save({ name: "stale", source: "x", description: "", createdAt: "t", updatedAt: "t" });

    const r = await store(["bootstrap", "--source", "flows", "--target", server.url, "--prefix", prefix, "--clear"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Wrote 2 workflows .* removed 1 \(stale\)/);
    expect(r.stderr).toMatch(/warning: broken: syntax error/);
    const s = redis();
    expect((await s.workflows.list()).map((w) => w.name)).toEqual(["add", "broken"]);
    expect(await s.workflows.get("add")).toMatchObject({
      description: "Add two numbers.",
      descriptionExplicit: false,
      params: [
        { name: "a", type: "number", required: true },
        { name: "b", type: "number", required: true },
      ],
    });
  });

  it("reports progress every 100 workflows on stderr, keeping stdout JSON", async () => {
    const base = path.join(dir, "many");
    const fs = new FileStorage({ basePath: base });
    for (let i = 0; i < 250; i++) {
      await fs.workflows.save({
        name: `w${i}`,
        source: `export async function run() { return ${i}; }`,
        description: `number ${i}`,
        params: [],
        createdAt: "2024-01-01T00:00:00.000Z",
        updatedAt: "2024-01-01T00:00:00.000Z",
      });
    }
    const r = await store(["bootstrap", "--source", "many", "--target", server.url, "--prefix", prefix, "--workspace", "team-a", "--json"]);
    expect(r.code).toBe(0);
    expect(r.stderr.trim().split("\n")).toEqual([
      "store bootstrap: 100/250 workflows read",
      "store bootstrap: 200/250 workflows read",
      "store bootstrap: 250/250 workflows read",
      "store bootstrap: 250/250 workflows written",
    ]);
    expect((JSON.parse(r.stdout) as { written: string[]; workspaceId: string }).written).toHaveLength(250);
    expect(await redis("team-a").workflows.list()).toHaveLength(250);
    expect(await redis().workflows.list()).toEqual([]);
  });

  it("copies tool YAML so a registry can be built from Redis alone", async () => {
    await initBase();
    const r = await store(["bootstrap", "--source", "base", "--type", "tools", "--target", server.url, "--prefix", prefix]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Wrote 7 tools .* to .*:tools at 127\.0\.0\.1:/);

    const docs = await loadToolDocuments(redis());
    expect(docs.map((d) => d.file)).toContain("echo.yaml");
    expect(docs.find((d) => d.name === "echo")?.text).toBe(await readFile(path.join(dir, "base", "tools", "echo.yaml"), "utf8"));
    // What a container does: parse each document and register the adapter.
    const registry = new ToolRegistry();
    try {
      for (const doc of docs) registry.register(await createToolAdapter(parseYaml(doc.text), { file: doc.file, dir }, defaultToolFactories()));
      expect(registry.names()).toContain("echo");
      expect(await registry.call("echo", "say", { text: ["from", "redis"] })).toMatch(/from redis/);
    } finally {
      await registry.close();
    }

    const list = await store(["list", "--type", "tools", "--target", server.url, "--prefix", prefix, "--json"]);
    expect(JSON.parse(list.stdout)).toContainEqual(expect.objectContaining({ name: "echo", file: "echo.yaml", description: "Print text to standard output" }));
  });
});

describe("store diff and pull", () => {
  it("diff marks + only in source, - only in target, ~ different, = same", async () => {
    const base = await initBase();
    expect((await store(["bootstrap", "--source", "base", "--target", server.url, "--prefix", prefix])).code).toBe(0);
    await writeFile(path.join(base, "workflows", "extra.ts"), "export async function run() { return 1; }\n");
    const triple = path.join(base, "workflows", "triple.ts");
    await writeFile(triple, `${await readFile(triple, "utf8")}\n// edited\n`);
    await redis().workflows.save({ name: "only_remote", source: "x", description: "", createdAt: "t", updatedAt: "t" });

    const r = await store(["diff", "--source", "base", "--target", server.url, "--prefix", prefix]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual(["= count_lines", "+ extra", "- only_remote", "= system_report", "~ triple"]);
    const json = await store(["diff", "--source", "base", "--target", server.url, "--prefix", prefix, "--json"]);
    expect(JSON.parse(json.stdout)).toContainEqual({ status: "~", name: "triple" });

    // Tools: identical after a bootstrap, then one edited file shows up.
    expect((await store(["bootstrap", "--source", "base", "--type", "tools", "--target", server.url, "--prefix", prefix])).code).toBe(0);
    await writeFile(path.join(base, "tools", "echo.yaml"), "name: echo\ndescription: changed\n");
    const tools = await store(["diff", "--source", "base", "--type", "tools", "--target", server.url, "--prefix", prefix]);
    expect(tools.stdout).toMatch(/^~ echo$/m);
    expect(tools.stdout).toMatch(/^= wc$/m);
  });

  it("pull writes a base folder that bootstraps back to the same store", async () => {
    await initBase();
    for (const type of ["workflows", "tools"]) {
      expect((await store(["bootstrap", "--source", "base", "--type", type, "--target", server.url, "--prefix", prefix])).code).toBe(0);
    }
    const r = await store(["pull", "--dest", "copy", "--target", server.url, "--prefix", prefix]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Pulled 3 workflows .*3 created/);
    const again = await store(["pull", "--dest", "copy", "--target", server.url, "--prefix", prefix, "--json"]);
    expect((JSON.parse(again.stdout) as { written: Array<{ outcome: string }> }).written.map((w) => w.outcome)).toEqual(["unchanged", "unchanged", "unchanged"]);
    expect((await store(["pull", "--dest", "copy", "--type", "tools", "--target", server.url, "--prefix", prefix])).code).toBe(0);

    // The pulled folder is a normal base: the same workflows, runnable by the CLI.
    const run = await cli(["run", "--base", "copy", "--executor", "in-process", "await workflows.triple({ n: 5 })"], { cwd: dir });
    expect(run.stdout.trim()).toBe("15");
    for (const type of ["workflows", "tools"]) {
      const d = await store(["diff", "--source", "copy", "--type", type, "--target", server.url, "--prefix", prefix, "--json"]);
      expect((JSON.parse(d.stdout) as Array<{ status: string }>).every((e) => e.status === "=")).toBe(true);
    }
  });
});

describe("store errors", () => {
  it("an unreachable server fails with exit 1 and a message naming host:port, never the password", async () => {
    const port = await freePort();
    const r = await store(["list", "--target", `redis://:pa55word-x@127.0.0.1:${port}`, "--prefix", prefix]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`Cannot connect to Redis at 127\\.0\\.0\\.1:${port}.*ECONNREFUSED`));
    expect(r.stderr).not.toContain("pa55word-x");
    expect(r.stdout).toBe("");
  });

  it("a bad URL, missing URL or bad source is a usage error (exit 2) with a clear message", async () => {
    const bad = await store(["list", "--target", "http://:pa55word-x@localhost:6379", "--prefix", prefix]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/redis:\/\/ or rediss:\/\//);
    expect(bad.stderr).not.toContain("pa55word-x");
    const missing = await store(["list", "--prefix", prefix]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--target/);
    const noSource = await store(["bootstrap", "--source", "nope", "--target", server.url, "--prefix", prefix]);
    expect(noSource.code).toBe(2);
    expect(noSource.stderr).toMatch(/does not exist/);
    const toolsWs = await store(["list", "--type", "tools", "--workspace", "w", "--target", server.url, "--prefix", prefix]);
    expect(toolsWs.code).toBe(2);
    const badType = await store(["list", "--type", "artifacts", "--target", server.url, "--prefix", prefix]);
    expect(badType.code).toBe(2);
  });

  it("takes the URL from TS_CODE_MODE_REDIS_URL", async () => {
    await redis().workflows.save({ name: "from_env", source: "x", description: "", createdAt: "t", updatedAt: "t" });
    const r = await storeWithEnv(["list", "--prefix", prefix, "--json"], { TS_CODE_MODE_REDIS_URL: server.url });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Array<{ name: string }>).map((w) => w.name)).toEqual(["from_env"]);
  });
});

describe("docs/storage.md: the store walk-through, as written", () => {
  it("bootstrap, list, pull and diff exit 0; the pulled workflows are the folder's, and diff finds them the same", async () => {
    // The doc's server and prefix are a user's; this test's redis-server and a fresh prefix stand in.
    const block = (await markedShellBlock("docs/storage.md", "test/cli/store.test.ts")).replaceAll("redis://localhost:6379", server.url).replaceAll("--prefix myapp", `--prefix ${prefix}`);
    const r = await runDocShell(block, { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const own = new FileStorage({ basePath: path.join(dir, ".code-mode") });
    const names = (await own.workflows.list()).map((w) => w.name).sort();
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(r.stdout).toMatch(new RegExp(`^= +${name}\\b`, "m"));
    const pulled = new FileStorage({ basePath: path.join(dir, "copy") });
    expect((await pulled.workflows.list()).map((w) => w.name).sort()).toEqual(names);
    await Promise.all([own.close(), pulled.close()]);
  }, 180_000);
});
