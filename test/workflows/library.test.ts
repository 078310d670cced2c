import { beforeEach, describe, expect, test } from "vitest";
import { InvalidNameError, NotFoundError, ValidationError } from "../../src/errors.js";
import type { Ranker, SearchDocument } from "../../src/search/lexical.js";
import { WorkflowLibrary } from "../../src/workflows/library.js";
import { MemoryWorkflowStore } from "./memory-store.js";

const TRIPLE = `/** Triple a number. */
export async function run({ n }: { n: number }) {
  return n * 3;
}
`;

const SCAN = `/** Scan a host for open ports and save them as an artifact. */
export async function run({ host, ports = "1-1024" }: { host: string; ports?: string }) {
  return [host, ports];
}
`;

const GREET = `/** Say hello to someone by name. */
export async function run({ who }: { /** person to greet */ who: string }) {
  return "hello " + who;
}
`;

let store: MemoryWorkflowStore;
let lib: WorkflowLibrary;

beforeEach(() => {
  store = new MemoryWorkflowStore();
  lib = new WorkflowLibrary(store);
});

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected the promise to reject");
}

describe("create", () => {
  test("stores source, derived params and the JSDoc description", async () => {
    const d = await lib.create({ name: "scan", source: SCAN });
    expect(d).toMatchObject({
      name: "scan",
      description: "Scan a host for open ports and save them as an artifact.",
      params: [
        { name: "host", type: "string", required: true },
        { name: "ports", type: "string", required: false, default: "1-1024" },
      ],
      source: SCAN,
    });
    expect(Date.parse(d.createdAt)).not.toBeNaN();
    expect(d.updatedAt).toBe(d.createdAt);
    const stored = store.saved.at(-1)!;
    expect(stored.params).toEqual(d.params);
    expect(stored.description).toBe(d.description);
    expect(stored.descriptionExplicit).toBe(false);
  });

  test("a given description wins over the JSDoc and is kept across reloads", async () => {
    await lib.create({ name: "triple", source: TRIPLE, description: "Multiply by three" });
    expect(store.saved.at(-1)?.descriptionExplicit).toBe(true);
    const reloaded = new WorkflowLibrary(store);
    expect((await reloaded.get("triple"))?.description).toBe("Multiply by three");
    expect((await reloaded.list())[0]?.description).toBe("Multiply by three");
  });

  test("a blank description counts as none", async () => {
    const d = await lib.create({ name: "triple", source: TRIPLE, description: "   " });
    expect(d.description).toBe("Triple a number.");
  });

  test("replacing keeps createdAt and moves updatedAt", async () => {
    const first = await lib.create({ name: "triple", source: TRIPLE });
    await new Promise((r) => setTimeout(r, 5));
    const second = await lib.create({ name: "triple", source: TRIPLE.replace("n * 3", "3 * n") });
    expect(second.createdAt).toBe(first.createdAt);
    expect(second.updatedAt > first.updatedAt).toBe(true);
    expect(second.source).toContain("3 * n");
  });

  test("replacing without a description re-derives it from the new source", async () => {
    await lib.create({ name: "w", source: TRIPLE, description: "Old" });
    const d = await lib.create({ name: "w", source: GREET });
    expect(d.description).toBe("Say hello to someone by name.");
  });

  test("author is stored when given", async () => {
    const d = await lib.create({ name: "triple", source: TRIPLE, author: "agent-7" });
    expect(d.author).toBe("agent-7");
    expect((await lib.get("triple"))?.author).toBe("agent-7");
  });

  test("a syntax error is a ValidationError with line:column", async () => {
    const err = await rejection(lib.create({ name: "bad", source: `export async function run() {\n  return (1 + ;\n}\n` }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toMatch(/^Syntax error in workflow "bad" at line 2:\d+: /);
    expect(await store.get("bad")).toBeNull();
  });

  test("a module without an exported run explains the shape with an example", async () => {
    const err = await rejection(lib.create({ name: "norun", source: `export async function main() { return 1; }` }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain("must export a function named run");
    expect(err.message).toContain("export async function run({ n }: { n: number }) {\n  return n * 3;\n}");
    expect(await store.get("norun")).toBeNull();
  });

  test.each(["../x", "a-b", "list", "then", ""])("rejects the name %j with InvalidNameError", async (name) => {
    const err = await rejection(lib.create({ name, source: TRIPLE }));
    expect(err).toBeInstanceOf(InvalidNameError);
    expect(store.saved).toHaveLength(0);
  });

  const badInputs: Array<[string, unknown, RegExp]> = [
    ["empty source", { name: "x", source: "" }, /source: is empty/],
    ["source not a string", { name: "x", source: 42 }, /source: expected a string/],
    ["source over 1 MB", { name: "x", source: `export async function run() {}\n${"/".repeat(1024 * 1024)}` }, /source: is larger than/],
    ["description too long", { name: "x", source: TRIPLE, description: "d".repeat(4001) }, /description: is longer than 4000/],
    ["unknown key", { name: "x", source: TRIPLE, desc: "typo" }, /Unrecognized key.*desc.*accepted: name, source, description, author/],
    ["not an object", null, /Invalid workflow/],
  ];
  test.each(badInputs)("rejects %s with ValidationError", async (_title, input, message) => {
    const err = await rejection(lib.create(input as never));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toMatch(message);
  });
});

describe("get, require, list, delete", () => {
  test("get returns details or null", async () => {
    await lib.create({ name: "triple", source: TRIPLE });
    expect(await lib.get("triple")).toMatchObject({ name: "triple", source: TRIPLE, params: [{ name: "n", type: "number", required: true }] });
    expect(await lib.get("nope")).toBeNull();
    expect(await lib.get("list")).toBeNull();
  });

  test("get refuses a malformed name before reaching the store", async () => {
    const err = await rejection(lib.get("../etc/passwd"));
    expect(err).toBeInstanceOf(InvalidNameError);
  });

  test("require suggests close names", async () => {
    await lib.create({ name: "triple", source: TRIPLE });
    await lib.create({ name: "greet", source: GREET });
    const err = await rejection(lib.require("tripel"));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.message).toBe("Unknown workflow: tripel. Did you mean: triple?");
    expect((err as NotFoundError).suggestions).toEqual(["triple"]);
    expect((await lib.require("triple")).name).toBe("triple");
  });

  test("require on an empty library says how to create one", async () => {
    const err = await rejection(lib.require("x"));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.message).toMatch(/No workflows exist yet/);
  });

  test("list is sorted by name and has summaries only", async () => {
    await lib.create({ name: "triple", source: TRIPLE });
    await lib.create({ name: "greet", source: GREET });
    await lib.create({ name: "scan", source: SCAN });
    const list = await lib.list();
    expect(list.map((w) => w.name)).toEqual(["greet", "scan", "triple"]);
    expect(Object.keys(list[0]!).sort()).toEqual(["description", "name", "params"]);
    expect(list[0]?.params).toEqual([{ name: "who", type: "string", required: true, description: "person to greet" }]);
  });

  test("delete reports whether something was deleted", async () => {
    await lib.create({ name: "triple", source: TRIPLE });
    expect(await lib.delete("triple")).toBe(true);
    expect(await lib.delete("triple")).toBe(false);
    expect(await lib.get("triple")).toBeNull();
    expect(await lib.delete("list")).toBe(false);
    await expect(lib.delete("../x")).rejects.toBeInstanceOf(InvalidNameError);
  });
});

describe("hand-written records", () => {
  test("a record without params or description gets both derived from its source", async () => {
    await store.save({ name: "scan", source: SCAN, description: "", createdAt: "2024-01-01T00:00:00.000Z", updatedAt: "2024-01-01T00:00:00.000Z" });
    const [summary] = await lib.list();
    expect(summary).toEqual({
      name: "scan",
      description: "Scan a host for open ports and save them as an artifact.",
      params: [
        { name: "host", type: "string", required: true },
        { name: "ports", type: "string", required: false, default: "1-1024" },
      ],
    });
    const details = await lib.get("scan");
    expect(details?.params).toEqual(summary?.params);
    expect(details?.createdAt).toBe("2024-01-01T00:00:00.000Z");
  });

  test("stored params and description are used as they are", async () => {
    const params = [{ name: "x", type: "string", required: true }];
    await store.save({ name: "scan", source: SCAN, description: "Stored.", params, createdAt: "t", updatedAt: "t" });
    expect(await lib.list()).toEqual([{ name: "scan", description: "Stored.", params }]);
  });

  test("an edited source is re-derived (the cache is keyed by source)", async () => {
    await store.save({ name: "w", source: TRIPLE, description: "", createdAt: "t", updatedAt: "t" });
    expect((await lib.list())[0]?.params.map((p) => p.name)).toEqual(["n"]);
    await store.save({ name: "w", source: GREET, description: "", createdAt: "t", updatedAt: "t" });
    expect((await lib.list())[0]?.params.map((p) => p.name)).toEqual(["who"]);
  });
});

describe("search", () => {
  beforeEach(async () => {
    await lib.create({ name: "triple", source: TRIPLE });
    await lib.create({ name: "scan", source: SCAN });
    await lib.create({ name: "greet", source: GREET });
  });

  test("a word from one description ranks that workflow first", async () => {
    const results = await lib.search("open ports");
    expect(results[0]?.name).toBe("scan");
    expect(results[0]?.score).toBeGreaterThan(0);
    expect(results[0]?.params.map((p) => p.name)).toEqual(["host", "ports"]);
    const hello = await lib.search("hello");
    expect(hello[0]?.name).toBe("greet");
  });

  test("a name match beats a description match", async () => {
    await lib.create({ name: "multiply", source: TRIPLE.replace("Triple a number.", "Triple a value.") });
    const results = await lib.search("triple");
    expect(results[0]?.name).toBe("triple");
    expect(results.map((r) => r.name)).toContain("multiply");
  });

  test("param descriptions are searchable", async () => {
    expect((await lib.search("person"))[0]?.name).toBe("greet");
  });

  test("results are best first and limited", async () => {
    const all = await lib.search("number host hello");
    for (let i = 1; i < all.length; i++) expect(all[i - 1]!.score).toBeGreaterThanOrEqual(all[i]!.score);
    expect(await lib.search("number host hello", { limit: 1 })).toHaveLength(1);
  });

  test("nothing matches an unrelated query", async () => {
    expect(await lib.search("kubernetes")).toEqual([]);
  });

  test("a bad limit is a ValidationError", async () => {
    await expect(lib.search("x", { limit: 0 })).rejects.toBeInstanceOf(ValidationError);
    await expect(lib.search("x", { limit: 1.5 })).rejects.toThrow(/limit: expected an integer/);
  });

  test("the ranker is pluggable and sees weighted fields", async () => {
    const seen: SearchDocument[][] = [];
    const ranker: Ranker = {
      async rank(_q, docs, limit) {
        seen.push([...docs]);
        return [{ id: "greet", score: 0.9 }, { id: "ghost", score: 0.5 }].slice(0, limit);
      },
    };
    const custom = new WorkflowLibrary(store, { ranker });
    const results = await custom.search("anything", { limit: 5 });
    expect(results).toEqual([{ name: "greet", description: "Say hello to someone by name.", params: expect.any(Array), score: 0.9 }]);
    const doc = seen[0]!.find((d) => d.id === "scan")!;
    expect(doc.fields.map((f) => f.weight)).toEqual([3, 2, 1.5, 0.5]);
    expect(doc.fields[0]?.text).toBe("scan");
  });
});
