import { mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { FileStorage } from "../../src/storage/file/storage.js";
import { storageFromDescriptor } from "../../src/storage/descriptor.js";
import type { WorkflowRecord } from "../../src/storage/protocol.js";
import { INVALID_ARTIFACT_NAMES, storageConformance } from "../conformance/storage.js";

async function tempDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), "tcm-file-storage-"));
}

storageConformance("FileStorage", async (options = {}) => {
  const dir = await tempDir();
  return { storage: new FileStorage({ basePath: dir, ...options }), cleanup: () => rm(dir, { recursive: true, force: true, maxRetries: 5 }) };
});

/** Every path under `dir`, relative, sorted: to prove an operation created nothing. */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

const OLD = new Date("2020-01-01T00:00:00.000Z");

/** The payload of an artifact file: everything after its header line. */
async function payloadOf(file: string): Promise<string> {
  const text = await readFile(file, "utf8");
  return text.slice(text.indexOf("\n") + 1);
}

/** The pid of a process that has exited (so no live writer has it). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((r) => child.once("exit", r));
  return child.pid!;
}

describe("FileStorage (file-specific)", () => {
  let base: string;
  let storage: FileStorage;

  beforeEach(async () => {
    base = await tempDir();
    storage = new FileStorage({ basePath: base });
  });

  afterEach(async () => {
    await storage.close();
    await rm(base, { recursive: true, force: true, maxRetries: 5 });
  });

  describe("layout and options", () => {
    it("creates workflows/ and artifacts/ and describes itself with an absolute path", async () => {
      expect((await stat(path.join(base, "workflows"))).isDirectory()).toBe(true);
      expect((await stat(path.join(base, "artifacts"))).isDirectory()).toBe(true);
      expect(storage.basePath).toBe(base);
      expect(storage.toDescriptor()).toEqual({ type: "file", basePath: base });
    });

    it("resolves a relative basePath against the cwd", async () => {
      const rel = path.relative(process.cwd(), path.join(base, "nested"));
      const s = new FileStorage({ basePath: rel });
      expect(path.isAbsolute(s.basePath)).toBe(true);
      expect(s.basePath).toBe(path.join(base, "nested"));
      expect((await stat(path.join(base, "nested", "artifacts"))).isDirectory()).toBe(true);
    });

    it("puts a workspace under workspaces/<id>/", async () => {
      const ws = new FileStorage({ basePath: base, workspaceId: "team-a" });
      expect(ws.root).toBe(path.join(base, "workspaces", "team-a"));
      expect(ws.toDescriptor()).toEqual({ type: "file", basePath: base, workspaceId: "team-a" });
      await ws.artifacts.save("x.txt", "hi");
      expect(await payloadOf(path.join(base, "workspaces", "team-a", "artifacts", "x.txt"))).toBe("hi");
    });

    it("rejects bad options and workspace ids before creating anything", async () => {
      const empty = await tempDir();
      try {
        expect(() => new FileStorage({} as never)).toThrow(expect.objectContaining({ name: "ValidationError" }));
        expect(() => new FileStorage({ basePath: empty, extra: 1 } as never)).toThrow(/extra|unrecognized/i);
        expect(() => new FileStorage({ basePath: empty, workspaceId: "../up" })).toThrow(expect.objectContaining({ name: "InvalidNameError" }));
        expect(await tree(empty)).toEqual([]);
      } finally {
        await rm(empty, { recursive: true, force: true, maxRetries: 5 });
      }
    });

    it("storageFromDescriptor rejects malformed descriptors", async () => {
      await expect(storageFromDescriptor({ type: "redis", url: "http://localhost:6379", prefix: "p" })).rejects.toMatchObject({ name: "ValidationError" });
      await expect(storageFromDescriptor({ type: "redis", url: "redis://localhost:6379", prefix: "" })).rejects.toMatchObject({ name: "ValidationError" });
      await expect(storageFromDescriptor({ type: "ftp" })).rejects.toMatchObject({ name: "ValidationError" });
      await expect(storageFromDescriptor(null)).rejects.toMatchObject({ name: "ValidationError" });
    });
  });

  describe("workflows on disk", () => {
    const record = (over: Partial<WorkflowRecord> = {}): WorkflowRecord => ({
      name: "triple",
      source: "/** Triple. */\nexport async function run({ n }: { n: number }) { return n * 3; }\n",
      description: "Triple.",
      params: [{ name: "n", type: "number", required: true }],
      createdAt: "2024-01-01T00:00:00.000Z",
      updatedAt: "2024-01-01T00:00:00.000Z",
      ...over,
    });

    it("writes one plain <name>.ts: a header comment line, then the source verbatim", async () => {
      const source = "// exact\r\nexport async function run() {}\n\n  ";
      await storage.workflows.save(record({ source, provenance: { trust: "untrusted", executor: "sandbox", savedAt: "2024-01-01T00:00:00.000Z" } }));
      const text = await readFile(path.join(base, "workflows", "triple.ts"), "utf8");
      const [first, ...rest] = text.split("\n");
      expect(first).toMatch(/^\/\/ ts-code-mode workflow \{/);
      expect(rest.join("\n")).toBe(source);
      expect(JSON.parse(first!.slice("// ts-code-mode workflow ".length))).toMatchObject({
        description: "Triple.",
        params: [{ name: "n" }],
        provenance: { trust: "untrusted", executor: "sandbox" },
      });
      // Nothing else but the sticky copy of an untrusted provenance; no temp files.
      expect(await tree(path.join(base, "workflows"))).toEqual([".provenance", path.join(".provenance", "triple.json"), ".tmp", "triple.ts"]);
    });

    it("reports workflow files it cannot offer instead of hiding them", async () => {
      await storage.workflows.save(record());
      const dir = path.join(base, "workflows");
      await writeFile(path.join(dir, "scan-host.ts"), "export async function run() {}\n");
      await writeFile(path.join(dir, "1st.js"), "export async function run() {}\n");
      await writeFile(path.join(dir, "triple.js"), "export async function run() {}\n");
      await writeFile(path.join(dir, "broken.ts"), "// ts-code-mode workflow {not json\nexport async function run() {}\n");
      await writeFile(path.join(dir, "notes.md"), "not a workflow file at all");
      expect((await storage.workflows.list()).map((r) => r.name)).toEqual(["broken", "triple"]);
      const problems = await storage.workflows.problems();
      expect(problems.map((p) => p.file)).toEqual(["1st.js", "broken.ts", "scan-host.ts", "triple.js"]);
      expect(problems.find((p) => p.file === "scan-host.ts")?.problem).toMatch(/not a valid workflow name.*scan_host\.ts/);
      expect(problems.find((p) => p.file === "triple.js")?.problem).toMatch(/triple\.ts .*precedence/);
      expect(problems.find((p) => p.file === "broken.ts")?.problem).toMatch(/cannot be read/);
      // The unreadable header stays part of the source (it is a comment): nothing is lost.
      expect((await storage.workflows.get("broken"))?.source).toContain("{not json");
    });

    it("one unreadable workflow file (a symlink loop) is left out of list() and named by problems(), not fatal (issue 41)", async () => {
      await storage.workflows.save(record());
      const dir = path.join(base, "workflows");
      // As root EACCES cannot be produced; ELOOP takes the same path (an fs error reading one file).
      await symlink("loop.ts", path.join(dir, "loop.ts"));
      expect((await storage.workflows.list()).map((r) => r.name)).toEqual(["triple"]);
      const problems = await storage.workflows.problems();
      expect(problems).toEqual([{ file: "loop.ts", problem: expect.stringMatching(/^cannot be read \(ELOOP\): .*left out of the listing/) }]);
      // The file itself, asked for by name, is still an error that names it.
      await expect(storage.workflows.get("loop")).rejects.toMatchObject({ name: "StorageError", message: expect.stringContaining("ELOOP") });
    });

    it("a hand edit keeps author and provenance; rewriting the file keeps untrusted provenance until a trusted save", async () => {
      const provenance = { trust: "untrusted" as const, executor: "sandbox", savedAt: "2024-01-01T00:00:00.000Z" };
      await storage.workflows.save(record({ author: "agent", provenance }));
      const file = path.join(base, "workflows", "triple.ts");
      const [header] = (await readFile(file, "utf8")).split("\n");
      await writeFile(file, `${header}\nexport async function run() { return "edited"; }\n`);
      expect(await storage.workflows.get("triple")).toMatchObject({ author: "agent", provenance, source: 'export async function run() { return "edited"; }\n' });
      // Overwritten without the header: hand-written, but sandbox-saved code does not become trusted.
      await writeFile(file, `export async function run() { return "rewritten"; }\n`);
      const rewritten = await storage.workflows.get("triple");
      expect(rewritten?.provenance).toEqual(provenance);
      expect(rewritten?.author).toBeUndefined();
      expect((await storage.workflows.list())[0]?.provenance).toEqual(provenance);
      // A trusted save (what approving does) clears it; so does a delete.
      const trusted = { trust: "trusted" as const, executor: "in-process", savedAt: "2024-01-02T00:00:00.000Z" };
      await storage.workflows.save(record({ provenance: trusted }));
      await writeFile(file, `export async function run() { return "mine"; }\n`);
      expect((await storage.workflows.get("triple"))?.provenance).toBeUndefined();
      await storage.workflows.save(record({ provenance }));
      expect(await storage.workflows.delete("triple")).toBe(true);
      await writeFile(file, `export async function run() { return "new by hand"; }\n`);
      expect((await storage.workflows.get("triple"))?.provenance).toBeUndefined();
    });

    it("reads a store written by the previous version (source + .meta sidecar) and rewrites it on save", async () => {
      const dir = path.join(base, "workflows");
      const source = "export async function run() { return 1; }\n";
      await writeFile(path.join(dir, "old.ts"), source);
      await mkdir(path.join(dir, ".meta"), { recursive: true });
      const sidecar = {
        version: 1,
        sourceHash: createHash("sha256").update(source).digest("hex"),
        description: "Old one",
        descriptionExplicit: true,
        params: [],
        createdAt: "2023-01-01T00:00:00.000Z",
        updatedAt: "2023-01-02T00:00:00.000Z",
        author: "me",
      };
      await writeFile(path.join(dir, ".meta", "old.json"), JSON.stringify(sidecar));
      const got = await storage.workflows.get("old");
      expect(got).toEqual({ name: "old", source, description: "Old one", descriptionExplicit: true, params: [], createdAt: sidecar.createdAt, updatedAt: sidecar.updatedAt, author: "me" });
      await storage.workflows.save(got!);
      expect(await storage.workflows.get("old")).toEqual(got);
      expect(await readdir(path.join(dir, ".meta"))).toEqual([]);
    });

    it("lists hand-written .ts and .js files that have no sidecar", async () => {
      await writeFile(path.join(base, "workflows", "by_hand.ts"), "/** Made by hand. */\nexport async function run() {}\n");
      await writeFile(path.join(base, "workflows", "legacy.js"), "export async function run() { return 1; }\n");
      await writeFile(path.join(base, "workflows", "not-an-identifier.ts"), "x");
      await writeFile(path.join(base, "workflows", "types.d.ts"), "x");
      await writeFile(path.join(base, "workflows", "README.md"), "x");
      await mkdir(path.join(base, "workflows", "sub"));
      const list = await storage.workflows.list();
      expect(list.map((r) => r.name)).toEqual(["by_hand", "legacy"]);
      const byHand = await storage.workflows.get("by_hand");
      expect(byHand).toMatchObject({ name: "by_hand", description: "", source: expect.stringContaining("Made by hand") });
      expect(byHand?.params).toBeUndefined();
      expect(Date.parse(byHand!.createdAt)).not.toBeNaN();
      expect(Date.parse(byHand!.updatedAt)).not.toBeNaN();
      expect(await storage.workflows.delete("legacy")).toBe(true);
      expect(await readdir(path.join(base, "workflows"))).not.toContain("legacy.js");
    });

    it("prefers <name>.ts over <name>.js, and saving removes the .js twin", async () => {
      await writeFile(path.join(base, "workflows", "twin.js"), "js");
      await writeFile(path.join(base, "workflows", "twin.ts"), "ts");
      expect((await storage.workflows.get("twin"))?.source).toBe("ts");
      expect(await storage.workflows.list()).toHaveLength(1);
      await storage.workflows.save(record({ name: "twin", source: "new" }));
      expect(await readdir(path.join(base, "workflows"))).not.toContain("twin.js");
    });

    it("after a hand edit drops params and a derived description but keeps an explicit one", async () => {
      await storage.workflows.save(record({ name: "derived", descriptionExplicit: false }));
      await storage.workflows.save(record({ name: "explicit", description: "Given by the author", descriptionExplicit: true }));
      await storage.workflows.save(record({ name: "unflagged", description: "No flag given" }));
      for (const n of ["derived", "explicit", "unflagged"]) {
        expect((await storage.workflows.get(n))?.params).toEqual([{ name: "n", type: "number", required: true }]);
        const file = path.join(base, "workflows", `${n}.ts`);
        const [header] = (await readFile(file, "utf8")).split("\n");
        await writeFile(file, `${header}\n/** Edited. */\nexport async function run({ m }: { m: string }) { return m; }\n`);
      }
      const derived = await storage.workflows.get("derived");
      expect(derived).toMatchObject({ description: "", createdAt: "2024-01-01T00:00:00.000Z" });
      expect(derived?.params).toBeUndefined();
      expect(derived?.source).toContain("Edited");
      const explicit = await storage.workflows.get("explicit");
      expect(explicit).toMatchObject({ description: "Given by the author", descriptionExplicit: true });
      expect(explicit?.params).toBeUndefined();
      expect(Date.parse(explicit!.updatedAt)).toBeGreaterThan(Date.parse("2024-01-01T00:00:00.000Z"));
      expect(await storage.workflows.get("unflagged")).toMatchObject({ description: "No flag given" });
      // Listing applies the same rule.
      const listed = await storage.workflows.list();
      expect(listed.every((r) => r.params === undefined)).toBe(true);
    });

    it("survives a corrupt header by treating the file as hand-written", async () => {
      await storage.workflows.save(record());
      const file = path.join(base, "workflows", "triple.ts");
      const text = await readFile(file, "utf8");
      await writeFile(file, text.replace('"sourceHash"', '"sourceHash'));
      const r = await storage.workflows.get("triple");
      expect(r).toMatchObject({ name: "triple", description: "" });
      expect(r?.params).toBeUndefined();
    });

    it("wraps unexpected fs errors in StorageError naming the path", async () => {
      await writeFile(path.join(base, "workflows", ".tmp"), "a file where the temp folder should be");
      const err = await storage.workflows.save(record()).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: "StorageError" });
      expect((err as Error).message).toContain(path.join(base, "workflows"));
    });
  });

  describe("artifacts on disk", () => {
    it("stores each artifact as one file: a header line, then the payload as-is", async () => {
      await storage.artifacts.save("scans/a.json", { hosts: 3 }, { description: "scan" });
      await storage.artifacts.save("notes.txt", "héllo");
      await storage.artifacts.save("raw.bin", Uint8Array.from([0, 1, 254, 255]));
      const dir = path.join(base, "artifacts");
      expect(JSON.parse(await payloadOf(path.join(dir, "scans", "a.json")))).toEqual({ hosts: 3 });
      expect(await payloadOf(path.join(dir, "notes.txt"))).toBe("héllo");
      const raw = await readFile(path.join(dir, "raw.bin"));
      expect([...raw.subarray(raw.indexOf(10) + 1)]).toEqual([0, 1, 254, 255]);
      const header = (await readFile(path.join(dir, "scans", "a.json"), "utf8")).split("\n")[0]!;
      expect(header).toMatch(/^#ts-code-mode artifact v2 \{/);
      expect(JSON.parse(header.slice(header.indexOf("{")))).toMatchObject({ kind: "json", description: "scan" });
      expect(await tree(dir)).toEqual([".tmp", "notes.txt", "raw.bin", "scans", path.join("scans", "a.json")]);
    });

    it("one unreadable artifact (a symlink loop, a link to a FIFO) is left out of list() and named by problems(), not fatal (issue 41)", async () => {
      await storage.artifacts.save("ok.txt", "fine");
      const dir = path.join(base, "artifacts");
      await symlink("loop", path.join(dir, "loop"));
      // Opening a FIFO for reading would wait for a writer forever: the listing must not hang on it.
      execFileSync("mkfifo", [path.join(base, "pipe")]);
      await symlink(path.join(base, "pipe"), path.join(dir, "pipe.txt"));
      expect((await storage.artifacts.list()).map((i) => i.name)).toEqual(["ok.txt"]);
      expect(await storage.artifacts.problems()).toEqual([{ name: "loop", problem: expect.stringMatching(/^cannot be read \(ELOOP\): .*left out of the listing/) }]);
    }, 30_000);

    it("delete removes empty parent folders in data and sidecar trees, keeping non-empty ones", async () => {
      await storage.artifacts.save("a/b/c/one.txt", "1");
      await storage.artifacts.save("a/two.txt", "2");
      expect(await storage.artifacts.delete("a/b/c/one.txt")).toBe(true);
      const dir = path.join(base, "artifacts");
      expect(await tree(dir)).toEqual([".tmp", "a", path.join("a", "two.txt")]);
      expect(await storage.artifacts.delete("a/two.txt")).toBe(true);
      expect(await tree(dir)).toEqual([".tmp"]);
    });

    it.each(INVALID_ARTIFACT_NAMES)("invalid name %j (%s) touches nothing on disk", async (bad) => {
      const before = await tree(base);
      for (const op of [
        () => storage.artifacts.save(bad, "x"),
        () => storage.artifacts.delete(bad),
        () => storage.artifacts.load(bad),
      ]) {
        await expect(op()).rejects.toMatchObject({ name: "InvalidNameError" });
      }
      expect(await tree(base)).toEqual(before);
    });

    it("lists hand-dropped files, inferring the kind from the bytes", async () => {
      const dir = path.join(base, "artifacts");
      await mkdir(path.join(dir, "drop"), { recursive: true });
      await writeFile(path.join(dir, "drop", "readme.md"), "# hi");
      await writeFile(path.join(dir, "drop", "data.json"), '{"a":[1,2]}');
      await writeFile(path.join(dir, "drop", "broken.json"), "{nope");
      await writeFile(path.join(dir, "drop", "img.bin"), Buffer.from([0xff, 0xd8, 0x00, 0x10]));
      for (const f of ["readme.md", "data.json", "broken.json", "img.bin"]) await utimes(path.join(dir, "drop", f), OLD, OLD);
      const list = await storage.artifacts.list();
      expect(list.map((i) => [i.name, i.kind, i.size])).toEqual([
        ["drop/broken.json", "text", 5],
        ["drop/data.json", "json", 11],
        ["drop/img.bin", "bytes", 4],
        ["drop/readme.md", "text", 4],
      ]);
      expect(list[0]).toMatchObject({ description: "", metadata: {}, updatedAt: OLD.toISOString() });
      expect(await storage.artifacts.load("drop/data.json")).toEqual({ a: [1, 2] });
      expect(await storage.artifacts.load("drop/readme.md")).toBe("# hi");
      // Saving over a hand-dropped file adopts it: createdAt is the file's, not now.
      const saved = await storage.artifacts.save("drop/readme.md", "# new", { description: "adopted" });
      expect(Date.parse(saved.createdAt)).toBeLessThan(Date.parse(saved.updatedAt));
    });

    it("a payload edited by hand below the header keeps description and metadata; without the header it is hand-dropped", async () => {
      await storage.artifacts.save("cfg.json", { v: 1 }, { description: "config", metadata: { k: "v" } });
      const file = path.join(base, "artifacts", "cfg.json");
      const [header] = (await readFile(file, "utf8")).split("\n");
      await writeFile(file, `${header}\n{"v":2,"more":true}`);
      expect(await storage.artifacts.load("cfg.json")).toEqual({ v: 2, more: true });
      expect(await storage.artifacts.get("cfg.json")).toMatchObject({ kind: "json", size: 19, description: "config", metadata: { k: "v" } });
      await writeFile(file, `${header}\nnot json any more`);
      expect(await storage.artifacts.load("cfg.json")).toBe("not json any more");
      expect(await storage.artifacts.get("cfg.json")).toMatchObject({ kind: "text", description: "config" });
      await writeFile(file, '{"plain":true}');
      expect(await storage.artifacts.load("cfg.json")).toEqual({ plain: true });
      expect(await storage.artifacts.get("cfg.json")).toMatchObject({ kind: "json", description: "", metadata: {} });
    });

    it("reads artifacts written by the previous version (payload + .meta sidecar)", async () => {
      const dir = path.join(base, "artifacts");
      const payload = Buffer.from('{"a":1}');
      await writeFile(path.join(dir, "old.json"), payload);
      await mkdir(path.join(dir, ".meta"), { recursive: true });
      const sidecar = {
        version: 1,
        kind: "text",
        size: payload.byteLength,
        sha256: createHash("sha256").update(payload).digest("hex"),
        description: "kept",
        metadata: { m: 1 },
        createdAt: "2023-01-01T00:00:00.000Z",
        updatedAt: "2023-01-02T00:00:00.000Z",
      };
      await writeFile(path.join(dir, ".meta", "old.json"), JSON.stringify(sidecar));
      expect(await storage.artifacts.get("old.json")).toMatchObject({ kind: "text", description: "kept", metadata: { m: 1 }, createdAt: sidecar.createdAt });
      expect(await storage.artifacts.load("old.json")).toBe('{"a":1}');
      const saved = await storage.artifacts.save("old.json", "new");
      expect(saved.createdAt).toBe(sidecar.createdAt);
      expect(await tree(dir)).toEqual([".tmp", "old.json"]);
    });

    it("refuses to make an artifact name also a folder, with a clear message", async () => {
      await storage.artifacts.save("a", "file");
      await expect(storage.artifacts.save("a/b", "x")).rejects.toThrow(/"a" is an artifact, not a folder/);
      await storage.artifacts.save("d/x", "inside");
      await expect(storage.artifacts.save("d", "x")).rejects.toThrow(/folder of artifacts/);
      expect((await storage.artifacts.list()).map((i) => i.name)).toEqual(["a", "d/x"]);
      expect(await storage.artifacts.load("a")).toBe("file");
    });

    it("ignores temp files of writers in progress and sweeps those of dead writers on open", async () => {
      await storage.artifacts.save("scans/keep.txt", "kept");
      await storage.workflows.save({ name: "wf", source: "x", description: "", createdAt: "t", updatedAt: "t" });
      const dead = await deadPid();
      const tmpA = path.join(base, "artifacts", ".tmp");
      const tmpW = path.join(base, "workflows", ".tmp");
      const stale = [
        path.join(tmpA, `.${dead}-0123456789abcdef.tmp`),
        path.join(tmpW, `.${dead}-0123456789abcdef.tmp`),
        path.join(base, "artifacts", ".0123456789abcdef.tmp"), // the previous version's naming
      ];
      const live = path.join(tmpA, `.${process.pid}-fedcba9876543210.tmp`); // ours: alive
      const fresh = path.join(tmpA, `.${dead}-aaaaaaaaaaaaaaaa.tmp`); // dead writer, but too recent
      for (const f of [...stale, live]) {
        await writeFile(f, "half-writ");
        await utimes(f, OLD, OLD);
      }
      await writeFile(fresh, "half-writ");
      expect((await storage.artifacts.list()).map((i) => i.name)).toEqual(["scans/keep.txt"]);
      expect((await storage.workflows.list()).map((r) => r.name)).toEqual(["wf"]);
      const reopened = new FileStorage({ basePath: base, tempMaxAgeMs: 10_000 });
      expect(await reopened.sweepDone()).toBe(3);
      await reopened.close();
      for (const f of stale) await expect(stat(f)).rejects.toMatchObject({ code: "ENOENT" });
      for (const f of [live, fresh]) expect((await stat(f)).isFile()).toBe(true);
      expect(await storage.artifacts.load("scans/keep.txt")).toBe("kept");
    });

    it("a write that fails halfway (full disk) leaves no temp file, and the next save succeeds", async () => {
      const { setFaultHook } = await import("../../src/storage/faults.js");
      let failNext = false;
      setFaultHook((point) => {
        if (point === "temp-partial" && failNext) {
          failNext = false;
          throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
        }
      });
      try {
        await storage.artifacts.save("a.txt", "old");
        failNext = true;
        const err = await storage.artifacts.save("a.txt", "x".repeat(100_000)).catch((e: unknown) => e);
        expect(err).toMatchObject({ name: "StorageError" });
        expect((err as Error).message).toMatch(/ENOSPC/);
        expect(await readdir(path.join(base, "artifacts", ".tmp"))).toEqual([]);
        expect(await storage.artifacts.load("a.txt")).toBe("old");
        failNext = true;
        await expect(storage.workflows.save({ name: "wf", source: "x", description: "", createdAt: "t", updatedAt: "t" })).rejects.toMatchObject({ name: "StorageError" });
        expect(await readdir(path.join(base, "workflows", ".tmp"))).toEqual([]);
        expect(await storage.workflows.get("wf")).toBeNull();
        await storage.artifacts.save("a.txt", "new");
        expect(await storage.artifacts.load("a.txt")).toBe("new");
      } finally {
        setFaultHook(undefined);
      }
    });

    it("never shows a reader a torn payload while another backend overwrites it", async () => {
      const a = "a".repeat(400_000);
      const b = `${"b".repeat(700_000)}✓`;
      const writer = new FileStorage({ basePath: base });
      await writer.artifacts.save("big.txt", a);
      let done = false;
      const writes = (async () => {
        for (let i = 0; i < 30; i++) await writer.artifacts.save("big.txt", i % 2 === 0 ? b : a);
        done = true;
      })();
      let reads = 0;
      const torn: string[] = [];
      try {
        while (!done) {
          const [value, info] = await Promise.all([storage.artifacts.load("big.txt"), storage.artifacts.get("big.txt")]);
          if (value !== a && value !== b) torn.push(`load: ${typeof value} of length ${String((value as string).length)}`);
          if (info?.size !== Buffer.byteLength(a) && info?.size !== Buffer.byteLength(b)) torn.push(`get: size ${info?.size}`);
          reads++;
        }
      } finally {
        await writes; // never leave the writer running into the next test's cleanup
      }
      expect(torn).toEqual([]);
      expect(reads).toBeGreaterThan(0);
      expect(await storage.artifacts.load("big.txt")).toBe(a);
    });

    it("wraps unexpected fs errors in StorageError naming the path", async () => {
      await writeFile(path.join(base, "artifacts", ".tmp"), "a file where the temp folder should be");
      const err = await storage.artifacts.save("x", "y").catch((e: unknown) => e);
      expect(err).toMatchObject({ name: "StorageError" });
      expect((err as Error).message).toContain(path.join(base, "artifacts"));
    });
  });
});
