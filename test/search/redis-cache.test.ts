/**
 * With RedisStorage, vectors live in Redis (`<prefix>:vectors:*`): a second session (another
 * executor, as another process would) embeds nothing the first one already embedded, a changed
 * workflow is embedded again, and a deleted one's vector is removed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { Session } from "../../src/session.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { deleteKeys, listKeys, startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";
import { BagOfWordsEmbedder, CountingEmbedder } from "./helpers.js";

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
}, 60_000);
afterAll(async () => {
  await server?.close();
});

const QUERY = "rotate old logs";
const workflow = (name: string, what: string) => ({ name, description: what, source: `/** ${what} */\nexport async function run() { return "${name}"; }` });

describe("vector cache in Redis", () => {
  it("is shared across sessions, follows changes and deletions", async () => {
    const prefix = uniquePrefix("vec");
    const open = (embedder: CountingEmbedder) => {
      const storage = new RedisStorage({ url: server.url, prefix });
      return { storage, session: new Session({ storage, executor: new InProcessExecutor({ search: { embedder } }) }) };
    };
    const first = new CountingEmbedder(new BagOfWordsEmbedder());
    const a = open(first);
    try {
      await a.session.addWorkflow(workflow("rotate_logs", "Rotate and compress old log files"));
      await a.session.addWorkflow(workflow("port_scan", "Scan a host for open TCP ports"));
      expect((await a.session.searchWorkflows(QUERY))[0]?.name).toBe("rotate_logs");
      expect(first.documentTexts([QUERY]).length).toBeGreaterThan(0);
      const keys = await listKeys(server.url, prefix);
      expect(keys.some((k) => k.startsWith(`${prefix}:vectors:`))).toBe(true);
    } finally {
      await a.session.close();
      await a.storage.close();
    }

    const second = new CountingEmbedder(new BagOfWordsEmbedder());
    const b = open(second);
    try {
      expect((await b.session.searchWorkflows(QUERY))[0]?.name).toBe("rotate_logs");
      expect(second.documentTexts([QUERY])).toEqual([]);
      // A changed workflow is embedded again; the unchanged one is not.
      await b.session.addWorkflow(workflow("port_scan", "Find listening TCP ports on a machine"));
      second.reset();
      await b.session.searchWorkflows("listening ports");
      expect(second.documentTexts(["listening ports"]).join(" ")).toMatch(/listening TCP ports/);
      expect(second.documentTexts(["listening ports"]).join(" ")).not.toMatch(/Rotate/);
      // A deleted workflow's vectors go at the next search.
      const before = (await listKeys(server.url, prefix)).filter((k) => k.includes(":vectors:")).length;
      await b.session.removeWorkflow("rotate_logs");
      await b.session.searchWorkflows(QUERY);
      const after = (await listKeys(server.url, prefix)).filter((k) => k.includes(":vectors:")).length;
      expect(after).toBeLessThan(before);
    } finally {
      await b.session.close();
      await b.storage.close();
      await deleteKeys(server.url, prefix);
    }
  });
});
