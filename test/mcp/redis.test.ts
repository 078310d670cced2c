/** `ts-code-mode mcp --redis URL --prefix P`: the same agent round trip with workflows and artifacts in a real Redis. */
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../helpers/redis.js";
import { callTool, cleanup, connectStdio, ensureBuilt, EXAMPLE_TOOLS, structuredOf, tempDir, type StdioConnection } from "./harness.js";

let redis: RedisServer;
let dir: string;
let conn: StdioConnection | undefined;

beforeAll(async () => {
  await ensureBuilt();
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.close();
});
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await conn?.close();
  conn = undefined;
  await cleanup(dir);
});

describe("mcp with --redis", () => {
  it("keeps workflows and artifacts in Redis under the prefix and workspace", async () => {
    conn = await connectStdio(["--tools", EXAMPLE_TOOLS, "--redis", redis.url, "--prefix", "mcp_test", "--workspace", "team_a", "--surface", "full"], { cwd: dir });
    expect(conn.stderr()).toMatch(/storage in Redis at 127\.0\.0\.1:\d+, prefix mcp_test, workspace team_a/);
    const run = await callTool(conn.client, "run_code", {
      code: `await workflows.create({ name: "hello", source: "export async function run() { return (await tools.echo.say({ text: ['hi'] })).trim(); }" });
await artifacts.save("notes.txt", "kept in redis");
await workflows.hello({})`,
    });
    expect(structuredOf(run)).toMatchObject({ ok: true, value: "hi" });
    expect(structuredOf(await callTool(conn.client, "load_artifact", { name: "notes.txt" }))).toMatchObject({ text: "kept in redis" });

    const client = new Redis(redis.url);
    try {
      expect(await client.hkeys("mcp_test:ws:team_a:workflows")).toEqual(["hello"]);
      expect(await client.get("mcp_test:ws:team_a:artifacts:data:notes.txt")).toBe("kept in redis");
    } finally {
      client.disconnect();
    }
  });
});
