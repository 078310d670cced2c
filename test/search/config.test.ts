/**
 * Search configuration and wiring: the `search` executor option, the words the CLI and
 * TS_CODE_MODE_SEARCH use, and a real Session whose tools.search / workflows.search go through
 * the configured embedder and whose vectors survive into the next session.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { effectiveEmbedderSpec, parseSearchSpec, SearchSetup } from "../../src/search/config.js";
import { LexicalRanker } from "../../src/search/lexical.js";
import { SemanticRanker } from "../../src/search/semantic.js";
import { UseLiteEmbedder } from "../../src/search/use-lite.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/index.js";
import { BagOfWordsEmbedder, CountingEmbedder } from "./helpers.js";

const TOOLS = path.resolve("examples/tools");

describe("search settings", () => {
  it("parses use-lite, lexical and URL#model", () => {
    expect(parseSearchSpec("use-lite")).toBe("use-lite");
    expect(parseSearchSpec(" lexical ")).toBe("lexical");
    expect(parseSearchSpec("http://localhost:11434/v1#nomic-embed-text")).toEqual({ url: "http://localhost:11434/v1", model: "nomic-embed-text" });
    expect(parseSearchSpec("https://api.openai.com/v1#text-embedding-3-small", "sk-x")).toEqual({
      url: "https://api.openai.com/v1",
      model: "text-embedding-3-small",
      apiKey: "sk-x",
    });
    for (const bad of ["semantic", "http://localhost:11434/v1", "http://x#", "localhost#m"]) {
      expect(() => parseSearchSpec(bad), bad).toThrow(/expected use-lite, lexical or URL#model/);
    }
  });

  it("uses the option first, then TS_CODE_MODE_SEARCH, then the built-in model", () => {
    expect(effectiveEmbedderSpec({ embedder: "lexical" }, { TS_CODE_MODE_SEARCH: "use-lite" })).toBe("lexical");
    expect(effectiveEmbedderSpec({}, { TS_CODE_MODE_SEARCH: "lexical" })).toBe("lexical");
    expect(effectiveEmbedderSpec(undefined, { TS_CODE_MODE_SEARCH: "http://h/v1#m", TS_CODE_MODE_SEARCH_API_KEY: "k" })).toEqual({ url: "http://h/v1", model: "m", apiKey: "k" });
    expect(effectiveEmbedderSpec(undefined, {})).toBe("use-lite");
    expect(() => effectiveEmbedderSpec(undefined, { TS_CODE_MODE_SEARCH: "bogus" })).toThrow(/^TS_CODE_MODE_SEARCH: Invalid search setting "bogus"/);
  });

  it("builds lexical rankers for lexical, semantic ones otherwise, sharing one built-in model per process", async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-search-cfg-"));
    try {
      const storage = new FileStorage({ basePath: base });
      expect(SearchSetup.create(storage, { embedder: "lexical" }).workflowsRanker()).toBeInstanceOf(LexicalRanker);
      const a = SearchSetup.create(storage, { embedder: "use-lite" });
      const b = SearchSetup.create(storage, { embedder: "use-lite" });
      expect(a.workflowsRanker()).toBeInstanceOf(SemanticRanker);
      expect(a.embedder).toBeInstanceOf(UseLiteEmbedder);
      expect(a.embedder).toBe(b.embedder);
      expect(() => SearchSetup.create(storage, { embedder: "nope" as never })).toThrow(/^Invalid search options: embedder: must be/);
    } finally {
      await rm(base, { recursive: true, force: true, maxRetries: 5 });
    }
  });

  it("validates the executor option like every other option", () => {
    expect(() => new InProcessExecutor({ search: { embedder: "semantic" as never } })).toThrow(/search\.embedder: must be "use-lite", "lexical"/);
    expect(() => new InProcessExecutor({ search: { embedder: "lexical", bogus: 1 } as never })).toThrow(ValidationError);
    expect(() => new SubprocessExecutor({ search: "lexical" as never })).toThrow(/search: must be an object/);
    expect(() => new InProcessExecutor({ search: { embedder: { url: "http://localhost:11434/v1", model: "m" }, readyTimeoutMs: 5000 } })).not.toThrow();
  });
});

describe("a session's search", () => {
  let base: string;
  const sessions: Session[] = [];

  beforeEach(async () => {
    base = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-search-session-"));
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await rm(base, { recursive: true, force: true, maxRetries: 5 });
  });

  async function open(executor: InProcessExecutor | SubprocessExecutor): Promise<Session> {
    const session = new Session({ storage: new FileStorage({ basePath: base }), executor });
    sessions.push(session);
    await session.start();
    return session;
  }

  async function value(s: Session, code: string): Promise<unknown> {
    const r = await s.run(code);
    if (!r.ok) throw new Error(`${r.error?.name}: ${r.error?.message}`);
    return r.value;
  }

  const SOURCE = "/** Scan a host for open TCP ports. */\nexport async function run({ host }: { host: string }) { return host; }";

  it("ranks with the configured embedder, caches vectors under <base>/vectors, and a re-opened session embeds nothing again", async () => {
    const counting = new CountingEmbedder(new BagOfWordsEmbedder("test-bow", 64, { sockets: "ports", listening: "open" }));
    const first = await open(new InProcessExecutor({ toolsPath: TOOLS, search: { embedder: counting } }));
    await value(first, `await workflows.create({ name: "port_scan", source: ${JSON.stringify(SOURCE)} })`);
    await value(first, `await workflows.create({ name: "greet", source: "/** Say hello. */ export async function run() { return 'hi'; }" })`);
    const hits = (await value(first, "await workflows.search('which sockets are listening')")) as Array<{ name: string }>;
    expect(hits[0]?.name).toBe("port_scan");
    expect((await value(first, "(await tools.search('count lines'))[0].name")) as string).toBe("wc");
    const embedded = counting.documentTexts(["which sockets are listening", "count lines"]);
    expect(embedded).toContain("Scan a host for open TCP ports.");
    expect(embedded.length).toBeGreaterThan(4 + 7);
    const space = path.join(base, "vectors", "test-bow-64d");
    expect(await readdir(path.join(space, "workflows"))).toHaveLength(4);
    expect(await readdir(path.join(space, "tools"))).toHaveLength(1); // one folder per tools path

    await first.close();
    const again = new CountingEmbedder(new BagOfWordsEmbedder("test-bow", 64, { sockets: "ports", listening: "open" }));
    const second = await open(new InProcessExecutor({ toolsPath: TOOLS, search: { embedder: again } }));
    expect((await second.searchWorkflows("which sockets are listening"))[0]?.name).toBe("port_scan");
    expect((await second.searchTools("count lines"))[0]?.name).toBe("wc");
    expect(again.texts.sort()).toEqual(["count lines", "which sockets are listening"]);
  });

  it("passes the option through the subprocess executor too", async () => {
    const counting = new CountingEmbedder(new BagOfWordsEmbedder());
    const s = await open(new SubprocessExecutor({ search: { embedder: counting } }));
    await s.addWorkflow({ name: "port_scan", source: SOURCE });
    expect(((await value(s, "await workflows.search('open ports')")) as Array<{ name: string }>)[0]?.name).toBe("port_scan");
    expect(counting.texts).toContain("open ports");
  });

  it("lexical mode embeds nothing and writes no vectors", async () => {
    const s = await open(new InProcessExecutor({ search: { embedder: "lexical" } }));
    await s.addWorkflow({ name: "port_scan", source: SOURCE });
    expect((await s.searchWorkflows("open ports"))[0]?.name).toBe("port_scan");
    expect(await readdir(base)).not.toContain("vectors");
  });
});
