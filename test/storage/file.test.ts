import { mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempPathFor } from "../../src/storage/atomic.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { storageFromDescriptor } from "../../src/storage/descriptor.js";
import type { WorkflowRecord } from "../../src/storage/protocol.js";
import { INVALID_ARTIFACT_NAMES, storageConformance } from "../conformance/storage.js";

async function tempDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), "tcm-file-storage-"));
}

storageConformance("FileStorage", async () => {
  const dir = await tempDir();
  return { storage: new FileStorage({ basePath: dir }), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

/** Every path under `dir`, relative, sorted: to prove an operation created nothing. */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

const OLD = new Date("2020-01-01T00:00:00.000Z");

describe("FileStorage (file-specific)", () => {
  let base: string;
  let storage: FileStorage;

  beforeEach(async () => {
    base = await tempDir();
    storage = new FileStorage({ basePath: base });
  });

  afterEach(async () => {
    await storage.close();
    await rm(base, { recursive: true, force: true });
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
      expect(await readFile(path.join(base, "workspaces", "team-a", "artifacts", "x.txt"), "utf8")).toBe("hi");
    });

    it("rejects bad options and workspace ids before creating anything", async () => {
      const empty = await tempDir();
      try {
        expect(() => new FileStorage({} as never)).toThrow(expect.objectContaining({ name: "ValidationError" }));
        expect(() => new FileStorage({ basePath: empty, extra: 1 } as never)).toThrow(/extra|unrecognized/i);
        expect(() => new FileStorage({ basePath: empty, workspaceId: "../up" })).toThrow(expect.objectContaining({ name: "InvalidNameError" }));
        expect(await tree(empty)).toEqual([]);
      } finally {
        await rm(empty, { recursive: true, force: true });
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

    it("writes the source verbatim to <name>.ts and metadata to a sidecar", async () => {
      const source = "// exact\r\nexport async function run() {}\n\n  ";
      await storage.workflows.save(record({ source }));
      expect(await readFile(path.join(base, "workflows", "triple.ts"), "utf8")).toBe(source);
      const sidecar = JSON.parse(await readFile(path.join(base, "workflows", ".meta", "triple.json"), "utf8")) as Record<string, unknown>;
      expect(sidecar).toMatchObject({ description: "Triple.", params: [{ name: "n" }] });
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
        await writeFile(file, "/** Edited. */\nexport async function run({ m }: { m: string }) { return m; }\n");
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

    it("survives a corrupt sidecar by treating the file as hand-written", async () => {
      await storage.workflows.save(record());
      await writeFile(path.join(base, "workflows", ".meta", "triple.json"), "{ not json");
      const r = await storage.workflows.get("triple");
      expect(r).toMatchObject({ name: "triple", description: "" });
      expect(r?.params).toBeUndefined();
    });

    it("wraps unexpected fs errors in StorageError naming the path", async () => {
      await writeFile(path.join(base, "workflows", ".meta"), "a file where the sidecar folder should be");
      const err = await storage.workflows.save(record()).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: "StorageError" });
      expect((err as Error).message).toContain(path.join(base, "workflows"));
    });
  });

  describe("artifacts on disk", () => {
    it("stores the payload as-is at artifacts/<name> with a per-artifact sidecar", async () => {
      await storage.artifacts.save("scans/a.json", { hosts: 3 }, { description: "scan" });
      await storage.artifacts.save("notes.txt", "héllo");
      await storage.artifacts.save("raw.bin", Uint8Array.from([0, 1, 254, 255]));
      const dir = path.join(base, "artifacts");
      expect(JSON.parse(await readFile(path.join(dir, "scans", "a.json"), "utf8"))).toEqual({ hosts: 3 });
      expect(await readFile(path.join(dir, "notes.txt"), "utf8")).toBe("héllo");
      expect([...(await readFile(path.join(dir, "raw.bin")))]).toEqual([0, 1, 254, 255]);
      const sidecar = JSON.parse(await readFile(path.join(dir, ".meta", "scans", "a.json"), "utf8")) as Record<string, unknown>;
      expect(sidecar).toMatchObject({ kind: "json", description: "scan" });
      expect(await tree(path.join(dir, ".meta"))).toEqual(["notes.txt", "raw.bin", "scans", path.join("scans", "a.json")]);
    });

    it("delete removes empty parent folders in data and sidecar trees, keeping non-empty ones", async () => {
      await storage.artifacts.save("a/b/c/one.txt", "1");
      await storage.artifacts.save("a/two.txt", "2");
      expect(await storage.artifacts.delete("a/b/c/one.txt")).toBe(true);
      const dir = path.join(base, "artifacts");
      expect(await tree(dir)).toEqual([".meta", path.join(".meta", "a"), path.join(".meta", "a", "two.txt"), "a", path.join("a", "two.txt")]);
      expect(await storage.artifacts.delete("a/two.txt")).toBe(true);
      expect(await tree(dir)).toEqual([".meta"]);
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

    it("notices a payload edited by hand after its sidecar was written", async () => {
      await storage.artifacts.save("cfg.json", { v: 1 }, { description: "config", metadata: { k: "v" } });
      const file = path.join(base, "artifacts", "cfg.json");
      await writeFile(file, '{"v":2,"more":true}');
      expect(await storage.artifacts.load("cfg.json")).toEqual({ v: 2, more: true });
      expect(await storage.artifacts.get("cfg.json")).toMatchObject({ kind: "json", size: 19, description: "config", metadata: { k: "v" } });
      await writeFile(file, "not json any more");
      expect(await storage.artifacts.load("cfg.json")).toBe("not json any more");
    });

    it("refuses to make an artifact name also a folder, with a clear message", async () => {
      await storage.artifacts.save("a", "file");
      await expect(storage.artifacts.save("a/b", "x")).rejects.toThrow(/"a" is an artifact, not a folder/);
      await storage.artifacts.save("d/x", "inside");
      await expect(storage.artifacts.save("d", "x")).rejects.toThrow(/folder of artifacts/);
      expect((await storage.artifacts.list()).map((i) => i.name)).toEqual(["a", "d/x"]);
      expect(await storage.artifacts.load("a")).toBe("file");
    });

    it("ignores stale temp files left by a killed writer", async () => {
      await storage.artifacts.save("scans/keep.txt", "kept");
      await storage.workflows.save({ name: "wf", source: "x", description: "", createdAt: "t", updatedAt: "t" });
      // Exactly what a writer leaves behind when killed between its temp write and its rename.
      const targets = [
        path.join(base, "artifacts", "scans", "keep.txt"),
        path.join(base, "artifacts", "new.txt"),
        path.join(base, "artifacts", ".meta", "scans", "keep.txt"),
        path.join(base, "workflows", "wf.ts"),
        path.join(base, "workflows", ".meta", "wf.json"),
      ];
      for (const t of targets) await writeFile(tempPathFor(t), "half-writ");
      expect((await storage.artifacts.list()).map((i) => i.name)).toEqual(["scans/keep.txt"]);
      expect(await storage.artifacts.load("scans/keep.txt")).toBe("kept");
      expect(await storage.artifacts.exists("new.txt")).toBe(false);
      expect((await storage.workflows.list()).map((r) => r.name)).toEqual(["wf"]);
      expect((await storage.workflows.get("wf"))?.source).toBe("x");
      // Later saves and deletes work around them.
      await storage.artifacts.save("scans/keep.txt", "rewritten");
      expect(await storage.artifacts.load("scans/keep.txt")).toBe("rewritten");
      expect(await storage.artifacts.delete("scans/keep.txt")).toBe(true);
      expect(await storage.artifacts.list()).toEqual([]);
    });

    it("lists an artifact whose writer died between the data and sidecar renames", async () => {
      await mkdir(path.join(base, "artifacts", "half"), { recursive: true });
      const file = path.join(base, "artifacts", "half", "done.txt");
      await writeFile(file, "payload complete");
      await utimes(file, OLD, OLD);
      expect(await storage.artifacts.list()).toEqual([
        expect.objectContaining({ name: "half/done.txt", kind: "text", size: 16, description: "" }),
      ]);
      expect(await storage.artifacts.load("half/done.txt")).toBe("payload complete");
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
      await writeFile(path.join(base, "artifacts", ".meta"), "a file where the sidecar folder should be");
      const err = await storage.artifacts.save("x", "y").catch((e: unknown) => e);
      expect(err).toMatchObject({ name: "StorageError" });
      expect((err as Error).message).toContain(path.join(base, "artifacts"));
    });
  });
});
