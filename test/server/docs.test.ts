/**
 * docs/serve.md, run: its two shell blocks, line by line as a user types them in two terminals.
 * A `ts-code-mode serve` line starts a server (on a free port instead of 8787, which may be taken
 * here); the client lines after it run against that server, with the doc's hosts (10.0.0.5, redis)
 * replaced by this machine's server and a real redis-server. Each line's words are split by bash
 * itself, so quoting and `$(...)` mean what they mean to the user.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { cli, spawnListening, type ListeningProcess } from "../cli/harness.js";
import { docCommands, markedShellBlock, runDocShell, shellWords } from "../helpers/docs.js";
import { deleteKeys, listKeys, startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";
import { callTool, connectStdio, structuredOf, type StdioConnection } from "../mcp/harness.js";
import { cleanup, ensureBuilt, tempDir } from "./harness.js";

let dir: string;
let redis: RedisServer;
let prefix: string;
const servers: ListeningProcess[] = [];
let mcp: StdioConnection | undefined;

beforeAll(async () => {
  [redis] = await Promise.all([startRedis(), ensureBuilt()]);
  dir = await tempDir();
  prefix = uniquePrefix("serve-docs");
}, 180_000);
afterAll(async () => {
  await mcp?.close();
  await Promise.all(servers.map((s) => s.stop()));
  await deleteKeys(redis.url, `${prefix}:`);
  await redis.close();
  await cleanup(dir);
});

/** Starts a `ts-code-mode serve` line of the doc on a free port. */
async function serve(args: string[], env: NodeJS.ProcessEnv): Promise<ListeningProcess> {
  const port = args.indexOf("--port");
  const free = port >= 0 ? args.map((a, i) => (i === port + 1 ? "0" : a)) : [...args, "--port", "0"];
  const server = await spawnListening(free, { what: "serve", cwd: dir, env });
  servers.push(server);
  return server;
}

it("one machine: the token exported, serve on the folder, run --remote lists its tools", async () => {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env["TS_CODE_MODE_TOKEN"];
  const lines = docCommands(await markedShellBlock("docs/serve.md", "test/server/docs.test.ts", 0));
  expect(lines).toHaveLength(3);
  const token = /^export TS_CODE_MODE_TOKEN="(.+)"$/.exec(lines[0]!)?.[1];
  expect(token, "the block exports the token first").toBeDefined();
  env["TS_CODE_MODE_TOKEN"] = (await shellWords(`"${token!}"`, { cwd: dir, env }))[0];
  expect(env["TS_CODE_MODE_TOKEN"]).toMatch(/^[0-9a-f]{64}$/);
  expect((await cli(["init", "--base", "./.code-mode"], { cwd: dir })).code).toBe(0);

  const [serveWord, ...serveArgs] = await shellWords(lines[1]!, { cwd: dir, env });
  expect(serveWord).toBe("ts-code-mode");
  const server = await serve(serveArgs, env);
  const r = await runDocShell(lines[2]!.replace("http://127.0.0.1:8787", server.url), { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain("name: 'echo'");
}, 180_000);

it("a fleet: serve on Redis with per-tenant workspaces; mcp --remote runs code there in team-a's workspace", async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, TS_CODE_MODE_TOKEN: "docs-fleet-token-0123456789" };
  const lines = docCommands(await markedShellBlock("docs/serve.md", "test/server/docs.test.ts", 1));
  expect(lines).toHaveLength(2);
  const local = (line: string) => line.replaceAll("redis://redis:6379", redis.url).replaceAll("--prefix app", `--prefix ${prefix}`);

  const [, ...serveArgs] = await shellWords(local(lines[0]!), { cwd: dir, env });
  const server = await serve(serveArgs, env);
  const [, ...mcpArgs] = await shellWords(local(lines[1]!).replace("http://10.0.0.5:8787", server.url), { cwd: dir, env });
  expect(mcpArgs[0]).toBe("mcp");
  // The remote token as the line's comment says: from TS_CODE_MODE_REMOTE_TOKEN.
  mcp = await connectStdio(mcpArgs.slice(1), { cwd: dir, env: { TS_CODE_MODE_REMOTE_TOKEN: env["TS_CODE_MODE_TOKEN"]! } });
  const run = await callTool(mcp.client, "run_code", { code: "await artifacts.save('hello.txt', 'from team-a'); (await artifacts.list()).map((a) => a.name)" });
  expect(structuredOf(run)).toMatchObject({ ok: true, value: ["hello.txt"] });
  // Saved in the tenant's workspace of the servers' Redis prefix, not in the prefix itself.
  expect((await listKeys(redis.url, `${prefix}:ws:team-a:artifacts:`)).length).toBeGreaterThan(0);
  expect(await listKeys(redis.url, `${prefix}:artifacts:`)).toEqual([]);
}, 180_000);
