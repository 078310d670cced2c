/**
 * With RedisStorage the configured deps list lives in Redis (`<prefix>:deps`): a package added by
 * one process is in the list another process sees, and that process installs it when it starts.
 */
import { execFile } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { Session } from "../../src/session.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { deleteKeys, startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";

const FIXTURE = path.resolve(import.meta.dirname, "..", "fixtures", "deps", "tcm-tiny");
const DIST = path.resolve(import.meta.dirname, "..", "..", "dist", "index.js");
let server: RedisServer;
let work: string;
let tarball: string;

beforeAll(async () => {
  server = await startRedis();
  work = await mkdtemp(path.join(os.tmpdir(), "tcm-deps-redis-"));
  await cp(FIXTURE, path.join(work, "pkg"), { recursive: true });
  const { stdout } = await promisify(execFile)("npm", ["pack", "--silent", "--pack-destination", work], { cwd: path.join(work, "pkg") });
  tarball = path.join(work, stdout.trim().split("\n").pop()!);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

describe("deps list in Redis", () => {
  it("is shared between two processes on one prefix", async () => {
    const prefix = uniquePrefix("deps");
    const storage = new RedisStorage({ url: server.url, prefix });
    const session = new Session({ storage, executor: new InProcessExecutor({ allowLocalPaths: true, depsDir: path.join(work, "a") }) });
    try {
      const added = await session.run(`(await deps.add(${JSON.stringify(tarball)})).installed`);
      expect(added.value).toEqual([tarball]);
      // A second process, its own deps folder, the same Redis prefix: it sees the spec and installs it.
      const script = `
        import { RedisStorage, Session, InProcessExecutor } from ${JSON.stringify(DIST)};
        const storage = new RedisStorage({ url: ${JSON.stringify(server.url)}, prefix: ${JSON.stringify(prefix)} });
        const s = new Session({ storage, executor: new InProcessExecutor({ allowLocalPaths: true, depsDir: ${JSON.stringify(path.join(work, "b"))} }) });
        const before = (await s.listDeps()).map((d) => [d.spec, d.installed]);
        const synced = await s.syncDeps();
        const used = await s.run('(await import("tcm-tiny")).shout("shared")');
        console.log(JSON.stringify({ before, alreadyPresent: synced.alreadyPresent, used: used.value }));
        await s.close(); await storage.close();`;
      const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { timeout: 60_000 });
      // Installed when its executor started (the shared list is the configuration), so sync finds it present.
      expect(JSON.parse(stdout)).toEqual({ before: [[tarball, true]], alreadyPresent: [tarball], used: "SHARED!" });
    } finally {
      await session.close();
      await deleteKeys(server.url, prefix);
      await storage.close();
    }
  }, 120_000);
});
