/**
 * Behaviour every StorageBackend must show, whatever keeps the data (files today, Redis later).
 * A backend's test file calls `storageConformance(name, factory)`; the factory returns a fresh,
 * empty backend and a cleanup that removes everything it created.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { storageFromDescriptor } from "../../src/storage/descriptor.js";
import type { StorageError } from "../../src/errors.js";
import type { ArtifactData, JsonValue, SaveArtifactOptions, StorageBackend, WorkflowRecord } from "../../src/storage/protocol.js";

/** Options every backend takes; the factory passes them to the backend it builds. */
export interface ConformanceOptions {
  maxArtifactBytes?: number;
  maxStoreBytes?: number;
}

export interface StorageFixture {
  storage: StorageBackend;
  cleanup(): Promise<void>;
}

/** Names every backend must refuse, with why (for readable test titles). */
export const INVALID_ARTIFACT_NAMES: ReadonlyArray<[string, string]> = [
  ["", "empty"],
  ["../escape", "parent segment"],
  ["a/../../escape", "parent segment inside"],
  ["./a", "dot segment"],
  ["a/./b", "dot segment inside"],
  ["/etc/passwd", "absolute path"],
  ["a\\b", "backslash"],
  ["a\u0000b", "NUL"],
  ["a\nb", "newline"],
  ["a\u0007b", "control character"],
  [".hidden", "leading dot"],
  ["dir/.meta", "leading dot in a later segment"],
  ["a//b", "empty segment"],
  ["a/", "trailing slash"],
  [" ", "whitespace only"],
  ["   ", "spaces only"],
  ["\u00a0\u3000", "Unicode whitespace only"],
  ["a/ /b", "whitespace-only segment"],
  ["x".repeat(256), "segment over 255 bytes"],
  [`${"é".repeat(128)}`, "segment over 255 bytes in UTF-8"],
  [Array.from({ length: 5 }, () => "y".repeat(250)).join("/"), "over 1024 bytes in total"],
];

export const INVALID_WORKFLOW_NAMES: readonly string[] = ["", "1abc", "a-b", "a b", "a.b", "../x", "x/y", "é", "a\u0000", "w".repeat(101)];

const UNICODE_TEXT = "\uFEFFhello — héllo wörld ✓ 日本語 👩‍💻 مرحبا \u0301e\r\nline2\n\ttab\u0000after-nul";

export function storageConformance(name: string, factory: (options?: ConformanceOptions) => Promise<StorageFixture>): void {
  describe(`StorageBackend conformance: ${name}`, () => {
    let fx: StorageFixture;
    let storage: StorageBackend;
    const extra: StorageBackend[] = [];

    beforeEach(async () => {
      fx = await factory();
      storage = fx.storage;
    });

    afterEach(async () => {
      for (const s of extra.splice(0)) await s.close();
      await storage.close();
      await fx.cleanup();
    });

    /** A fresh backend built with `options`, removed after the test. */
    async function withOptions(options: ConformanceOptions): Promise<StorageBackend> {
      const f = await factory(options);
      extraFixtures.push(f);
      return f.storage;
    }
    const extraFixtures: StorageFixture[] = [];
    afterEach(async () => {
      for (const f of extraFixtures.splice(0)) {
        await f.storage.close();
        await f.cleanup();
      }
    });

    /** Another backend on the same data (or a workspace of it), closed after the test. */
    async function reopen(workspaceId?: string): Promise<StorageBackend> {
      const descriptor = JSON.parse(JSON.stringify(storage.toDescriptor())) as Record<string, unknown>;
      if (workspaceId !== undefined) descriptor["workspaceId"] = workspaceId;
      const s = await storageFromDescriptor(descriptor);
      extra.push(s);
      return s;
    }

    describe("artifacts", () => {
      it("round-trips unicode text as a string", async () => {
        const info = await storage.artifacts.save("notes.txt", UNICODE_TEXT);
        expect(info.kind).toBe("text");
        expect(info.size).toBe(Buffer.byteLength(UNICODE_TEXT, "utf8"));
        const back = await storage.artifacts.load("notes.txt");
        expect(back).toBe(UNICODE_TEXT);
        expect(await storage.artifacts.save("empty.txt", "")).toMatchObject({ kind: "text", size: 0 });
        expect(await storage.artifacts.load("empty.txt")).toBe("");
      });

      it("round-trips all 256 byte values as a plain Uint8Array", async () => {
        const bytes = Uint8Array.from({ length: 512 }, (_, i) => (i * 7 + 3) % 256);
        const info = await storage.artifacts.save("blob.bin", bytes);
        expect(info).toMatchObject({ kind: "bytes", size: 512 });
        const back = await storage.artifacts.load("blob.bin");
        expect(back).toBeInstanceOf(Uint8Array);
        expect(Object.getPrototypeOf(back)).toBe(Uint8Array.prototype);
        expect(Buffer.isBuffer(back)).toBe(false);
        expect(Array.from(back as Uint8Array)).toEqual(Array.from(bytes));
        expect(new Set(back as Uint8Array).size).toBe(256);
      });

      it("stores a Buffer as bytes and gives back a plain Uint8Array", async () => {
        await storage.artifacts.save("buf", Buffer.from([0, 255, 10, 13]));
        const back = await storage.artifacts.load("buf");
        expect(Buffer.isBuffer(back)).toBe(false);
        expect(Array.from(back as Uint8Array)).toEqual([0, 255, 10, 13]);
        expect((await storage.artifacts.get("buf"))?.kind).toBe("bytes");
      });

      it("round-trips JSON values of every shape", async () => {
        const doc: JsonValue = {
          hosts: 3,
          ratio: -0.125,
          big: 1e300,
          ok: true,
          none: null,
          list: [1, "two", { three: [3] }, [], {}],
          "weird key ✓": "日本",
          nested: { deep: { deeper: { deepest: "x" } } },
        };
        const info = await storage.artifacts.save("scan.json", doc);
        expect(info.kind).toBe("json");
        expect(await storage.artifacts.load("scan.json")).toEqual(doc);
        for (const [n, value] of [
          ["arr", [1, 2, 3]],
          ["num", 42],
          ["zero", 0],
          ["bool", false],
          ["nul", null],
        ] as Array<[string, JsonValue]>) {
          expect((await storage.artifacts.save(n, value)).kind).toBe("json");
          expect(await storage.artifacts.load(n)).toEqual(value);
        }
      });

      it("keeps the stored value independent of later changes to the caller's objects", async () => {
        const doc = { a: [1] };
        const metadata = { tag: "v1" };
        await storage.artifacts.save("iso", doc, { metadata });
        doc.a.push(2);
        metadata.tag = "changed";
        expect(await storage.artifacts.load("iso")).toEqual({ a: [1] });
        expect((await storage.artifacts.get("iso"))?.metadata).toEqual({ tag: "v1" });
      });

      it.each([
        ["a function", () => 1, /function/i],
        ["undefined", undefined, /undefined/i],
        ["a BigInt", 10n, /BigInt/],
        ["a Symbol", Symbol("s"), /Symbol/],
        ["NaN", Number.NaN, /NaN/],
        ["a nested undefined", { a: { b: undefined } }, /\$\.a\.b.*undefined/],
        ["a function in an array", [1, () => 2], /\$\[1\].*function/],
        ["a Date", { when: new Date(0) }, /Date/],
        ["a Map", new Map(), /Map/],
      ])("rejects %s with a ValidationError naming the problem", async (_label, value, pattern) => {
        const err = await storage.artifacts.save("bad", value as JsonValue).catch((e: unknown) => e);
        expect(err).toMatchObject({ name: "ValidationError" });
        expect((err as Error).message).toMatch(pattern);
        expect(await storage.artifacts.exists("bad")).toBe(false);
      });

      it("rejects cycles", async () => {
        const cyclic: Record<string, unknown> = { a: 1 };
        cyclic["self"] = { back: cyclic };
        const err = await storage.artifacts.save("cyc", cyclic as JsonValue).catch((e: unknown) => e);
        expect(err).toMatchObject({ name: "ValidationError" });
        expect((err as Error).message).toMatch(/circular|cycle/i);
        // Shared (non-cyclic) references are fine.
        const shared = { x: 1 };
        await storage.artifacts.save("dag", { a: shared, b: shared });
        expect(await storage.artifacts.load("dag")).toEqual({ a: { x: 1 }, b: { x: 1 } });
      });

      it("rejects non-JSON metadata", async () => {
        const err = await storage.artifacts
          .save("m", "x", { metadata: { n: 1n } as unknown as Record<string, JsonValue> })
          .catch((e: unknown) => e);
        expect(err).toMatchObject({ name: "ValidationError" });
        expect(await storage.artifacts.exists("m")).toBe(false);
      });

      it("keeps description and metadata; defaults are empty", async () => {
        const saved = await storage.artifacts.save("a.txt", "x", {
          description: "a scan",
          metadata: { host: "h1", ports: [22, 80], nested: { ok: true } },
        });
        const got = await storage.artifacts.get("a.txt");
        expect(got).toEqual(saved);
        expect(got).toMatchObject({
          name: "a.txt",
          kind: "text",
          size: 1,
          description: "a scan",
          metadata: { host: "h1", ports: [22, 80], nested: { ok: true } },
        });
        expect(Date.parse(got!.createdAt)).not.toBeNaN();
        expect(got!.updatedAt).toBe(got!.createdAt);
        expect(await storage.artifacts.save("b.txt", "y")).toMatchObject({ description: "", metadata: {} });
      });

      it("overwrite replaces data, kind, description and metadata, keeps createdAt, advances updatedAt", async () => {
        const first = await storage.artifacts.save("r", "text", { description: "d1", metadata: { v: 1 } });
        await new Promise((r) => setTimeout(r, 5));
        const second = await storage.artifacts.save("r", { now: "json" });
        expect(second.createdAt).toBe(first.createdAt);
        expect(Date.parse(second.updatedAt)).toBeGreaterThan(Date.parse(first.updatedAt));
        expect(second).toMatchObject({ kind: "json", description: "", metadata: {} });
        expect(await storage.artifacts.get("r")).toEqual(second);
        expect(await storage.artifacts.load("r")).toEqual({ now: "json" });
        // Two saves in quick succession still produce distinct, increasing updatedAt values.
        const third = await storage.artifacts.save("r", "a");
        const fourth = await storage.artifacts.save("r", "b");
        expect(Date.parse(fourth.updatedAt)).toBeGreaterThan(Date.parse(third.updatedAt));
      });

      it("get/load/exists/delete on missing names", async () => {
        expect(await storage.artifacts.get("nope")).toBeNull();
        expect(await storage.artifacts.load("nope")).toBeUndefined();
        expect(await storage.artifacts.exists("nope")).toBe(false);
        expect(await storage.artifacts.delete("nope")).toBe(false);
      });

      it("list is sorted by name and reflects saves and deletes", async () => {
        expect(await storage.artifacts.list()).toEqual([]);
        for (const n of ["zeta", "Alpha", "beta", "alpha", "b/a", "a-b", "a_b"]) await storage.artifacts.save(n, n);
        const names = (await storage.artifacts.list()).map((i) => i.name);
        expect(names).toEqual(["Alpha", "a-b", "a_b", "alpha", "b/a", "beta", "zeta"]);
        expect(await storage.artifacts.exists("beta")).toBe(true);
        expect(await storage.artifacts.delete("beta")).toBe(true);
        expect(await storage.artifacts.delete("beta")).toBe(false);
        expect(await storage.artifacts.exists("beta")).toBe(false);
        expect((await storage.artifacts.list()).map((i) => i.name)).not.toContain("beta");
        const listed = await storage.artifacts.list();
        for (const info of listed) expect(await storage.artifacts.get(info.name)).toEqual(info);
      });

      it("supports subfolder names", async () => {
        await storage.artifacts.save("scans/a.json", { hosts: 1 });
        await storage.artifacts.save("scans/deep/b.txt", "b");
        await storage.artifacts.save("scans.txt", "sibling");
        expect((await storage.artifacts.list()).map((i) => i.name)).toEqual(["scans.txt", "scans/a.json", "scans/deep/b.txt"]);
        expect(await storage.artifacts.load("scans/deep/b.txt")).toBe("b");
        expect(await storage.artifacts.get("scans/a.json")).toMatchObject({ name: "scans/a.json", kind: "json" });
        // A folder is not an artifact.
        expect(await storage.artifacts.exists("scans")).toBe(false);
        expect(await storage.artifacts.get("scans")).toBeNull();
        expect(await storage.artifacts.delete("scans")).toBe(false);
        expect(await storage.artifacts.delete("scans/deep/b.txt")).toBe(true);
        expect(await storage.artifacts.delete("scans/a.json")).toBe(true);
        expect((await storage.artifacts.list()).map((i) => i.name)).toEqual(["scans.txt"]);
        // The names are free again, as artifacts or as folders.
        await storage.artifacts.save("scans/deep", "now a file");
        expect(await storage.artifacts.load("scans/deep")).toBe("now a file");
      });

      it.each(INVALID_ARTIFACT_NAMES)("rejects invalid name %j (%s) in every operation, creating nothing", async (bad) => {
        const ops: Array<() => Promise<unknown>> = [
          () => storage.artifacts.save(bad, "data"),
          () => storage.artifacts.load(bad),
          () => storage.artifacts.get(bad),
          () => storage.artifacts.exists(bad),
          () => storage.artifacts.delete(bad),
        ];
        for (const op of ops) {
          const err = await op().catch((e: unknown) => e);
          expect(err).toMatchObject({ name: "InvalidNameError" });
          expect((err as Error).message).toMatch(/accepted/i);
        }
        expect(await storage.artifacts.list()).toEqual([]);
      });

      it("rejects non-string names", async () => {
        for (const bad of [undefined, null, 42, {}]) {
          await expect(storage.artifacts.save(bad as unknown as string, "x")).rejects.toMatchObject({ name: "InvalidNameError" });
        }
      });

      it("refuses an artifact over the per-artifact quota with a clear error, writing nothing", async () => {
        const s = await withOptions({ maxArtifactBytes: 1000 });
        await s.artifacts.save("q", "old");
        const payloads: Array<[string, ArtifactData, SaveArtifactOptions | undefined]> = [
          ["text", "x".repeat(1001), undefined],
          ["bytes", new Uint8Array(1001), undefined],
          ["json", { rows: "y".repeat(1000) }, undefined],
          ["metadata", "small", { metadata: { big: "z".repeat(1000) } }],
          ["description", "small", { description: "d".repeat(1000) }],
        ];
        for (const [label, value, options] of payloads) {
          const err = (await s.artifacts.save("q", value, options).catch((e: unknown) => e)) as StorageError;
          expect(err, label).toMatchObject({ name: "StorageError", code: "QUOTA_EXCEEDED", limit: 1000 });
          expect(err.size, label).toBeGreaterThan(1000);
          expect(err.message, label).toMatch(/per-artifact quota of 1000 bytes/);
          expect(err.message, label).toContain(`${err.size} bytes`);
          await expect(s.artifacts.save("fresh", value, options), label).rejects.toMatchObject({ code: "QUOTA_EXCEEDED" });
        }
        expect(await s.artifacts.load("q")).toBe("old");
        expect(await s.artifacts.exists("fresh")).toBe(false);
        expect((await s.artifacts.save("q", "x".repeat(900))).size).toBe(900);
        // The default is 64 MiB.
        const big = new Uint8Array(64 * 1024 * 1024 + 1);
        await expect(storage.artifacts.save("big", big)).rejects.toMatchObject({ code: "QUOTA_EXCEEDED", limit: 64 * 1024 * 1024 });
        expect(await storage.artifacts.exists("big")).toBe(false);
      });

      it("refuses a save that would take the store over its quota; overwrites and deletes free space", async () => {
        // Numbers leave room for FileStorage's header line (counted as stored, ~200 bytes per artifact).
        const s = await withOptions({ maxStoreBytes: 4000 });
        await s.artifacts.save("a", "a".repeat(1000));
        await s.artifacts.save("b", "b".repeat(1000));
        const err = (await s.artifacts.save("c", "c".repeat(2100)).catch((e: unknown) => e)) as StorageError;
        expect(err).toMatchObject({ name: "StorageError", code: "QUOTA_EXCEEDED", limit: 4000 });
        expect(err.message).toMatch(/store would hold .* over its quota of .*4000 bytes/);
        expect(await s.artifacts.exists("c")).toBe(false);
        // Replacing an artifact counts only the difference.
        await s.artifacts.save("b", "B".repeat(500));
        await s.artifacts.save("c", "c".repeat(1200));
        await expect(s.artifacts.save("d", "d".repeat(1400))).rejects.toMatchObject({ code: "QUOTA_EXCEEDED" });
        expect(await s.artifacts.delete("a")).toBe(true);
        await s.artifacts.save("d", "d".repeat(1400));
        expect((await s.artifacts.list()).map((i) => i.name)).toEqual(["b", "c", "d"]);
      });

      it("the store quota is exact under 40 parallel saves: as many succeed as fit one after another", async () => {
        // Issue 32: each save measured the store again, so saves in flight were not counted and parallel ones overshot.
        const payload = "p".repeat(1000);
        const quota = { maxStoreBytes: 12_000 };
        const sequential = await withOptions(quota);
        let fit = 0;
        while (fit < 40 && (await sequential.artifacts.save(`n-${String(fit).padStart(2, "0")}`, payload).then(() => true, () => false))) fit++;
        expect(fit).toBeGreaterThan(5);
        expect(fit).toBeLessThan(40);
        const parallel = await withOptions(quota);
        const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => parallel.artifacts.save(`n-${String(i).padStart(2, "0")}`, payload)));
        const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
        for (const r of refused) expect(r.reason).toMatchObject({ name: "StorageError", code: "QUOTA_EXCEEDED" });
        expect(outcomes.length - refused.length).toBe(fit);
        expect((await parallel.artifacts.list()).length).toBe(fit);
        // Full means full: one more is refused; freeing one artifact makes room for exactly one.
        await expect(parallel.artifacts.save("one-more", payload)).rejects.toMatchObject({ code: "QUOTA_EXCEEDED" });
        const kept = (await parallel.artifacts.list())[0]!.name;
        expect(await parallel.artifacts.delete(kept)).toBe(true);
        const again = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => parallel.artifacts.save(`m-${String(i).padStart(2, "0")}`, payload)));
        expect(again.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      });

      it("accepts unusual but valid names", async () => {
        const names = ["日本語/ファイル.txt", "with space.txt", "a..b", "x.", "emoji-👩‍💻", "UPPER/lower"];
        for (const n of names) await storage.artifacts.save(n, n);
        for (const n of names) expect(await storage.artifacts.load(n)).toBe(n);
        expect((await storage.artifacts.list()).length).toBe(names.length);
      });
    });

    describe("workflows", () => {
      const record = (name: string, over: Partial<WorkflowRecord> = {}): WorkflowRecord => ({
        name,
        source: `/** Triple a number. */\r\nexport async function run({ n }: { n: number }) {\n  return n * 3; // ✓ 日本\n}\n  `,
        description: "Triple a number.",
        params: [
          { name: "n", type: "number", required: true },
          { name: "label", type: "string", description: "shown", required: false, default: '"x"' },
        ],
        createdAt: "2024-01-02T03:04:05.000Z",
        updatedAt: "2024-01-02T03:04:06.000Z",
        author: "agent",
        ...over,
      });

      it("save/get round-trips every field and the exact source", async () => {
        const r = record("triple");
        await storage.workflows.save(r);
        expect(await storage.workflows.get("triple")).toEqual(r);
        const minimal: WorkflowRecord = {
          name: "minimal",
          source: "export async function run() {}",
          description: "",
          createdAt: "2024-01-01T00:00:00.000Z",
          updatedAt: "2024-01-01T00:00:00.000Z",
        };
        await storage.workflows.save(minimal);
        expect(await storage.workflows.get("minimal")).toEqual(minimal);
      });

      it("overwrite replaces the record", async () => {
        await storage.workflows.save(record("w"));
        const next = record("w", { source: "export async function run() { return 1; }", description: "v2", params: [] });
        await storage.workflows.save(next);
        expect(await storage.workflows.get("w")).toEqual(next);
        expect(await storage.workflows.list()).toHaveLength(1);
      });

      it("list is sorted; delete reports whether something was deleted", async () => {
        expect(await storage.workflows.list()).toEqual([]);
        for (const n of ["beta", "Alpha", "_private", "alpha2"]) await storage.workflows.save(record(n));
        expect((await storage.workflows.list()).map((r) => r.name)).toEqual(["Alpha", "_private", "alpha2", "beta"]);
        expect(await storage.workflows.get("missing")).toBeNull();
        expect(await storage.workflows.delete("beta")).toBe(true);
        expect(await storage.workflows.delete("beta")).toBe(false);
        expect(await storage.workflows.get("beta")).toBeNull();
        expect((await storage.workflows.list()).map((r) => r.name)).toEqual(["Alpha", "_private", "alpha2"]);
      });

      it.each(INVALID_WORKFLOW_NAMES)("rejects invalid workflow name %j, creating nothing", async (bad) => {
        for (const op of [
          () => storage.workflows.save(record(bad)),
          () => storage.workflows.get(bad),
          () => storage.workflows.delete(bad),
        ]) {
          await expect(op()).rejects.toMatchObject({ name: "InvalidNameError" });
        }
        expect(await storage.workflows.list()).toEqual([]);
      });

      it("round-trips provenance with the record, in get and list; an overwrite without it drops it", async () => {
        const provenance = { trust: "untrusted" as const, executor: "sandbox:quickjs", savedAt: "2024-05-06T07:08:09.000Z" };
        const r = record("prov", { provenance });
        await storage.workflows.save(r);
        expect(await storage.workflows.get("prov")).toEqual(r);
        expect(await storage.workflows.list()).toEqual([r]);
        const again = await reopen();
        expect((await again.workflows.get("prov"))?.provenance).toEqual(provenance);
        const trusted = record("prov", { provenance: { trust: "trusted", executor: "subprocess", savedAt: "2024-05-06T07:08:10.000Z" } });
        await storage.workflows.save(trusted);
        expect(await storage.workflows.get("prov")).toEqual(trusted);
        const { provenance: _dropped, ...plain } = trusted;
        await storage.workflows.save(plain);
        expect(await storage.workflows.get("prov")).toEqual(plain);
        for (const bad of [{ trust: "root", executor: "x", savedAt: "t" }, { trust: "trusted" }, { trust: "trusted", executor: "x", savedAt: "t", extra: 1 }]) {
          const err = await storage.workflows.save(record("prov", { provenance: bad } as unknown as Partial<WorkflowRecord>)).catch((e: unknown) => e);
          expect(err).toMatchObject({ name: "ValidationError" });
        }
        expect(await storage.workflows.get("prov")).toEqual(plain);
      });

      it("rejects a malformed record with a ValidationError", async () => {
        const bad = { name: "ok", source: 42, description: "", createdAt: "x", updatedAt: "x" } as unknown as WorkflowRecord;
        await expect(storage.workflows.save(bad)).rejects.toMatchObject({ name: "ValidationError" });
        expect(await storage.workflows.get("ok")).toBeNull();
      });
    });

    describe("skills", () => {
      const enc = (t: string) => new TextEncoder().encode(t);
      const md = (name: string, v = 1) => enc(`---\nname: ${name}\ndescription: Version ${v}.\n---\nbody ${v}\n`);
      const skillsOf = (s: StorageBackend) => {
        if (!s.skills) throw new Error("this backend must keep skills");
        return s.skills;
      };
      const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

      it("starts empty", async () => {
        const skills = skillsOf(storage);
        expect(await skills.names()).toEqual([]);
        expect(await skills.files("nope")).toBeNull();
        expect(await skills.read("nope", "SKILL.md")).toBeNull();
        expect(await skills.delete("nope")).toBe(false);
      });

      it("saves a folder of files and reads every byte back (text, binary, nested paths)", async () => {
        const skills = skillsOf(storage);
        await skills.save("csv-tool", [
          { path: "SKILL.md", bytes: md("csv-tool") },
          { path: "scripts/run.py", bytes: enc("print('hi')\n") },
          { path: "assets/all.bin", bytes: ALL_BYTES },
          { path: "references/ünïcode.md", bytes: enc(UNICODE_TEXT) },
        ]);
        await skills.save("b-skill", [{ path: "SKILL.md", bytes: md("b-skill") }]);
        expect(await skills.names()).toEqual(["b-skill", "csv-tool"]);
        expect(await skills.files("csv-tool")).toEqual([
          { path: "SKILL.md", size: md("csv-tool").byteLength },
          { path: "assets/all.bin", size: 256 },
          { path: "references/ünïcode.md", size: enc(UNICODE_TEXT).byteLength },
          { path: "scripts/run.py", size: 12 },
        ].sort((a, b) => (a.path < b.path ? -1 : 1)));
        expect(Array.from((await skills.read("csv-tool", "assets/all.bin")) ?? [])).toEqual(Array.from(ALL_BYTES));
        expect(new TextDecoder("utf-8", { ignoreBOM: true }).decode((await skills.read("csv-tool", "references/ünïcode.md")) ?? new Uint8Array())).toBe(UNICODE_TEXT);
        expect(await skills.read("csv-tool", "scripts/missing.py")).toBeNull();
      });

      it("replaces the whole folder: files left out of a save are gone", async () => {
        const skills = skillsOf(storage);
        await skills.save("rep", [{ path: "SKILL.md", bytes: md("rep", 1) }, { path: "scripts/old.sh", bytes: enc("old") }]);
        await skills.save("rep", [{ path: "SKILL.md", bytes: md("rep", 2) }, { path: "scripts/new.sh", bytes: enc("new") }]);
        expect((await skills.files("rep"))?.map((f) => f.path)).toEqual(["SKILL.md", "scripts/new.sh"]);
        expect(await skills.read("rep", "scripts/old.sh")).toBeNull();
        expect(await skills.delete("rep")).toBe(true);
        expect(await skills.names()).toEqual([]);
        expect(await skills.files("rep")).toBeNull();
      });

      it("a reader never sees a mix of two saves (one commit point per skill)", async () => {
        const skills = skillsOf(storage);
        const files = (v: number) => [{ path: "SKILL.md", bytes: md("mix", v) }, { path: "scripts/v.txt", bytes: enc(String(v)) }];
        await skills.save("mix", files(0));
        let writing = true;
        const writer = (async () => {
          for (let v = 1; v <= 40; v++) await skills.save("mix", files(v));
          writing = false;
        })();
        let seen = 0;
        while (writing) {
          const listing = await skills.files("mix");
          const md1 = await skills.read("mix", "SKILL.md");
          const v = await skills.read("mix", "scripts/v.txt");
          // Two reads are not one snapshot; what must hold is that every listing is one save's.
          if (listing) expect(listing.map((f) => f.path)).toEqual(["SKILL.md", "scripts/v.txt"]);
          if (md1 && v) seen++;
        }
        await writer;
        expect(seen).toBeGreaterThan(0);
        expect(new TextDecoder().decode((await skills.read("mix", "scripts/v.txt")) ?? new Uint8Array())).toBe("40");
      });

      it("refuses bad skill names and paths before writing anything", async () => {
        const skills = skillsOf(storage);
        for (const bad of ["", "Upper", "a--b", "-a", "a_b", "../x", "a/b", "x".repeat(65)]) {
          await expect(skills.save(bad, [{ path: "SKILL.md", bytes: md("x") }])).rejects.toMatchObject({ name: "InvalidNameError" });
          await expect(skills.read(bad, "SKILL.md")).rejects.toMatchObject({ name: "InvalidNameError" });
        }
        for (const bad of ["../x", "/etc/passwd", "a//b", ".hidden", "a\\b", "scripts/../../x"]) {
          await expect(skills.save("ok", [{ path: "SKILL.md", bytes: md("ok") }, { path: bad, bytes: enc("x") }])).rejects.toMatchObject({ name: "InvalidNameError" });
          await expect(skills.read("ok", bad)).rejects.toMatchObject({ name: "InvalidNameError" });
        }
        await expect(skills.save("ok", [{ path: "README.md", bytes: enc("x") }])).rejects.toMatchObject({ name: "ValidationError" });
        expect(await skills.names()).toEqual([]);
      });

      it("refuses a file over 10 MB with QUOTA_EXCEEDED and keeps the old folder", async () => {
        const skills = skillsOf(storage);
        await skills.save("q", [{ path: "SKILL.md", bytes: md("q") }]);
        const err = (await skills.save("q", [{ path: "SKILL.md", bytes: md("q", 2) }, { path: "assets/big.bin", bytes: new Uint8Array(10 * 1024 * 1024 + 1) }]).catch((e: unknown) => e)) as StorageError;
        expect(err).toMatchObject({ name: "StorageError", code: "QUOTA_EXCEEDED" });
        expect(new TextDecoder().decode((await skills.read("q", "SKILL.md")) ?? new Uint8Array())).toContain("Version 1.");
      });

      it("counts every skill's bytes against maxStoreBytes: a replace frees the old bytes, a delete frees them all", async () => {
        const small = await withOptions({ maxStoreBytes: 1_000 });
        const skills = skillsOf(small);
        const filler = (n: number) => ({ path: "assets/fill.bin", bytes: new Uint8Array(n) });
        await skills.save("one", [{ path: "SKILL.md", bytes: md("one") }, filler(400)]);
        await skills.save("two", [{ path: "SKILL.md", bytes: md("two") }, filler(400)]);
        const err = (await skills.save("three", [{ path: "SKILL.md", bytes: md("three") }, filler(400)]).catch((e: unknown) => e)) as StorageError;
        expect(err).toMatchObject({ name: "StorageError", code: "QUOTA_EXCEEDED", limit: 1_000 });
        expect(await skills.names()).toEqual(["one", "two"]);
        // Replacing "two" with the same size fits: its old bytes no longer count.
        await skills.save("two", [{ path: "SKILL.md", bytes: md("two", 2) }, filler(400)]);
        expect(await skills.delete("one")).toBe(true);
        await skills.save("three", [{ path: "SKILL.md", bytes: md("three") }, filler(400)]);
        expect(await skills.names()).toEqual(["three", "two"]);
      });

      it("is reached through the descriptor, and workspaces do not share skills", async () => {
        await skillsOf(storage).save("shared-skill", [{ path: "SKILL.md", bytes: md("shared-skill") }]);
        const again = await reopen();
        expect(await skillsOf(again).names()).toEqual(["shared-skill"]);
        const alpha = await reopen("alpha");
        expect(await skillsOf(alpha).names()).toEqual([]);
        await skillsOf(alpha).save("mine", [{ path: "SKILL.md", bytes: md("mine") }]);
        expect(await skillsOf(storage).names()).toEqual(["shared-skill"]);
      });
    });

    describe("backend", () => {
      it("has a JSON-safe descriptor from which an equivalent backend sees the same records", async () => {
        await storage.artifacts.save("keep/me.bin", Uint8Array.from([1, 2, 3]), { description: "kept", metadata: { a: 1 } });
        await storage.workflows.save({
          name: "persisted",
          source: "export async function run() { return 1; }",
          description: "Persisted",
          createdAt: "2024-01-01T00:00:00.000Z",
          updatedAt: "2024-01-01T00:00:00.000Z",
        });
        const descriptor = storage.toDescriptor();
        expect(JSON.parse(JSON.stringify(descriptor))).toEqual(descriptor);
        const again = await reopen();
        expect(again.toDescriptor()).toEqual(descriptor);
        expect(await again.artifacts.get("keep/me.bin")).toEqual(await storage.artifacts.get("keep/me.bin"));
        expect(Array.from((await again.artifacts.load("keep/me.bin")) as Uint8Array)).toEqual([1, 2, 3]);
        expect(await again.workflows.get("persisted")).toEqual(await storage.workflows.get("persisted"));
        // Writes through one are visible through the other.
        await again.artifacts.save("from-again", "hi");
        expect(await storage.artifacts.load("from-again")).toBe("hi");
      });

      it("isolates workspaces from each other and from unscoped data", async () => {
        await storage.artifacts.save("shared", "unscoped");
        await storage.workflows.save({ name: "unscoped_wf", source: "x", description: "", createdAt: "t", updatedAt: "t" });
        const alpha = await reopen("alpha");
        const beta = await reopen("beta");
        expect(alpha.toDescriptor()).toMatchObject({ workspaceId: "alpha" });
        expect(await alpha.artifacts.list()).toEqual([]);
        expect(await alpha.workflows.list()).toEqual([]);
        expect(await alpha.artifacts.exists("shared")).toBe(false);

        await alpha.artifacts.save("x", "from alpha");
        await beta.artifacts.save("x", "from beta");
        await alpha.workflows.save({ name: "wf", source: "alpha", description: "", createdAt: "t", updatedAt: "t" });
        expect(await alpha.artifacts.load("x")).toBe("from alpha");
        expect(await beta.artifacts.load("x")).toBe("from beta");
        expect(await beta.workflows.get("wf")).toBeNull();
        expect((await storage.artifacts.list()).map((i) => i.name)).toEqual(["shared"]);
        expect((await storage.workflows.list()).map((r) => r.name)).toEqual(["unscoped_wf"]);
        expect(await beta.artifacts.delete("x")).toBe(true);
        expect(await alpha.artifacts.load("x")).toBe("from alpha");

        // The same workspace id reaches the same data.
        const alphaAgain = await reopen("alpha");
        expect(await alphaAgain.artifacts.load("x")).toBe("from alpha");
      });

      it("rejects an invalid workspace id", async () => {
        for (const bad of ["", "../escape", "a/b", ".hidden", "a\u0000", " ", "t1:artifacts:data", "a:b"]) {
          await expect(reopen(bad)).rejects.toMatchObject({ name: "InvalidNameError" });
        }
      });

      it("close() can be called twice", async () => {
        const other = await reopen();
        await other.close();
        await expect(other.close()).resolves.toBeUndefined();
      });
    });
  });
}
