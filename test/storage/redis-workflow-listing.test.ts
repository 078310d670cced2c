/**
 * RedisStorage lists workflows from a cached copy while `<base>:workflows:version` is unchanged, so
 * every way a write can reach Redis must move that version: another client's save, replace and
 * delete, a bulk save, and (documented) a hand edit followed by deleting the version key.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkflowRecord } from "../../src/storage/protocol.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { deleteKeys, startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";

let server: RedisServer;

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  await server?.close();
});

function record(name: string, description: string): WorkflowRecord {
  return { name, source: "export async function run() { return 1; }\n", description, createdAt: "t", updatedAt: "t" };
}

describe("RedisStorage workflow listing", () => {
  it("follows another client's saves, replacements, deletes and bulk saves; a hand edit shows once the version key is deleted", async () => {
    const prefix = uniquePrefix("listing");
    const mine = new RedisStorage({ url: server.url, prefix });
    const other = new RedisStorage({ url: server.url, prefix });
    const listed = async () => (await mine.workflows.list()).map((r) => `${r.name}:${r.description}`);
    try {
      await mine.workflows.save(record("a", "one"));
      expect(await listed()).toEqual(["a:one"]);
      expect(await listed()).toEqual(["a:one"]); // served from the cached copy
      await other.workflows.save(record("b", "two"));
      expect(await listed()).toEqual(["a:one", "b:two"]);
      await other.workflows.save(record("a", "uno"));
      expect(await listed()).toEqual(["a:uno", "b:two"]);
      await other.workflows.delete("b");
      expect(await listed()).toEqual(["a:uno"]);
      await other.workflows.saveMany([record("c", "three")], { clear: true });
      expect(await listed()).toEqual(["c:three"]);

      const raw = new Redis(server.url);
      try {
        await raw.hset(`${prefix}:workflows`, "d", JSON.stringify(record("d", "by hand")));
        expect(await listed()).toEqual(["c:three"]); // as documented: a hand edit bypasses the version
        await raw.del(`${prefix}:workflows:version`);
        expect(await listed()).toEqual(["c:three", "d:by hand"]);
      } finally {
        raw.disconnect();
      }
      const [c] = await mine.workflows.list();
      expect(Object.isFrozen(c)).toBe(true);
    } finally {
      await mine.close();
      await other.close();
      await deleteKeys(server.url, `${prefix}:`);
    }
  });

  it("saves 150,000 workflows in one bulk save (more arguments than a JavaScript call can take)", async () => {
    const prefix = uniquePrefix("bulk");
    const storage = new RedisStorage({ url: server.url, prefix });
    try {
      const records = Array.from({ length: 150_000 }, (_, i) => record(`w${i}`, `n${i}`));
      await storage.workflows.saveMany(records);
      const listed = await storage.workflows.list();
      expect(listed.length).toBe(150_000);
      expect(listed.find((r) => r.name === "w149999")?.description).toBe("n149999");
    } finally {
      await storage.close();
      await deleteKeys(server.url, `${prefix}:`);
    }
  }, 120_000);
});
