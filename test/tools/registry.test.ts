import { createHash } from "node:crypto";
import { mkdtemp, rm, symlink, writeFile, mkdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError, ToolError, ValidationError } from "../../src/errors.js";
import type { Ranker } from "../../src/search/lexical.js";
import type { CallContext, ToolAdapter, ToolInfo } from "../../src/tools/protocol.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";

/** The error a promise rejects with (fails the test if it resolves). */
async function caught<E extends Error = ToolError>(p: Promise<unknown>): Promise<E> {
  try {
    await p;
  } catch (e) {
    return e as E;
  }
  throw new Error("expected a rejection");
}

const EXAMPLES = fileURLToPath(new URL("../../examples/tools", import.meta.url));

let examples: ToolRegistry;
let work: string;
const temps: string[] = [];

async function tempDir(files: Record<string, string>): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), "tcm-tools-reg-"));
  temps.push(d);
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(d, name), text);
  return d;
}

beforeAll(async () => {
  examples = await ToolRegistry.load(EXAMPLES);
  work = await tempDir({ "a.txt": "alpha\nbeta\nGamma\n", "b.txt": "one two three\n" });
});

afterAll(async () => {
  await examples.close();
});

afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true, maxRetries: 5 })));
});

class EchoAdapter implements ToolAdapter {
  calls: Array<{ callable: string | null; args: Record<string, unknown>; ctx: CallContext }> = [];
  closed = 0;
  constructor(readonly name: string) {}
  async info(): Promise<ToolInfo> {
    return {
      name: this.name,
      type: "mcp",
      description: "Adds numbers in process",
      tags: ["math"],
      callables: [{ name: "add", description: "Add two numbers", returns: "number", params: [{ name: "a", type: "number", required: true }, { name: "b", type: "number", required: true }] }],
      direct: null,
    };
  }
  async call(callable: string | null, args: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
    this.calls.push({ callable, args, ctx });
    return (args["a"] as number) + (args["b"] as number);
  }
  async close(): Promise<void> {
    this.closed++;
  }
}

describe("ToolRegistry.load", () => {
  it("loads every example tool", () => {
    expect(examples.names()).toEqual(["date", "echo", "grep", "ls", "sha256sum", "uname", "wc"]);
  });

  it("gives an empty registry for undefined or a missing directory", async () => {
    expect((await ToolRegistry.load(undefined)).names()).toEqual([]);
    expect((await ToolRegistry.load(path.join(os.tmpdir(), "no-such-dir-tcm-3c1"))).names()).toEqual([]);
  });

  it("reads .yaml and .yml, skips hidden and other files", async () => {
    const d = await tempDir({
      "a.yaml": "name: a\ndescription: A\n",
      "b.yml": "name: b\ndescription: B\n",
      ".hidden.yaml": "name: [broken",
      "notes.txt": "not a tool",
    });
    expect((await ToolRegistry.load(d)).names()).toEqual(["a", "b"]);
  });

  it("refuses duplicate names, naming both files", async () => {
    const d = await tempDir({ "one.yaml": "name: dup\n", "two.yaml": "name: dup\n" });
    await expect(ToolRegistry.load(d)).rejects.toThrow(ValidationError);
    await expect(ToolRegistry.load(d)).rejects.toThrow(/Duplicate tool name 'dup': defined in .*one\.yaml and in .*two\.yaml/);
  });

  it("reports YAML syntax errors with the file", async () => {
    const d = await tempDir({ "bad.yaml": "name: [unclosed\n" });
    await expect(ToolRegistry.load(d)).rejects.toThrow(/Invalid YAML in .*bad\.yaml/);
  });

  it("an unreadable tool file (a dangling symlink, too big) is a ValidationError naming it, not a raw fs error", async () => {
    const d = await tempDir({ "ok.yaml": "name: ok\n" });
    await symlink(path.join(d, "missing-target.yaml"), path.join(d, "dangle.yaml"));
    const err = await caught<Error>(ToolRegistry.load(d));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toMatch(/^Cannot read .*dangle\.yaml \(ENOENT\): it is a symlink to nothing/);
    const big = await tempDir({ "big.yaml": `name: big\ndescription: "${"x".repeat(1_100_000)}"\n` });
    const tooBig = await caught<Error>(ToolRegistry.load(big));
    expect(tooBig).toBeInstanceOf(ValidationError);
    expect(tooBig.message).toMatch(/big\.yaml: \d+ bytes; a tool file may have at most 1048576/);
  });

  it("reports every invalid file at once", async () => {
    const d = await tempDir({ "x.yaml": "name: x\ntimeout: -1\n", "y.yaml": "name: y\nrecipies: {}\n", "z.yaml": "" });
    const err = await caught<Error>(ToolRegistry.load(d));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toMatch(/3 tool files are invalid/);
    expect(err.message).toMatch(/x\.yaml[\s\S]*timeout/);
    expect(err.message).toMatch(/y\.yaml[\s\S]*unknown key 'recipies'/);
    expect(err.message).toMatch(/z\.yaml: the file is empty/);
  });

  it("dispatches mcp and http documents to their adapters' checks, and refuses unknown types", async () => {
    const http = await tempDir({ "h.yaml": "name: h\ntype: http\n" });
    await expect(ToolRegistry.load(http)).rejects.toThrow(/h\.yaml[\s\S]*base_url/);
    const other = await tempDir({ "o.yaml": "name: o\ntype: grpc\n" });
    await expect(ToolRegistry.load(other)).rejects.toThrow(/type: expected one of cli, mcp, http, openapi, toolable \(absent means cli\); got "grpc"/);
  });

  it("lists a tool whose info() fails as unavailable instead of failing discovery of the others", async () => {
    const d = await tempDir({ "m.yaml": "name: broken\ntype: mcp\n", "e.yaml": "name: calc\ntype: mcp\n" });
    const failing = { name: "broken", info: () => Promise.reject(new Error("server 'nope' could not start\nstderr...")), call: () => Promise.reject(new Error("x")), close: async () => {} };
    const r = await ToolRegistry.load(d, { factories: { mcp: (doc) => (doc["name"] === "broken" ? failing : new EchoAdapter(String(doc["name"]))) } });
    const listed = await r.list();
    expect(listed.map((t) => [t.name, t.type, t.callables.length])).toEqual([["broken", "mcp", 0], ["calc", "mcp", 1]]);
    expect(listed[0]!.description).toBe("(unavailable: server 'nope' could not start)");
    expect((await r.search("calc")).map((t) => t.name)).toContain("calc");
    await expect(r.call("broken", "x", {})).rejects.toThrow(/could not start/);
  });

  it("plugs in a factory for another type", async () => {
    const d = await tempDir({ "m.yaml": "name: calc\ntype: mcp\n" });
    const r = await ToolRegistry.load(d, { factories: { mcp: (doc) => new EchoAdapter(String(doc["name"])) } });
    expect(await r.call("calc", "add", { a: 2, b: 3 })).toBe(5);
  });

  describe("deferred (read on first use)", () => {
    it("reads nothing until the first use, then once however many uses race for it", async () => {
      const d = await tempDir({ "a.yaml": "name: a\ntype: mcp\n", "b.yaml": "name: b\ntype: mcp\n" });
      let built = 0;
      const r = ToolRegistry.deferred(d, { factories: { mcp: (doc) => (built++, new EchoAdapter(String(doc["name"]))) } });
      expect(built).toBe(0);
      expect(r.names()).toEqual([]);
      const [listed, sum, described] = await Promise.all([r.list(), r.call("a", "add", { a: 1, b: 2 }), r.describe("b"), r.search("b"), r.info("a")]);
      expect(listed.map((t) => t.name)).toEqual(["a", "b"]);
      expect(sum).toBe(3);
      expect(described).toContain("b");
      expect(built).toBe(2);
      await r.list();
      expect(built).toBe(2);
      await r.close();
    });

    it("a broken file fails every use with the error load() would throw, naming the file", async () => {
      const d = await tempDir({ "bad.yaml": "name: [x\n" });
      await expect(ToolRegistry.load(d)).rejects.toThrow(/bad\.yaml/);
      const r = ToolRegistry.deferred(d);
      for (const use of [() => r.list(), () => r.call("x", "y", {}), () => r.describe("x"), () => r.search("x")]) {
        const e = await caught<ValidationError>(use());
        expect(e).toBeInstanceOf(ValidationError);
        expect(e.message).toMatch(/bad\.yaml/);
      }
      await r.close();
    });

    it("a broken file's error is never edited per call: each use, at once or later, names only its own call", async () => {
      const d = await tempDir({ "bad.yaml": "name: [x\n" });
      const session = new Session({ storage: new FileStorage({ basePath: path.join(d, "s") }), executor: new InProcessExecutor({ toolsPath: d }) });
      await session.start();
      try {
        const code = "const r = await Promise.allSettled([tools.a.x(), tools.b.y(), tools.list(), tools.call('c', null, {})]); r.map((x) => [x.reason.name, x.reason.message, x.reason.stack])";
        for (let round = 0; round < 3; round++) {
          const r = await session.run(code);
          const failures = r.value as Array<[string, string, string]>;
          expect(failures.map(([name]) => name)).toEqual(["ValidationError", "ValidationError", "ValidationError", "ValidationError"]);
          const heads = failures.map(([, message]) => message.split(": Invalid YAML")[0]);
          expect(heads).toEqual(["tools.a.x", "tools.b.y", "tools.list", "tools.c"]);
          for (const [, message, stack] of failures) {
            expect(message.match(/Invalid YAML/g)).toHaveLength(1);
            expect(stack.match(/tools\.[a-z.]+: /g)).toHaveLength(1);
          }
        }
      } finally {
        await session.close();
      }
    });

    it("waiters on one failed deferred load each get their own error object", async () => {
      const d = await tempDir({ "bad.yaml": "name: [x\n" });
      const r = ToolRegistry.deferred(d);
      const [a, b] = await Promise.all([caught<ValidationError>(r.list()), caught<ValidationError>(r.call("x", "y", {}))]);
      expect(a).not.toBe(b);
      expect(a).toBeInstanceOf(ValidationError);
      expect(b.message).toBe(a.message);
      await r.close();
    });

    it("a failed load is read again on the next use: fixing the file is enough (a long-lived server recovers)", async () => {
      const d = await tempDir({ "a.yaml": "name: a\ntype: mcp\n", "bad.yaml": "name: [x\n" });
      let built = 0;
      const r = ToolRegistry.deferred(d, { factories: { mcp: (doc) => (built++, new EchoAdapter(String(doc["name"]))) } });
      await expect(r.list()).rejects.toThrow(/bad\.yaml/);
      await writeFile(path.join(d, "bad.yaml"), "name: b\ntype: mcp\n");
      expect((await r.list()).map((t) => t.name)).toEqual(["a", "b"]);
      expect(await r.call("a", "add", { a: 1, b: 2 })).toBe(3);
      // a.yaml was built by the failed load too; that one was closed and dropped, not kept twice.
      expect(built).toBe(3);
      await r.close();
    });

    it("close() during the load closes what the load built", async () => {
      const d = await tempDir({ "a.yaml": "name: a\ntype: mcp\n" });
      let closed = 0;
      const r = ToolRegistry.deferred(d, { factories: { mcp: (doc) => Object.assign(new EchoAdapter(String(doc["name"])), { close: async () => void closed++ }) } });
      const listing = r.list();
      await r.close();
      await listing.catch(() => undefined);
      expect(closed).toBe(1);
      await expect(r.list()).rejects.toThrow(/closed/);
    });

    it("no folder, or a missing one, is an empty registry", async () => {
      expect(await ToolRegistry.deferred(undefined).list()).toEqual([]);
      expect(await ToolRegistry.deferred(path.join(os.tmpdir(), "tcm-no-such-folder-xyz")).list()).toEqual([]);
    });
  });

  it("refuses a path that is a file", async () => {
    const d = await tempDir({ "f.yaml": "name: f\n" });
    await expect(ToolRegistry.load(path.join(d, "f.yaml"))).rejects.toThrow(/is not a directory/);
  });

  it("does not descend into subdirectories", async () => {
    const d = await tempDir({ "a.yaml": "name: a\n" });
    await mkdir(path.join(d, "sub"));
    await writeFile(path.join(d, "sub", "b.yaml"), "name: b\n");
    expect((await ToolRegistry.load(d)).names()).toEqual(["a"]);
  });
});

describe("example tools, called for real", () => {
  it("echo: recipe and escape hatch", async () => {
    expect(await examples.call("echo", "say", { text: ["hello", "world"] })).toBe("hello world\n");
    expect(await examples.call("echo", "raw", { text: ["a\\tb"] })).toBe("a\tb");
    expect(await examples.call("echo", null, { text: ["x"], no_newline: true })).toBe("x");
  });

  it("ls: names with a default path, and explicit paths", async () => {
    const out = (await examples.call("ls", "names", { paths: [work] })) as string;
    expect(out.split("\n")).toEqual(expect.arrayContaining(["a.txt", "b.txt", ".", ".."]));
    const here = (await examples.call("ls", "names", {})) as string;
    expect(here.split("\n")).toContain("package.json");
    const details = (await examples.call("ls", "details", { paths: [path.join(work, "a.txt")] })) as string;
    expect(details).toMatch(/^-rw.*\/a\.txt\n$/);
  });

  it("date: iso, epoch and format for a fixed time", async () => {
    expect(await examples.call("date", "epoch", { date: "@1700000000" })).toBe("1700000000\n");
    expect(await examples.call("date", "iso", { date: "@0", utc: true })).toBe("1970-01-01T00:00:00+00:00\n");
    expect(await examples.call("date", "format", { format: "+%Y/%m/%d", date: "@86400", utc: true })).toBe("1970/01/02\n");
    expect(await examples.call("date", null, { iso_8601: "date", date: "@0", utc: true })).toBe("1970-01-01\n");
  });

  it("wc: lines and words", async () => {
    expect(await examples.call("wc", "lines", { files: [path.join(work, "a.txt")] })).toBe(`3 ${path.join(work, "a.txt")}\n`);
    expect(await examples.call("wc", "words", { files: [path.join(work, "b.txt")] })).toBe(`3 ${path.join(work, "b.txt")}\n`);
  });

  it("grep: matches, no match is an empty result, a pattern starting with '-' is not an option", async () => {
    const a = path.join(work, "a.txt");
    expect(await examples.call("grep", "search", { pattern: "gamma", paths: [a], ignore_case: true })).toBe("3:Gamma\n");
    expect(await examples.call("grep", "search", { pattern: "zzz", paths: [a] })).toBe("");
    expect(await examples.call("grep", "search", { pattern: "-v", paths: [a] })).toBe("");
    const files = (await examples.call("grep", "files_containing", { pattern: "three", paths: [work], include: ["*.txt"] })) as string;
    expect(files).toBe(`${path.join(work, "b.txt")}\n`);
  });

  it("grep: a missing file is a failure with grep's message", async () => {
    const e = await caught<ToolError>(examples.call("grep", "search", { pattern: "x", paths: [path.join(work, "nope.txt")] }));
    expect(e).toBeInstanceOf(ToolError);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain("No such file or directory");
  });

  it("sha256sum: hash and verify", async () => {
    const b = path.join(work, "b.txt");
    const out = (await examples.call("sha256sum", "hash", { files: [b] })) as string;
    const digest = createHash("sha256").update("one two three\n").digest("hex");
    expect(out).toBe(`${digest}  ${b}\n`);
    const list = path.join(work, "sums.txt");
    await writeFile(list, out);
    expect(await examples.call("sha256sum", "verify", { files: [list] })).toBe(`${b}: OK\n`);
  });

  it("uname: recipes without params", async () => {
    expect(await examples.call("uname", "kernel", {})).toMatch(/^Linux \S+\n$/);
    expect(await examples.call("uname", "machine", undefined)).toMatch(/^\S+\n$/);
  });
});

describe("ToolRegistry.call errors", () => {
  it("unknown tool: NotFoundError with suggestions", async () => {
    const e = await caught<NotFoundError>(examples.call("grpe", "search", {}));
    expect(e).toBeInstanceOf(NotFoundError);
    expect(e.message).toBe("Unknown tool: grpe. Did you mean: grep?");
    expect(e.suggestions).toEqual(["grep"]);
  });

  it("unknown tool without a close match lists what exists", async () => {
    await expect(examples.call("kubectl", null, {})).rejects.toThrow("Unknown tool: kubectl. Available: date, echo, grep, ls, sha256sum, uname, wc");
    await expect(new ToolRegistry().call("x", null, {})).rejects.toThrow("Unknown tool: x. No tools are configured.");
  });

  it("lists at most 20 names", async () => {
    const r = new ToolRegistry();
    for (let i = 0; i < 25; i++) r.register(new EchoAdapter(`tool_${String(i).padStart(2, "0")}`));
    const e = await caught<Error>(r.call("zzzzzzzzzzzzzz", null, {}));
    expect(e.message).toContain("tool_19, … (25 in all; use tools.search)");
    expect(e.message).not.toContain("tool_20");
  });

  it("unknown recipe: NotFoundError with suggestions and the available recipes", async () => {
    await expect(examples.call("date", "isoo", {})).rejects.toThrow("Unknown recipe 'isoo' of tool 'date'. Did you mean: iso? Available: iso, epoch, format");
  });

  it("recipes accept only their declared params; the escape hatch accepts the whole schema", async () => {
    const e = await caught<ToolError>(examples.call("echo", "say", { text: ["x"], no_newline: true }));
    expect(e.code).toBe("INVALID_INPUT");
    expect(e.message).toContain("tools.echo.say: Unknown argument 'no_newline'. Accepted: text.");
    expect(await examples.call("echo", null, { text: ["x"], no_newline: true })).toBe("x");
  });

  it("validates types and required params before running anything", async () => {
    await expect(examples.call("wc", "lines", { files: "a.txt" })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(examples.call("wc", "lines", {})).rejects.toMatchObject({ code: "MISSING_PARAM", message: expect.stringContaining("'files'") });
    await expect(examples.call("date", "iso", { utc: "yes" })).rejects.toThrow(/'utc' expected boolean, got string "yes"/);
    await expect(examples.call("date", null, { iso_8601: "weeks" })).rejects.toThrow(/expected one of "date", "hours"/);
  });

  it("a call takes an adapter's infoNow() when it gives one, else awaits info() (a tool rediscovered on change)", async () => {
    const info: ToolInfo = { name: "quick", type: "toolable", description: "", tags: [], direct: null, callables: [{ name: "go", description: "", params: [{ name: "n", type: "number", required: true }], returns: "number" }] };
    let infoCalls = 0;
    const adapter: ToolAdapter = {
      name: "quick",
      info: async () => (infoCalls++, info),
      infoNow: () => (infoCalls > 0 ? undefined : info),
      call: async (_c, args) => args["n"],
      close: async () => {},
    };
    const registry = new ToolRegistry();
    registry.register(adapter);
    // Validation still applies on the quick path.
    await expect(registry.call("quick", "go", { n: "x" })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(await registry.call("quick", "go", { n: 1 })).toBe(1);
    expect(infoCalls).toBe(0);
    infoCalls = 1; // infoNow now says it does not know: the call asks info()
    expect(await registry.call("quick", "go", { n: 2 })).toBe(2);
    expect(infoCalls).toBe(2);
  });

  it("a preset satisfies a requirement", async () => {
    // date.epoch presets the format positional; nothing is required of the caller.
    const info = await examples.info("date");
    expect(info.callables.find((c) => c.name === "epoch")!.params.every((p) => !p.required)).toBe(true);
  });

  it("a tool without an escape hatch says how to call it", async () => {
    const r = new ToolRegistry();
    r.register(new EchoAdapter("calc"));
    await expect(r.call("calc", null, {})).rejects.toThrow("Tool 'calc' cannot be called directly; call one of its tools: tools.calc.add(...)");
    await expect(r.call("calc", "ad", { a: 1, b: 2 })).rejects.toThrow("Unknown tool 'ad' of tool 'calc'. Did you mean: add?");
  });

  it("passes validated args and the context to the adapter", async () => {
    const r = new ToolRegistry();
    const a = new EchoAdapter("calc");
    r.register(a);
    const ctx = { timeoutMs: 1234 };
    expect(await r.call("calc", "add", { a: 1, b: 2 }, ctx)).toBe(3);
    expect(a.calls).toEqual([{ callable: "add", args: { a: 1, b: 2 }, ctx }]);
  });
});

describe("ToolRegistry.register and close", () => {
  it("refuses duplicate and invalid names", () => {
    const r = new ToolRegistry();
    r.register(new EchoAdapter("calc"));
    expect(() => r.register(new EchoAdapter("calc"))).toThrow(/Duplicate tool name 'calc'/);
    expect(() => r.register(new EchoAdapter("describe"))).toThrow(ValidationError);
    expect(() => r.register(new EchoAdapter("bad-name"))).toThrow(/must be an identifier/);
  });

  it("closes every adapter once, and refuses calls afterwards", async () => {
    const r = new ToolRegistry();
    const a = new EchoAdapter("calc");
    r.register(a);
    await r.close();
    await r.close();
    expect(a.closed).toBe(1);
    await expect(r.call("calc", "add", { a: 1, b: 2 })).rejects.toThrow(/closed/);
  });
});

describe("ToolRegistry discovery", () => {
  it("lists tools sorted, with recipe signatures and the escape hatch", async () => {
    const list = await examples.list();
    expect(list.map((t) => t.name)).toEqual(examples.names());
    const date = list.find((t) => t.name === "date")!;
    expect(date.type).toBe("cli");
    expect(date.tags).toEqual(["time", "date", "clock"]);
    expect(date.callables.map((c) => c.name)).toEqual(["iso", "epoch", "format"]);
    expect(date.callables[0]!.signature).toBe("iso(args?: { utc?: boolean; date?: string }): Promise<string>");
    expect(date.callables[2]!.signature).toBe("format(args: { format: string; date?: string; utc?: boolean }): Promise<string>");
    expect(date.direct!.signature).toBe(
      'date(args?: { format?: string; utc?: boolean; date?: string; iso_8601?: "date" | "hours" | "minutes" | "seconds" | "ns" }): Promise<string>',
    );
    const uname = list.find((t) => t.name === "uname")!;
    expect(uname.callables[0]!.signature).toBe("all(): Promise<string>");
  });

  it("search ranks by name, tags, descriptions and params", async () => {
    expect((await examples.search("grep"))[0]!.name).toBe("grep");
    expect((await examples.search("checksum of a file"))[0]!.name).toBe("sha256sum");
    expect((await examples.search("unix time"))[0]!.name).toBe("date");
    expect((await examples.search("kernel release"))[0]!.name).toBe("uname");
    const hits = await examples.search("files", { limit: 2 });
    expect(hits).toHaveLength(2);
    expect(hits[0]!.score).toBeGreaterThanOrEqual(hits[1]!.score);
    expect(await examples.search("xylophone")).toEqual([]);
  });

  it("search uses the ranker given to the constructor", async () => {
    const seen: string[][] = [];
    const ranker: Ranker = {
      async rank(_q, docs) {
        seen.push(docs.map((d) => d.id));
        return [{ id: "calc", score: 0.42 }];
      },
    };
    const r = new ToolRegistry({ ranker });
    r.register(new EchoAdapter("calc"));
    const hits = await r.search("anything");
    expect(seen).toEqual([["calc"]]);
    expect(hits).toMatchObject([{ name: "calc", score: 0.42, callables: [{ name: "add" }] }]);
  });

  it("search refuses a bad limit", async () => {
    await expect(examples.search("x", { limit: 0 })).rejects.toThrow(ValidationError);
  });

  it("describe of an unknown tool is NotFoundError", async () => {
    await expect(examples.describe("dat")).rejects.toThrow("Unknown tool: dat. Did you mean: date?");
  });
});
