/**
 * "A container can run from Redis alone": `store bootstrap --type tools`, then `mcp --redis … --prefix …`
 * in a folder with no tools serves the tool YAML stored in Redis (the built bin, a real redis-server).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { callTool, connectStdio, structuredOf, type StdioConnection } from "../mcp/harness.js";
import { deleteKeys, startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";
import { cleanup, cli, ensureBuilt, tempDir } from "./harness.js";

let server: RedisServer;
let dir: string;
let prefix: string;
let conn: StdioConnection | undefined;

beforeAll(async () => {
  [server] = await Promise.all([startRedis(), ensureBuilt()]);
});
afterAll(async () => {
  await server?.close();
});
beforeEach(async () => {
  dir = await tempDir();
  prefix = uniquePrefix("rt");
});
afterEach(async () => {
  await conn?.close();
  conn = undefined;
  await deleteKeys(server.url, `${prefix}:`);
  await cleanup(dir);
});

/** The server logs what it serves once it is up; the client's handshake may finish just before. */
async function logged(c: StdioConnection, pattern: RegExp): Promise<string> {
  for (let i = 0; i < 200 && !pattern.test(c.stderr()); i++) await new Promise((r) => setTimeout(r, 25));
  return c.stderr();
}

describe("mcp --redis without --tools", () => {
  it("serves the tool YAML that store bootstrap --type tools put in Redis", async () => {
    expect((await cli(["init", "--base", "src-base"], { cwd: dir })).code).toBe(0);
    const boot = await cli(["store", "bootstrap", "--source", "src-base", "--type", "tools", "--target", server.url, "--prefix", prefix], { cwd: dir });
    expect(boot.code).toBe(0);
    // Started in an empty folder: ./.code-mode/tools does not exist, only Redis has tools.
    const empty = await tempDir();
    try {
      conn = await connectStdio(["--redis", server.url, "--prefix", prefix], { cwd: empty });
      expect(await logged(conn, /serving/)).toMatch(new RegExp(`\\d+ tool files from Redis \\(${prefix}:tools\\)`));
      const run = await callTool(conn.client, "run_code", { code: "[(await tools.list()).map((t) => t.name).sort(), await tools.echo.say({ text: ['from', 'redis'] })]" });
      const result = structuredOf<{ ok: boolean; value: [string[], string] }>(run);
      expect(result.ok).toBe(true);
      expect(result.value[0]).toEqual(expect.arrayContaining(["date", "echo", "grep", "wc"]));
      expect(result.value[1]).toBe("from redis\n");
    } finally {
      await conn?.close();
      conn = undefined;
      await cleanup(empty);
    }
  });

  it("--tools DIR still wins over Redis", async () => {
    conn = await connectStdio(["--redis", server.url, "--prefix", prefix, "--tools", "nowhere"], { cwd: dir });
    const log = await logged(conn, /serving/);
    expect(log).toContain("tools from ");
    expect(log).not.toContain("from Redis");
  });
});
