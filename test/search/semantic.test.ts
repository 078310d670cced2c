/**
 * SemanticRanker behaviour with a deterministic test embedder (no model, fast): the vector cache
 * on disk (embed once, re-embed on change, delete with the workflow, one cache per embedder), the
 * bounded wait for a model that is still loading, and the fallbacks. Real FileStorage in temp dirs.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SearchSetup } from "../../src/search/config.js";
import { LexicalRanker, type SearchDocument } from "../../src/search/lexical.js";
import { FUSION, SemanticRanker } from "../../src/search/semantic.js";
import { FileStorage } from "../../src/storage/file/index.js";
import { WorkflowLibrary } from "../../src/workflows/library.js";
import { BagOfWordsEmbedder, CountingEmbedder, GatedEmbedder } from "./helpers.js";

const WORKFLOWS = [
  { name: "port_scan", source: "/** Scan a host for open TCP ports. */\nexport async function run({ host }: { host: string }) {\n  return tools.nmap.scan({ target: host });\n}\n" },
  { name: "disk_report", source: "/** Report disk usage per folder. */\nexport async function run({ dir }: { dir: string }) {\n  return tools.du.summary({ path: dir });\n}\n" },
  { name: "greet", source: "/** Say hello to someone. */\nexport async function run({ who }: { who: string }) {\n  return `hello ${who}`;\n}\n" },
];

let base: string;
let storage: FileStorage;

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-search-"));
  storage = new FileStorage({ basePath: base });
  const plain = new WorkflowLibrary(storage.workflows);
  for (const w of WORKFLOWS) await plain.create(w);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true, maxRetries: 5 });
});

/** A library as a session builds it: ranker from SearchSetup, vectors under <base>/vectors/. */
function library(embedder: CountingEmbedder | BagOfWordsEmbedder | GatedEmbedder): WorkflowLibrary {
  return new WorkflowLibrary(storage.workflows, { ranker: SearchSetup.create(storage, { embedder }).workflowsRanker() });
}

async function vectorFiles(space = "test-bow-64d"): Promise<string[]> {
  const dir = path.join(base, "vectors", space, "workflows");
  return (await readdir(dir).catch(() => [])).sort();
}

describe("vector cache", () => {
  it("embeds each workflow's description and source words once, and a re-opened library embeds nothing", async () => {
    const counting = new CountingEmbedder(new BagOfWordsEmbedder());
    const first = library(counting);
    expect((await first.search("open ports"))[0]?.name).toBe("port_scan");
    expect(counting.documentTexts(["open ports"])).toHaveLength(6); // 3 descriptions + 3 sources' words
    expect(counting.documentTexts(["open ports"])).toContain("Scan a host for open TCP ports.");

    counting.reset();
    await first.search("disk usage");
    expect(counting.documentTexts(["disk usage"])).toEqual([]);

    // A new session on the same folder (what a new process sees): everything comes from disk.
    const again = new CountingEmbedder(new BagOfWordsEmbedder());
    expect((await library(again).search("disk usage"))[0]?.name).toBe("disk_report");
    expect(again.documentTexts(["disk usage"])).toEqual([]);
    expect(again.texts).toEqual(["disk usage"]);
  });

  it("stores one raw float32 file per text, named by the text's sha256, with no temp files left", async () => {
    await library(new BagOfWordsEmbedder()).search("hello");
    const files = await vectorFiles();
    expect(files).toHaveLength(6);
    for (const f of files) {
      expect(f).toMatch(/^[0-9a-f]{64}\.f32$/);
      expect((await stat(path.join(base, "vectors", "test-bow-64d", "workflows", f))).size).toBe(64 * 4);
    }
  });

  it("re-embeds a changed workflow (only what changed) and deletes its old vectors", async () => {
    const counting = new CountingEmbedder(new BagOfWordsEmbedder());
    const lib = library(counting);
    await lib.search("hello");
    const before = await vectorFiles();
    counting.reset();

    await lib.create({ name: "greet", source: WORKFLOWS[2]!.source, description: "Welcome a visitor warmly" });
    await lib.search("hello");
    expect(counting.documentTexts(["hello"])).toEqual(["Welcome a visitor warmly"]);
    const after = await vectorFiles();
    expect(after).toHaveLength(6);
    expect(after.filter((f) => !before.includes(f))).toHaveLength(1);
  });

  it("removes a deleted workflow's vectors at the next search", async () => {
    const lib = library(new BagOfWordsEmbedder());
    await lib.search("hello");
    expect(await lib.delete("disk_report")).toBe(true);
    await lib.search("hello");
    expect(await vectorFiles()).toHaveLength(4);
  });

  it("sweeps vectors of workflows deleted while no session searched, at a new session's first search", async () => {
    await library(new BagOfWordsEmbedder()).search("hello");
    await storage.workflows.delete("greet");
    await storage.workflows.delete("disk_report");
    const counting = new CountingEmbedder(new BagOfWordsEmbedder());
    await library(counting).search("hello");
    expect(await vectorFiles()).toHaveLength(2);
    expect(counting.documentTexts(["hello"])).toEqual([]);
  });

  it("keeps a separate cache per embedder id and per dimensions", async () => {
    await library(new BagOfWordsEmbedder()).search("hello");
    const other = new CountingEmbedder(new BagOfWordsEmbedder("other-model", 64));
    await library(other).search("hello");
    expect(other.documentTexts(["hello"])).toHaveLength(6);
    const smaller = new CountingEmbedder(new BagOfWordsEmbedder("test-bow", 32));
    await library(smaller).search("hello");
    expect(smaller.documentTexts(["hello"])).toHaveLength(6);
    expect((await readdir(path.join(base, "vectors"))).sort()).toEqual(["other-model-64d", "test-bow-32d", "test-bow-64d"]);
    expect(await vectorFiles()).toHaveLength(6);
  });

  it("treats a damaged vector file as missing and rewrites it", async () => {
    await library(new BagOfWordsEmbedder()).search("hello");
    const [victim] = await vectorFiles();
    const file = path.join(base, "vectors", "test-bow-64d", "workflows", victim!);
    await writeFile(file, "not a vector");
    const counting = new CountingEmbedder(new BagOfWordsEmbedder());
    await library(counting).search("hello");
    expect(counting.documentTexts(["hello"])).toHaveLength(1);
    expect((await readFile(file)).byteLength).toBe(64 * 4);
  });

  it("keeps workspaces apart", async () => {
    const scoped = new FileStorage({ basePath: base, workspaceId: "team-a" });
    await new WorkflowLibrary(scoped.workflows).create(WORKFLOWS[0]!);
    const lib = new WorkflowLibrary(scoped.workflows, { ranker: SearchSetup.create(scoped, { embedder: new BagOfWordsEmbedder() }).workflowsRanker() });
    expect((await lib.search("ports")).map((r) => r.name)).toEqual(["port_scan"]);
    expect(await readdir(path.join(base, "vectors", "test-bow-64d", "workspaces", "team-a", "workflows"))).toHaveLength(2);
  });
});

describe("ranking", () => {
  const docs: SearchDocument[] = [
    { id: "port_scan", fields: [{ text: "port_scan", weight: 3 }, { text: "Scan a host for open TCP ports", weight: 2 }], semantic: { primary: "Scan a host for open TCP ports" } },
    { id: "greet", fields: [{ text: "greet", weight: 3 }, { text: "Say hello to someone", weight: 2 }], semantic: { primary: "Say hello to someone" } },
  ];

  it("finds by meaning what shares no word with the query, which lexical ranking cannot", async () => {
    const embedder = new BagOfWordsEmbedder("test-syn", 64, { sockets: "ports", listening: "open" });
    const ranker = new SemanticRanker({ embedder });
    expect(await new LexicalRanker().rank("which sockets are listening", docs, 5)).toEqual([]);
    const hits = await ranker.rank("which sockets are listening", docs, 5);
    expect(hits[0]?.id).toBe("port_scan");
  });

  it("returns scores in 0..1, best first, honours the limit, and nothing for an empty query", async () => {
    const ranker = new SemanticRanker({ embedder: new BagOfWordsEmbedder() });
    const hits = await ranker.rank("say hello to the host", docs, 5);
    expect(hits.map((h) => h.id)).toEqual(["greet", "port_scan"]);
    for (const h of hits) {
      expect(h.score).toBeGreaterThan(0);
      expect(h.score).toBeLessThanOrEqual(1);
    }
    expect(await ranker.rank("say hello to the host", docs, 1)).toHaveLength(1);
    expect(await ranker.rank("   ", docs, 5)).toEqual([]);
  });

  it("puts a document whose exact name is in the query at the top, at or above the exact-match floor", async () => {
    const ranker = new SemanticRanker({ embedder: new BagOfWordsEmbedder() });
    const hits = await ranker.rank("say hello with port_scan", docs, 5);
    expect(hits[0]).toMatchObject({ id: "port_scan" });
    expect(hits[0]!.score).toBeGreaterThanOrEqual(FUSION.exact);
  });
});

describe("a library search embeds its query while it lists the store", () => {
  it("the query reaches the embedder before the listing is read, and is embedded once", async () => {
    const embedder = new CountingEmbedder(new BagOfWordsEmbedder());
    const ranker = SearchSetup.create(storage, { embedder }).workflowsRanker();
    const query = "scan a host for open ports";
    let embeddedBeforeListing: boolean | null = null;
    // The real store, observed: what the embedder had seen when the library asked for the listing.
    const observed = Object.create(storage.workflows) as typeof storage.workflows;
    observed.list = () => {
      embeddedBeforeListing ??= embedder.texts.includes(query);
      return storage.workflows.list();
    };
    const lib = new WorkflowLibrary(observed, { ranker });
    await lib.search("warm up"); // the first search of a process may answer before any model loads
    embedder.reset();
    embeddedBeforeListing = null;
    const hits = await lib.search(query);
    expect(hits[0]?.name).toBe("port_scan");
    expect(embeddedBeforeListing).toBe(true);
    expect(embedder.texts.filter((t) => t === query)).toHaveLength(1);
    // A repeated query comes from the ranker's cache: nothing is embedded again.
    embedder.reset();
    await lib.search(query);
    expect(embedder.calls).toBe(0);
  });
});

describe("model not ready, or failing", () => {
  const docs: SearchDocument[] = WORKFLOWS.map((w) => ({
    id: w.name,
    fields: [{ text: w.name, weight: 3 }, { text: w.source, weight: 1 }],
    semantic: { primary: w.source.split("\n")[0]!, secondary: w.source, secondaryIsCode: true },
  }));

  it("waits for a model that becomes ready within the bound instead of answering lexically", async () => {
    const gated = new GatedEmbedder();
    const notes: string[] = [];
    const ranker = new SemanticRanker({ embedder: gated, readyTimeoutMs: 30_000, log: (m) => notes.push(m) });
    setTimeout(() => gated.ready(), 100);
    const hits = await ranker.rank("scan ports", docs, 5);
    expect(hits[0]?.id).toBe("port_scan");
    expect(notes).toEqual([]);
    // Semantic scores differ from the lexical ones.
    expect(hits).not.toEqual(await new LexicalRanker().rank("scan ports", docs, 5));
  });

  it("falls back to lexical ranking with one note when the model is not ready in time", async () => {
    const gated = new GatedEmbedder();
    const notes: string[] = [];
    const ranker = new SemanticRanker({ embedder: gated, readyTimeoutMs: 100, log: (m) => notes.push(m) });
    // The lexical ranking, each result saying that meaning is not part of it yet.
    const lexical = (await new LexicalRanker().rank("scan ports", docs, 5)).map((r) => ({ ...r, indexing: true }));
    expect(await ranker.rank("scan ports", docs, 5)).toEqual(lexical);
    expect(await ranker.rank("scan ports", docs, 5)).toEqual(lexical);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/embedding model \(test-gated\) was not ready within 100 ms; ranked by words only/);
    gated.ready();
    expect(await ranker.rank("scan ports", docs, 5)).not.toEqual(lexical);
  });

  it("falls back to lexical ranking with a note naming the failure when the embedder fails", async () => {
    const gated = new GatedEmbedder();
    gated.fail("connection refused");
    const notes: string[] = [];
    const ranker = new SemanticRanker({ embedder: gated, log: (m) => notes.push(m) });
    expect(await ranker.rank("scan ports", docs, 5)).toEqual(await new LexicalRanker().rank("scan ports", docs, 5));
    expect(notes.join("\n")).toContain("connection refused");
  });

  it("ranks entries still being embedded by their words, and finishes embedding them in the background", async () => {
    const inner = new BagOfWordsEmbedder();
    let release!: () => void;
    const slowDocs = new Promise<void>((r) => (release = r));
    const slow = {
      id: "test-bow",
      dimensions: 64,
      embed: async (texts: string[]) => {
        if (texts.length > 1) await slowDocs; // documents are slow, the one-text query is not
        return inner.embed(texts);
      },
    };
    const notes: string[] = [];
    const ranker = new SemanticRanker({ embedder: slow, indexTimeoutMs: 50, log: (m) => notes.push(m) });
    const first = await ranker.rank("scan ports", docs, 5);
    expect(first[0]?.id).toBe("port_scan");
    expect(notes.join("\n")).toMatch(/3 of 3 entries are still being embedded/);
    release();
    await new Promise((r) => setTimeout(r, 50));
    const later = await ranker.rank("scan ports", docs, 5);
    expect(later[0]?.id).toBe("port_scan");
    expect(later).not.toEqual(first);
  });
});

describe("the first search of a store that was never indexed", () => {
  it("answers by words at once, marked `indexing`, with no index deadline given; later searches rank by meaning", async () => {
    // Documents take as long as the test lets them (a 10,000-workflow library on a slow model); the query does not.
    const inner = new BagOfWordsEmbedder();
    let release!: () => void;
    const docsDone = new Promise<void>((r) => (release = r));
    const slow = {
      id: "test-bow",
      dimensions: 64,
      embed: async (texts: string[]) => {
        if (texts.length > 1) await docsDone;
        return inner.embed(texts);
      },
    };
    const lib = new WorkflowLibrary(storage.workflows, { ranker: SearchSetup.create(storage, { embedder: slow }).workflowsRanker() });
    // Default timeouts: this must return within the test's limit, never wait out a 10 s timeout.
    const first = await lib.search("scan ports");
    expect(first[0]?.name).toBe("port_scan");
    expect(first.every((r) => r.indexing === true)).toBe(true);
    release();
    expect(await lib.index()).toEqual({ indexed: 3, total: 3 });
    const later = await lib.search("scan ports");
    expect(later[0]?.name).toBe("port_scan");
    expect(later.some((r) => r.indexing)).toBe(false);
    // The test's own limit (8 s) stands for "never waits out a 10 s timeout"; the default index wait is 1 s.
  }, 8_000);

  it("index() embeds every workflow with progress, and a search afterwards needs no embedding", async () => {
    const counting = new CountingEmbedder(new BagOfWordsEmbedder());
    const lib = library(counting);
    const progress: Array<[number, number]> = [];
    expect(await lib.index((done, total) => progress.push([done, total]))).toEqual({ indexed: 3, total: 3 });
    expect(progress.at(-1)).toEqual([3, 3]);
    const before = counting.texts.length;
    await lib.search("say hello");
    expect(counting.texts.slice(before)).toEqual(["say hello"]); // the query only
  });
});
