/**
 * RedisStorage against a real redis-server started for this file: the shared conformance suite,
 * then what is specific to Redis (key layout, client ownership, descriptors, errors).
 */
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { storageFromDescriptor } from "../../src/storage/descriptor.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { parseRedisUrl, redact } from "../../src/storage/redis/connection.js";
import type { StorageError } from "../../src/errors.js";
import { SAVE_ARTIFACT_SCRIPT } from "../../src/storage/redis/artifacts.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { loadToolDocuments } from "../../src/storage/redis/tools.js";
import { storageConformance } from "../conformance/storage.js";
import { deleteKeys, freePort, listKeys, startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";

let server: RedisServer;

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  await server?.close();
});

storageConformance("RedisStorage", async (options = {}) => {
  const prefix = uniquePrefix("conf");
  return {
    storage: new RedisStorage({ url: server.url, prefix, ...options }),
    cleanup: async () => {
      await deleteKeys(server.url, `${prefix}:`);
    },
  };
});

describe("RedisStorage (Redis-specific)", () => {
  const opened: Array<{ close(): Promise<void> | void }> = [];
  const prefixes: string[] = [];

  function fresh(over: Partial<{ workspaceId: string; prefix: string }> = {}): RedisStorage {
    const prefix = over.prefix ?? uniquePrefix("rs");
    prefixes.push(prefix);
    const s = new RedisStorage({ url: server.url, prefix, ...(over.workspaceId ? { workspaceId: over.workspaceId } : {}) });
    opened.push(s);
    return s;
  }

  function rawClient(): Redis {
    const c = new Redis(server.url, { lazyConnect: true });
    opened.push({ close: () => c.disconnect() });
    return c;
  }

  afterEach(async () => {
    for (const o of opened.splice(0)) await o.close();
    for (const p of prefixes.splice(0)) await deleteKeys(server.url, `${p}:`);
  });

  describe("key layout", () => {
    it("keeps everything under <prefix>: with one hash per store, a data key per artifact and a name index", async () => {
      const s = fresh();
      await s.workflows.save({ name: "wf", source: "export async function run() {}", description: "", createdAt: "t", updatedAt: "t" });
      await s.artifacts.save("scans/a.json", { hosts: 3 }, { description: "scan" });
      await s.artifacts.save("raw.bin", Uint8Array.from([0, 255]));
      const p = s.prefix;
      expect(await listKeys(server.url, `${p}:`)).toEqual([
        `${p}:artifacts:bytes`,
        `${p}:artifacts:data:raw.bin`,
        `${p}:artifacts:data:scans/a.json`,
        `${p}:artifacts:index`,
        `${p}:artifacts:meta`,
        `${p}:workflows`,
        `${p}:workflows:version`,
      ]);
      const c = rawClient();
      expect(await c.type(`${p}:workflows`)).toBe("hash");
      expect(await c.type(`${p}:artifacts:meta`)).toBe("hash");
      expect(await c.type(`${p}:artifacts:index`)).toBe("zset");
      // The payload is stored as-is: raw bytes, and JSON text for a JSON value.
      expect([...(await c.getBuffer(`${p}:artifacts:data:raw.bin`))!]).toEqual([0, 255]);
      expect(JSON.parse((await c.get(`${p}:artifacts:data:scans/a.json`))!)).toEqual({ hosts: 3 });
      const meta = JSON.parse((await c.hget(`${p}:artifacts:meta`, "scans/a.json"))!) as Record<string, unknown>;
      expect(meta).toMatchObject({ kind: "json", description: "scan", size: 16 });
      const wf = JSON.parse((await c.hget(`${p}:workflows`, "wf"))!) as Record<string, unknown>;
      expect(wf).toMatchObject({ name: "wf", source: "export async function run() {}" });
    });

    it("puts a workspace under <prefix>:ws:<id>: and deleting the last artifact leaves no artifact keys", async () => {
      const s = fresh({ workspaceId: "team-a" });
      await s.artifacts.save("x", "1");
      const p = s.prefix;
      expect(await listKeys(server.url, `${p}:`)).toEqual([`${p}:ws:team-a:artifacts:bytes`, `${p}:ws:team-a:artifacts:data:x`, `${p}:ws:team-a:artifacts:index`, `${p}:ws:team-a:artifacts:meta`]);
      expect(s.toDescriptor()).toEqual({ type: "redis", url: server.url, prefix: p, workspaceId: "team-a" });
      expect(await s.artifacts.delete("x")).toBe(true);
      expect(await listKeys(server.url, `${p}:`)).toEqual([]);
    });

    it("keeps prefixes apart, and names that look like keys stay plain names", async () => {
      const a = fresh();
      const b = fresh({ prefix: `${a.prefix}-b` });
      await a.artifacts.save("key:artifacts:meta", "tricky");
      await a.artifacts.save("__proto__", "proto");
      await b.artifacts.save("k", "other prefix");
      expect((await a.artifacts.list()).map((i) => i.name)).toEqual(["__proto__", "key:artifacts:meta"]);
      expect(await a.artifacts.load("__proto__")).toBe("proto");
      expect((await b.artifacts.list()).map((i) => i.name)).toEqual(["k"]);
    });
  });

  describe("artifacts", () => {
    it("refuses to make an artifact name also a folder, like FileStorage", async () => {
      const s = fresh();
      await s.artifacts.save("a", "file");
      await expect(s.artifacts.save("a/b", "x")).rejects.toThrow(/"a" is an artifact, not a folder/);
      await expect(s.artifacts.save("a/b/c", "x")).rejects.toThrow(/"a" is an artifact, not a folder/);
      await s.artifacts.save("d/x", "inside");
      await expect(s.artifacts.save("d", "x")).rejects.toMatchObject({ name: "ValidationError", message: expect.stringMatching(/folder of artifacts/) });
      // "d0" and "d.txt" sort right after "d/" bytewise but are not inside it.
      await s.artifacts.save("d0", "sibling");
      await s.artifacts.save("d.txt", "sibling");
      expect((await s.artifacts.list()).map((i) => i.name)).toEqual(["a", "d.txt", "d/x", "d0"]);
      expect(await s.artifacts.load("a")).toBe("file");
    });

    it("round-trips large binary payloads exactly", async () => {
      const s = fresh();
      const big = Uint8Array.from({ length: 3 * 1024 * 1024 + 7 }, (_, i) => (i * 131 + (i >> 9)) % 256);
      const info = await s.artifacts.save("big.bin", big, { metadata: { n: big.length } });
      expect(info).toMatchObject({ kind: "bytes", size: big.length });
      const back = (await s.artifacts.load("big.bin")) as Uint8Array;
      expect(Buffer.compare(Buffer.from(back), Buffer.from(big))).toBe(0);
    });

    it("keeps metadata numbers exactly (no Lua re-encoding)", async () => {
      const s = fresh();
      const metadata = { pi: 3.141592653589793, big: 9007199254740991, tiny: 5e-324, neg: -0.1 };
      await s.artifacts.save("m", "x", { metadata });
      expect((await s.artifacts.get("m"))?.metadata).toEqual(metadata);
      expect((await s.artifacts.list())[0]?.metadata).toEqual(metadata);
    });

    it("two storages overwriting one artifact concurrently keep createdAt and strictly increasing updatedAt", async () => {
      const a = fresh();
      const b = new RedisStorage({ url: server.url, prefix: a.prefix });
      opened.push(b);
      const first = await a.artifacts.save("shared", "v0");
      const infos = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).artifacts.save("shared", `v${i}`)));
      const updated = infos.map((i) => Date.parse(i.updatedAt));
      expect(new Set(updated).size).toBe(infos.length);
      for (const info of infos) expect(info.createdAt).toBe(first.createdAt);
    });

    it("a corrupt entry is left out of list() and named by problems(), not fatal (issue 41)", async () => {
      const s = fresh();
      await s.artifacts.save("ok", "1");
      await s.artifacts.save("x", "1");
      await rawClient().hset(s.keys.artifactMeta, "x", "{not json");
      expect((await s.artifacts.list()).map((i) => i.name)).toEqual(["ok"]);
      expect(await s.artifacts.problems()).toEqual([{ name: "x", problem: expect.stringMatching(/Corrupt entry in Redis .*left out of the listing/) }]);
    });

    it("reports a hand-corrupted metadata entry as a StorageError naming the key", async () => {
      const s = fresh();
      await s.artifacts.save("x", "1");
      await rawClient().hset(s.keys.artifactMeta, "x", "{not json");
      const err = await s.artifacts.get("x").catch((e: unknown) => e);
      expect(err).toMatchObject({ name: "StorageError", message: expect.stringContaining(`${s.prefix}:artifacts:meta`) });
    });
  });

  describe("workflows", () => {
    it("saveMany writes all records in one transaction; clear replaces the whole set", async () => {
      const s = fresh();
      const rec = (name: string, source = "x") => ({ name, source, description: "", createdAt: "t", updatedAt: "t" });
      await s.workflows.save(rec("old"));
      await s.workflows.saveMany([rec("a"), rec("b")]);
      expect((await s.workflows.list()).map((r) => r.name)).toEqual(["a", "b", "old"]);
      await s.workflows.saveMany([rec("c")], { clear: true });
      expect((await s.workflows.list()).map((r) => r.name)).toEqual(["c"]);
      // One bad record: nothing is written.
      await expect(s.workflows.saveMany([rec("d"), rec("bad-name")])).rejects.toMatchObject({ name: "InvalidNameError" });
      await expect(s.workflows.saveMany([rec("d"), { ...rec("e"), source: 1 as unknown as string }])).rejects.toMatchObject({
        name: "ValidationError",
      });
      expect((await s.workflows.list()).map((r) => r.name)).toEqual(["c"]);
    });
  });

  describe("workflows listing", () => {
    it("a corrupt entry is left out of list() and named by problems(), not fatal (issue 41)", async () => {
      const s = fresh();
      await s.workflows.save({ name: "ok", source: "x", description: "", createdAt: "t", updatedAt: "t" });
      await rawClient().hset(s.keys.workflows, "bad", "{not json");
      // The listing re-reads only when the version moves: a hand edit deletes it (see workflows.ts).
      await rawClient().del(`${s.keys.workflows}:version`);
      expect((await s.workflows.list()).map((r) => r.name)).toEqual(["ok"]);
      expect(await s.workflows.problems()).toEqual([{ file: "bad", problem: expect.stringMatching(/Corrupt entry in Redis .*left out of the listing/) }]);
    });
  });

  describe("tools", () => {
    it("stores tool YAML documents under <prefix>:tools, shared by workspaces", async () => {
      const s = fresh();
      await s.tools.saveMany([
        { name: "echo", text: "name: echo\ndescription: Echo\n" },
        { name: "curl", text: "name: curl\n" },
      ]);
      const ws = fresh({ prefix: s.prefix, workspaceId: "w1" });
      expect(await loadToolDocuments(ws)).toEqual([
        { name: "curl", file: "curl.yaml", text: "name: curl\n" },
        { name: "echo", file: "echo.yaml", text: "name: echo\ndescription: Echo\n" },
      ]);
      expect(await rawClient().hget(`${s.prefix}:tools`, "echo")).toBe("name: echo\ndescription: Echo\n");
      await s.tools.saveMany([{ name: "only", text: "name: only\n" }], { clear: true });
      expect((await s.tools.list()).map((d) => d.name)).toEqual(["only"]);
      await expect(s.tools.saveMany([{ name: "../x", text: "" }])).rejects.toMatchObject({ name: "InvalidNameError" });
    });
  });

  describe("options, client ownership and descriptors", () => {
    it("rejects bad options with a ValidationError before connecting", () => {
      const bad: unknown[] = [
        {},
        { url: server.url },
        { url: server.url, prefix: "" },
        { url: server.url, prefix: "a\nb" },
        { url: "http://localhost:6379", prefix: "p" },
        { url: "not a url", prefix: "p" },
        { url: "redis://localhost:6379/notadb", prefix: "p" },
        { url: server.url, prefix: "p", extra: 1 },
        { client: {}, prefix: "p" },
      ];
      for (const options of bad) {
        expect(() => new RedisStorage(options as never), JSON.stringify(options)).toThrow(expect.objectContaining({ name: "ValidationError" }));
      }
      expect(() => new RedisStorage({ url: server.url, prefix: "p", workspaceId: "../x" })).toThrow(
        expect.objectContaining({ name: "InvalidNameError" }),
      );
    });

    it("uses a client it was given without quitting it, and describes it as a URL", async () => {
      const client = rawClient();
      const prefix = uniquePrefix("cl");
      prefixes.push(prefix);
      const s = new RedisStorage({ client, prefix, workspaceId: "w" });
      await s.artifacts.save("a", "via client");
      expect(s.toDescriptor()).toEqual({ type: "redis", url: `redis://127.0.0.1:${server.port}`, prefix, workspaceId: "w" });
      const again = await storageFromDescriptor(s.toDescriptor());
      opened.push(again);
      expect(await again.artifacts.load("a")).toBe("via client");
      await s.close();
      await s.close();
      expect(client.status).toBe("ready");
      expect(await client.ping()).toBe("PONG");
      await expect(s.artifacts.load("a")).rejects.toMatchObject({ name: "StorageError", message: expect.stringMatching(/closed/) });
    });

    it("quits its own connection on close; later calls fail with StorageError", async () => {
      const s = fresh();
      await s.artifacts.save("a", "1");
      await s.close();
      await expect(s.artifacts.list()).rejects.toMatchObject({ name: "StorageError", message: expect.stringMatching(/closed/) });
    });

    it("parses URLs without echoing passwords", () => {
      expect(parseRedisUrl("redis://:s3cret-pw@example.com:6380/2")).toEqual({
        url: "redis://:s3cret-pw@example.com:6380/2",
        where: "example.com:6380",
        password: "s3cret-pw",
      });
      expect(parseRedisUrl("rediss://cache.internal").where).toBe("cache.internal:6379");
      for (const bad of ["ftp://:s3cret-pw@h", "redis://:s3cret-pw@h/x y"]) {
        const err = (() => {
          try {
            parseRedisUrl(bad);
          } catch (e) {
            return e as Error;
          }
          throw new Error(`accepted ${bad}`);
        })();
        expect(err.name).toBe("ValidationError");
        expect(err.message).not.toContain("s3cret-pw");
      }
      expect(redact("see redis://user:pw@host:1 and rediss://:x@h", "longpassword")).toBe("see redis://***@host:1 and rediss://***@h");
    });
  });

  describe("connection errors", () => {
    it("an unreachable server gives a StorageError naming host:port, fast and without retrying forever", async () => {
      const port = await freePort();
      const s = new RedisStorage({ url: `redis://:hunter2-secret@127.0.0.1:${port}`, prefix: "p" });
      opened.push(s);
      for (const op of [() => s.artifacts.list(), () => s.workflows.get("x"), () => s.connect()]) {
        const err = (await op().catch((e: unknown) => e)) as Error;
        expect(err).toMatchObject({ name: "StorageError" });
        expect(err.message).toContain(`127.0.0.1:${port}`);
        expect(err.message).toMatch(/ECONNREFUSED/);
        expect(err.message).not.toContain("hunter2-secret");
      }
      // The descriptor keeps the password (another process must be able to reconnect).
      expect(s.toDescriptor()).toMatchObject({ url: `redis://:hunter2-secret@127.0.0.1:${port}` });
    });

    it("a wrong password is a StorageError that does not print the password", async () => {
      const secured = await startRedis({ password: "right-password" });
      try {
        const good = new RedisStorage({ url: secured.url, prefix: "p" });
        opened.push(good);
        await good.artifacts.save("x", "ok");
        expect(await good.artifacts.load("x")).toBe("ok");
        const bad = new RedisStorage({ url: `redis://:wrong-password@127.0.0.1:${secured.port}`, prefix: "p" });
        opened.push(bad);
        for (let attempt = 0; attempt < 2; attempt++) {
          const err = (await bad.artifacts.load("x").catch((e: unknown) => e)) as Error;
          expect(err.name).toBe("StorageError");
          expect(err.message).toContain(`127.0.0.1:${secured.port}`);
          expect(err.message).toMatch(/WRONGPASS|invalid password|NOAUTH/i);
          expect(err.message).not.toContain("wrong-password");
        }
        const none = new RedisStorage({ url: `redis://127.0.0.1:${secured.port}`, prefix: "p" });
        opened.push(none);
        await expect(none.artifacts.list()).rejects.toMatchObject({ name: "StorageError", message: expect.stringMatching(/NOAUTH|auth/i) });
      } finally {
        for (const o of opened.splice(0)) await o.close();
        await secured.close();
      }
    });
  });

  describe("tenants cannot collide", () => {
    it("prefix app + workspace t1 and prefix app:ws:t1 can never address the same keys", async () => {
      const p = uniquePrefix("tenant");
      const tenant = fresh({ prefix: p, workspaceId: "t1" });
      await tenant.artifacts.save("secret", "tenant t1's");
      await tenant.workflows.save({ name: "wf", source: "x", description: "", createdAt: "t", updatedAt: "t" });
      // Before: new RedisStorage({ prefix: `${p}:ws:t1` }) read and wrote tenant t1's records.
      for (const prefix of [`${p}:ws:t1`, `${p}:ws`, `${p}:artifacts:data`, `x:workflows`, "vectors"]) {
        expect(() => new RedisStorage({ url: server.url, prefix }), prefix).toThrow(expect.objectContaining({ name: "ValidationError", message: expect.stringMatching(/reserved/) }));
      }
      // Prefixes that merely contain ":" stay valid, and are kept apart.
      const colon = fresh({ prefix: `${p}:prod` });
      expect(await colon.artifacts.list()).toEqual([]);
      expect(await tenant.artifacts.load("secret")).toBe("tenant t1's");
    });

    it("a workspace id with ':' is refused, so it cannot write into another workspace's keys (WRONGTYPE)", async () => {
      const p = uniquePrefix("tenant");
      const t1 = fresh({ prefix: p, workspaceId: "t1" });
      await t1.artifacts.save("workflows", "t1's artifact named workflows");
      // Before: workspace "t1:artifacts:data" had its workflows hash at t1's payload key → WRONGTYPE.
      for (const workspaceId of ["t1:artifacts:data", "t1:", ":x", "a:b"]) {
        expect(() => new RedisStorage({ url: server.url, prefix: p, workspaceId }), workspaceId).toThrow(
          expect.objectContaining({ name: "InvalidNameError", message: expect.stringContaining('":"') }),
        );
      }
      expect(await t1.artifacts.load("workflows")).toBe("t1's artifact named workflows");
      expect(await listKeys(server.url, `${p}:`)).toEqual([
        `${p}:ws:t1:artifacts:bytes`,
        `${p}:ws:t1:artifacts:data:workflows`,
        `${p}:ws:t1:artifacts:index`,
        `${p}:ws:t1:artifacts:meta`,
      ]);
    });

    it("blob namespaces must start with a reserved root", async () => {
      const s = fresh();
      await expect(s.blobs.setMany("workflows", new Map([["k", Uint8Array.from([1])]]))).rejects.toMatchObject({ name: "ValidationError" });
      await s.blobs.setMany("vectors:space:scope", new Map([["k", Uint8Array.from([1])]]));
      expect(await s.blobs.keys("vectors:space:scope")).toEqual(["k"]);
    });
  });

  describe("no ghost writes, timeouts honoured, errors per call", () => {
    it("a write to a hung server is OUTCOME_UNKNOWN, never 'failed'; the next call fences it so it can never land later", { timeout: 30_000 }, async () => {
      const hung = await startRedis();
      const prefix = uniquePrefix("ghost");
      const s = new RedisStorage({ url: hung.url, prefix, commandTimeoutMs: 300, connectTimeoutMs: 300 });
      const s2 = new RedisStorage({ url: hung.url, prefix, commandTimeoutMs: 300, connectTimeoutMs: 300 });
      try {
        await s.artifacts.save("a", "v1", { metadata: { v: 1 } });
        await s2.workflows.save({ name: "wf", source: "v1", description: "", createdAt: "t", updatedAt: "t" });
        hung.pause();
        const errors = [
          await s.artifacts.save("a", "ghost", { metadata: { v: "ghost" } }).catch((e: unknown) => e),
          await s2.workflows.save({ name: "wf", source: "ghost", description: "", createdAt: "t", updatedAt: "t" }).catch((e: unknown) => e),
        ] as StorageError[];
        for (const err of errors) {
          expect(err).toMatchObject({ name: "StorageError", code: "OUTCOME_UNKNOWN" });
          expect(err.message).toMatch(/may or may not have been applied/);
        }
        // While the server is hung, a call fails plainly before sending anything (it cannot connect).
        const down = (await s.artifacts.save("a", "never sent").catch((e: unknown) => e)) as StorageError;
        expect(down).toMatchObject({ name: "StorageError", code: "IO" });
        expect(down.message).toMatch(/connectTimeoutMs/);
        hung.resume();
        // The first call after the server is back settles the writes: each happened before its
        // fence or never will. Whatever that call saw stays: nothing lands later.
        const first = await s.artifacts.load("a");
        const firstWf = (await s2.workflows.get("wf"))?.source;
        expect(["v1", "ghost"]).toContain(first);
        expect(["v1", "ghost"]).toContain(firstWf);
        await new Promise((r) => setTimeout(r, 500));
        expect(await s.artifacts.load("a")).toBe(first);
        expect((await s2.workflows.get("wf"))?.source).toBe(firstWf);
        expect((await s.artifacts.get("a"))?.metadata).toEqual({ v: first === "ghost" ? "ghost" : 1 });
        expect((await listKeys(hung.url, `${prefix}:fence:`)).length).toBe(2);
        // A retry of the same call leaves the retry's value.
        await s.artifacts.save("a", "retried");
        expect(await s.artifacts.load("a")).toBe("retried");
      } finally {
        hung.resume();
        await s.close();
        await s2.close();
        await hung.close();
      }
    });

    it("a late copy of a fenced write does nothing (the script checks its fence first)", async () => {
      const s = fresh();
      await s.artifacts.save("a", "current");
      const c = rawClient();
      const fence = s.keys.fence("0123456789abcdef01234567");
      await c.set(fence, "cancelled", "EX", 60);
      const reply = (await c.eval(
        SAVE_ARTIFACT_SCRIPT.source,
        5,
        s.keys.artifactIndex,
        s.keys.artifactMeta,
        s.keys.artifactData("a"),
        fence,
        s.keys.artifactBytes,
        "a",
        Date.now(),
        '"v":1,"kind":"text","size":5,"sha256":"x","description":"","metadata":{}}',
        "ghost",
        5,
        -1,
      )) as string[];
      expect(reply).toEqual(["fenced"]);
      expect(await s.artifacts.load("a")).toBe("current");
    });

    it("connecting to a hung server fails after connectTimeoutMs, not after the command timeout", { timeout: 15_000 }, async () => {
      const hung = await startRedis();
      const s = new RedisStorage({ url: hung.url, prefix: "p", connectTimeoutMs: 300, commandTimeoutMs: 60_000 });
      try {
        hung.pause();
        const err = (await s.connect().catch((e: unknown) => e)) as StorageError;
        expect(err).toMatchObject({ name: "StorageError", code: "IO" });
        expect(err.message).toMatch(/no answer within 300 ms \(connectTimeoutMs\)/);
        hung.resume();
        await s.connect();
      } finally {
        hung.resume();
        await s.close();
        await hung.close();
      }
    });

    it("callers waiting on one failed connection attempt each get their own error object", async () => {
      const port = await freePort();
      const s = new RedisStorage({ url: `redis://127.0.0.1:${port}`, prefix: "p" });
      opened.push(s);
      const [a, b] = (await Promise.all([s.artifacts.load("x").catch((e: unknown) => e), s.workflows.list().catch((e: unknown) => e)])) as Error[];
      expect(a).not.toBe(b);
      expect(a!.message).toMatch(/^Cannot load artifact "x"/);
      expect(b!.message).toMatch(/^Cannot list workflows/);
      a!.message = "changed by one caller";
      expect(b!.message).toMatch(/^Cannot list workflows/);
    });
  });

  it.each([
    ["in-process", () => new InProcessExecutor({})],
    ["subprocess", () => new SubprocessExecutor({})],
  ])("a Session on RedisStorage (%s executor) gives the agent artifacts and workflows", async (_label, executor) => {
    const storage = fresh({ workspaceId: "agent" });
    const session = new Session({ storage, executor: executor() });
    opened.push(session);
    const r = await session.run(`
      await artifacts.save("notes/a.bin", new Uint8Array([1, 2, 255]), { description: "bytes", metadata: { k: "v" } });
      await workflows.create({ name: "triple", source: "/** Triple. */ export async function run({ n }: { n: number }) { return n * 3; }" });
      const back = await artifacts.load("notes/a.bin");
      [Array.from(back), (await artifacts.list()).map((a) => a.name), await workflows.triple({ n: 4 }), (await workflows.list())[0].params]
    `);
    expect(r.error).toBeNull();
    expect(r.value).toEqual([[1, 2, 255], ["notes/a.bin"], 12, [{ name: "n", type: "number", required: true }]]);
    // The data is in Redis, under the workspace.
    const again = new RedisStorage({ url: server.url, prefix: storage.prefix, workspaceId: "agent" });
    opened.push(again);
    expect(await again.artifacts.get("notes/a.bin")).toMatchObject({ kind: "bytes", size: 3, description: "bytes", metadata: { k: "v" } });
    expect((await again.workflows.get("triple"))?.description).toBe("Triple.");
  });

  it("FileStorage and RedisStorage hold the same records the same way", async () => {
    // The same sequence of operations against both backends gives equal listings (times aside).
    const { mkdtemp, rm } = await import("node:fs/promises");
    const os = await import("node:os");
    const path = await import("node:path");
    const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-redis-vs-file-"));
    try {
      const file = new FileStorage({ basePath: dir });
      const redis = fresh();
      for (const s of [file, redis]) {
        await s.artifacts.save("t.txt", "text", { description: "d", metadata: { a: [1] } });
        await s.artifacts.save("dir/b.bin", Uint8Array.from([1, 2]));
        await s.artifacts.save("j", { j: true });
        await s.artifacts.delete("t.txt");
      }
      const strip = (infos: Array<{ createdAt: string; updatedAt: string }>) => infos.map(({ createdAt: _c, updatedAt: _u, ...rest }) => rest);
      expect(strip(await redis.artifacts.list())).toEqual(strip(await file.artifacts.list()));
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  });
});
