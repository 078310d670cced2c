/**
 * Search quality with the real built-in model (Universal Sentence Encoder Lite, offline): a library
 * of plain workflows (test/fixtures/search/workflows.ts) and questions an agent would ask in its
 * own words. Each case names the workflow that must come first; some also name the closest rival
 * it must beat. Cases marked `noSharedWords` share no word (not even a prefix) with the intended
 * workflow's name and description — the test checks that too — so only meaning can find them.
 *
 * The model is loaded once for the whole file (one worker per process).
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { dot } from "../../src/search/embedder.js";
import { LexicalRanker, lexicalScore } from "../../src/search/lexical.js";
import { FUSION, SemanticRanker } from "../../src/search/semantic.js";
import { USE_LITE_DIMENSIONS, UseLiteEmbedder } from "../../src/search/use-lite.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/index.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { WorkflowLibrary } from "../../src/workflows/library.js";
import { FIXTURE_WORKFLOWS } from "../fixtures/search/workflows.js";
import { MemoryWorkflowStore } from "../workflows/memory-store.js";
import { CountingEmbedder } from "./helpers.js";

interface Case {
  query: string;
  first: string;
  /** A plausible rival that must rank below `first`. */
  over?: string;
  noSharedWords?: boolean;
}

const PARAPHRASES: Case[] = [
  { query: "how many dollars is 100 euros", first: "currency_convert", noSharedWords: true },
  { query: "notify my team in chat", first: "send_slack_message", noSharedWords: true },
  { query: "will it rain this weekend", first: "weather_forecast", noSharedWords: true },
  { query: "what computers on the LAN respond", first: "ping_sweep", over: "port_scan", noSharedWords: true },
  { query: "say something in French", first: "translate_text", noSharedWords: true },
  { query: "discover which TCP ports are listening", first: "port_scan", over: "ping_sweep" },
  { query: "which hosts on the network are alive", first: "ping_sweep", over: "port_scan" },
  { query: "find hidden pages on a web server", first: "dir_bruteforce" },
  { query: "email the weekly numbers to my boss", first: "send_email_report" },
  { query: "MX records for a domain", first: "dns_lookup", over: "whois_domain" },
  { query: "who owns this domain", first: "whois_domain", over: "dns_lookup" },
  { query: "which folders are hogging the drive", first: "disk_usage_report", over: "find_large_files" },
  { query: "clean up old logs", first: "rotate_logs" },
  { query: "generate a changelog", first: "git_changelog" },
  { query: "turn a spreadsheet export into json", first: "csv_to_json" },
  { query: "get the gist of a long document", first: "summarize_pdf" },
  { query: "new accounts per day", first: "user_signup_stats" },
  { query: "detect if files were tampered with", first: "hash_files" },
  { query: "shrink photos to make thumbnails", first: "resize_images" },
  { query: "when does the ssl cert run out", first: "check_tls_expiry" },
  { query: "make a copy of the postgres db", first: "backup_database" },
];

/** Exact identifiers the model knows nothing about: the lexical half of the fusion must carry them. */
const IDENTIFIERS: Case[] = [
  { query: "use ffuf", first: "dir_bruteforce" },
  { query: "run pg_dump", first: "backup_database" },
  { query: "port_scan", first: "port_scan" },
];

const model = new UseLiteEmbedder();
const embedder = new CountingEmbedder(model);
let library: WorkflowLibrary;

beforeAll(async () => {
  await model.ready();
  library = new WorkflowLibrary(new MemoryWorkflowStore(), { ranker: new SemanticRanker({ embedder }) });
  for (const w of FIXTURE_WORKFLOWS) await library.create(w);
  // Quality is judged with every workflow embedded, not on whatever a first search's deadline allowed.
  await library.index();
}, 120_000);

async function names(query: string): Promise<string[]> {
  return (await library.search(query, { limit: 50 })).map((r) => r.name);
}

describe("UseLiteEmbedder", () => {
  it("returns 512-d unit vectors, the same for the same text, and zeros for an empty one", async () => {
    const [a, b, empty] = await model.embed(["list open ports", "list open ports", "  "]);
    expect(a).toHaveLength(USE_LITE_DIMENSIONS);
    expect(dot(a!, a!)).toBeCloseTo(1, 3);
    expect([...b!]).toEqual([...a!]);
    expect([...empty!].every((x) => x === 0)).toBe(true);
    expect(model.id).toMatch(/^use-lite-en@\d+\.\d+\.\d+$/);
  });

  it("reports a model that cannot load as an EmbedderError from embed(), while warmUp() never rejects", async () => {
    const broken = new UseLiteEmbedder({ modelDir: path.join(os.tmpdir(), "ts-code-mode-no-such-model") });
    await expect(broken.warmUp()).resolves.toBeUndefined();
    const err = await broken.embed(["x"]).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.name).toBe("EmbedderError");
    expect(err?.message).toMatch(/The embedding model failed: .*ts-code-mode-no-such-model/);
  });

  it("puts paraphrases closer than unrelated sentences", async () => {
    const [q, para, other] = await model.embed(["discover which TCP ports are listening", "Scan a host for open ports", "Bake a chocolate cake"]);
    expect(dot(q!, para!)).toBeGreaterThan(dot(q!, other!) + 0.2);
  });

  it("answers a query ahead of a large batch queued before it, and keeps every result in order", async () => {
    const bulkTexts = Array.from({ length: 96 }, (_, i) => `workflow ${i} compresses log files and uploads them`);
    const order: string[] = [];
    const bulk = model.embed(bulkTexts).then((v) => (order.push("bulk"), v));
    const query = model.embed(["rotate logs"]).then((v) => (order.push("query"), v));
    const [bulkVectors, [queryVector]] = await Promise.all([bulk, query]);
    expect(order).toEqual(["query", "bulk"]);
    expect(bulkVectors).toHaveLength(96);
    const [again] = await model.embed([bulkTexts[50]!]);
    expect(dot(again!, bulkVectors[50]!)).toBeCloseTo(1, 4);
    expect(queryVector).toHaveLength(USE_LITE_DIMENSIONS);
  });
});

describe("workflows.search quality", () => {
  it.each(PARAPHRASES)("$query → $first", async ({ query, first, over, noSharedWords }) => {
    if (noSharedWords) {
      const w = FIXTURE_WORKFLOWS.find((f) => f.name === first)!;
      const words = lexicalScore(query, { id: w.name, fields: [{ text: `${w.name} ${w.description}`, weight: 1 }] });
      expect(words, "the query must share no word with the name and description").toBe(0);
    }
    const ranked = await names(query);
    expect(ranked[0]).toBe(first);
    if (over) expect(ranked.indexOf(over)).toBeGreaterThan(0);
  });

  it.each(IDENTIFIERS)("identifier: $query → $first", async ({ query, first }) => {
    expect((await names(query))[0]).toBe(first);
  });

  it("scores a query naming a workflow exactly at the top of the scale", async () => {
    const [hit] = await library.search("port_scan");
    expect(hit?.score).toBeGreaterThanOrEqual(FUSION.exact);
  });

  it("finds what lexical search cannot: the no-shared-word questions", async () => {
    const store = new MemoryWorkflowStore();
    const lexical = new WorkflowLibrary(store, { ranker: new LexicalRanker() });
    for (const w of FIXTURE_WORKFLOWS) await lexical.create(w);
    const cases = PARAPHRASES.filter((c) => c.noSharedWords);
    let lexicalFirst = 0;
    for (const c of cases) if ((await lexical.search(c.query))[0]?.name === c.first) lexicalFirst++;
    expect(cases.length).toBeGreaterThanOrEqual(5);
    expect(lexicalFirst).toBeLessThanOrEqual(1);
  });

  it("embeds nothing again for an unchanged library", async () => {
    await library.search("warm the index");
    embedder.reset();
    await library.search("compress yesterday's logs");
    expect(embedder.texts).toEqual(["compress yesterday's logs"]);
  });
});

describe("tools.search quality (examples/tools)", () => {
  let tools: ToolRegistry;

  beforeAll(async () => {
    tools = await ToolRegistry.load(path.resolve("examples/tools"), { ranker: new SemanticRanker({ embedder: model }) });
  });

  afterAll(async () => {
    await tools.close();
  });

  it.each([
    ["how many lines in a file", "wc"],
    ["which OS am I on", "uname"],
    ["what time is it", "date"],
    ["fingerprint a file to check integrity", "sha256sum"],
    ["print a message", "echo"],
    ["grep", "grep"],
  ])("%s → %s", async (query, first) => {
    expect((await tools.search(query))[0]?.name).toBe(first);
  });
});

describe("the default: a session searches with the built-in model", () => {
  let base: string;
  let session: Session;
  const saved = process.env["TS_CODE_MODE_SEARCH"];

  beforeAll(async () => {
    delete process.env["TS_CODE_MODE_SEARCH"]; // the default, whatever the environment running the tests says
    base = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-search-default-"));
    // A generous index deadline: this machine may be busy, and the test is about ranking by meaning.
    session = new Session({ storage: new FileStorage({ basePath: base }), executor: new InProcessExecutor({ search: { readyTimeoutMs: 120_000, indexTimeoutMs: 120_000 } }) });
    await session.start();
    for (const w of FIXTURE_WORKFLOWS.slice(0, 8)) await session.addWorkflow(w);
  });

  afterAll(async () => {
    if (saved !== undefined) process.env["TS_CODE_MODE_SEARCH"] = saved;
    await session.close();
    await rm(base, { recursive: true, force: true, maxRetries: 5 });
  });

  it("ranks by meaning from the guest, without a lexical-fallback note, and caches vectors under <base>/vectors/use-lite-en@…", async () => {
    const stderr = vi.spyOn(process.stderr, "write");
    try {
      const r = await session.run("(await workflows.search('discover which TCP ports are listening')).map((w) => w.name)");
      expect(r.error).toBeNull();
      expect((r.value as string[])[0]).toBe("port_scan");
      expect(stderr.mock.calls.map((c) => String(c[0])).join("")).not.toMatch(/ranked by words only/);
    } finally {
      stderr.mockRestore();
    }
    const spaces = await readdir(path.join(base, "vectors"));
    expect(spaces).toEqual([`${model.id}-512d`]);
    expect(await readdir(path.join(base, "vectors", spaces[0]!, "workflows"))).toHaveLength(16);
  });
});
