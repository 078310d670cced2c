/**
 * The built-in model loads on first need. A session that starts (search enabled, the default) and
 * runs code without searching never starts the model's worker thread (~130 MiB); the first search does.
 * Its own file: the model's worker is per process, and another test file's search would start it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { UseLiteEmbedder } from "../../src/search/use-lite.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/index.js";

describe("the embedding model is loaded lazily", () => {
  let base: string;
  let session: Session;
  const saved = process.env["TS_CODE_MODE_SEARCH"];

  beforeAll(async () => {
    delete process.env["TS_CODE_MODE_SEARCH"]; // the default (semantic search with the built-in model)
    base = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-lazy-model-"));
    session = new Session({ storage: new FileStorage({ basePath: base }), executor: new InProcessExecutor() });
  });

  afterAll(async () => {
    if (saved !== undefined) process.env["TS_CODE_MODE_SEARCH"] = saved;
    await session.close();
    await rm(base, { recursive: true, force: true, maxRetries: 5 });
  });

  it("is not loaded by a session start, a run, a listing or a save; the first search loads it", async () => {
    await session.start();
    await session.addWorkflow({ name: "port_scan", source: "/** Scan a host for open TCP ports. */\nexport async function run({ host }: { host: string }) {\n  return host;\n}\n" });
    const r = await session.run("(await workflows.list()).length + (await tools.list()).length");
    expect(r.error).toBeNull();
    expect(UseLiteEmbedder.workerStarted()).toBe(false);
    const hits = await session.searchWorkflows("discover which TCP ports are listening");
    expect(hits[0]?.name).toBe("port_scan");
    expect(UseLiteEmbedder.workerStarted()).toBe(true);
  });
});
