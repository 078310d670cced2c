/**
 * FileStorage's workflow catalogue (src/storage/file/workflow-catalogue.ts) is a cache: whatever
 * changes the files — this process, another process, a person with an editor, a broken catalogue
 * file — the next listing shows exactly what the files hold.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileStorage } from "../../src/storage/file/storage.js";
import { CATALOGUE_FILE } from "../../src/storage/file/workflow-catalogue.js";
import type { WorkflowRecord } from "../../src/storage/protocol.js";
import { WorkflowLibrary } from "../../src/workflows/library.js";
import { waitFor } from "../helpers/processes.js";
import { transpileTree } from "./transpile.js";

function record(name: string, description: string, body = "return 1;"): WorkflowRecord {
  return { name, source: `export async function run() { ${body} }\n`, description, createdAt: "2024-01-01T00:00:00.000Z", updatedAt: "2024-01-01T00:00:00.000Z" };
}

async function described(storage: FileStorage): Promise<string[]> {
  return (await storage.workflows.list()).map((r) => `${r.name}:${r.description}`);
}

/** A child process saving (`save name description`) or deleting (`delete name`) through the real store. */
const CHILD = `
const [entry, base, op, name, description] = process.argv.slice(2);
const { FileStorage } = await import(entry);
const s = new FileStorage({ basePath: base });
if (op === "save") await s.workflows.save({ name, source: "export async function run() { return 1; }\\n", description, createdAt: "t", updatedAt: "t" });
else await s.workflows.delete(name);
await s.close();
`;

describe("FileStorage workflow catalogue", () => {
  let work: string;
  let entry: string;
  let child: string;

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), "tcm-catalogue-"));
    entry = await transpileTree("src/storage/file/storage.ts", path.join(work, "code"));
    child = path.join(work, "child.mjs");
    await writeFile(child, CHILD);
  });

  afterAll(async () => {
    await rm(work, { recursive: true, force: true, maxRetries: 5 });
  });

  const fresh = (name: string) => new FileStorage({ basePath: path.join(work, name) });

  function runChild(...args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const p = spawn(process.execPath, [child, entry, ...args], { stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      p.on("error", reject);
      p.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`child exited with ${code}: ${stderr}`))));
    });
  }

  it("follows its own saves, replacements and deletes", async () => {
    const s = fresh("own");
    await s.workflows.save(record("a", "first"));
    await s.workflows.save(record("b", "second"));
    expect(await described(s)).toEqual(["a:first", "b:second"]);
    await s.workflows.save(record("a", "FIRST"));
    expect(await described(s)).toEqual(["a:FIRST", "b:second"]);
    await s.workflows.delete("b");
    expect(await described(s)).toEqual(["a:FIRST"]);
    await s.close();
  });

  it("follows another process's saves, same-size replacements and deletes", async () => {
    const s = fresh("other");
    const base = path.join(work, "other");
    await s.workflows.save(record("a", "one"));
    await s.workflows.save(record("b", "two"));
    expect(await described(s)).toEqual(["a:one", "b:two"]);
    await runChild(base, "save", "c", "three");
    await runChild(base, "save", "a", "uno"); // same length as "one": only the file's identity changes
    await runChild(base, "delete", "b");
    expect(await described(s)).toEqual(["a:uno", "c:three"]);
    await s.close();
  });

  it("follows a file edited in place by hand (no rename, same size), and one deleted by hand", async () => {
    const s = fresh("hand");
    const dir = path.join(work, "hand", "workflows");
    await s.workflows.save(record("a", "", "return 1;"));
    await s.workflows.save(record("b", "keep"));
    expect((await s.workflows.list()).find((r) => r.name === "a")?.source).toContain("return 1;");
    // Let the stamps age past the racy window, so only the watcher can notice the edit.
    await new Promise((r) => setTimeout(r, 300));
    expect((await s.workflows.list()).find((r) => r.name === "a")?.source).toContain("return 1;");
    const file = path.join(dir, "a.ts");
    const text = await readFile(file, "utf8");
    await writeFile(file, text.replace("return 1;", "return 2;")); // in place: same inode, same size
    await waitFor(async () => (await s.workflows.list()).find((r) => r.name === "a")?.source.includes("return 2;") === true, "the hand edit to show");
    await unlink(path.join(dir, "b.ts"));
    expect((await s.workflows.list()).map((r) => r.name)).toEqual(["a"]);
    await s.close();
  });

  it("a new process starts from the catalogue file, ignores a torn one, and rewrites it", async () => {
    const first = fresh("torn");
    const dir = path.join(work, "torn", "workflows");
    for (const n of ["a", "b", "c"]) await first.workflows.save(record(n, `about ${n}`));
    await new Promise((r) => setTimeout(r, 300)); // stamps older than the racy window are written to the catalogue
    await first.workflows.list();
    await first.close();
    const saved = JSON.parse(await readFile(path.join(dir, CATALOGUE_FILE), "utf8")) as { entries: Array<{ name: string }> };
    expect(saved.entries.map((e) => e.name).sort()).toEqual(["a", "b", "c"]);

    // Torn: half a file. The next process lists from the workflow files and writes a whole catalogue again.
    const whole = await readFile(path.join(dir, CATALOGUE_FILE), "utf8");
    await writeFile(path.join(dir, CATALOGUE_FILE), whole.slice(0, Math.floor(whole.length / 2)));
    const second = fresh("torn");
    expect(await described(second)).toEqual(["a:about a", "b:about b", "c:about c"]);
    await second.close();
    expect(JSON.parse(await readFile(path.join(dir, CATALOGUE_FILE), "utf8"))).toMatchObject({ version: 1 });

    // A catalogue entry whose file changed since (a different stamp) is not believed.
    const lying = JSON.parse(await readFile(path.join(dir, CATALOGUE_FILE), "utf8")) as { entries: Array<{ name: string; record: { description: string }; stamp: { mtimeMs: number } }> };
    for (const e of lying.entries) {
      e.record.description = "from the catalogue";
      if (e.name === "b") e.stamp.mtimeMs -= 1000;
    }
    await writeFile(path.join(dir, CATALOGUE_FILE), JSON.stringify(lying));
    const third = fresh("torn");
    // a and c: stamps match, so the catalogue is used (no file read); b: the file is read again.
    expect(await described(third)).toEqual(["a:from the catalogue", "b:about b", "c:from the catalogue"]);
    await third.close();
  });

  it("keeps what was derived from each source for the next process, and derives a changed file again", async () => {
    const first = fresh("derived");
    const dir = path.join(work, "derived", "workflows");
    for (const n of ["a", "b"]) await first.workflows.save(record(n, `about ${n}`));
    await new Promise((r) => setTimeout(r, 300)); // stamps older than the racy window are written to the catalogue
    expect((await new WorkflowLibrary(first.workflows).list()).map((w) => w.problem)).toEqual([undefined, undefined]);
    await first.close();
    type Saved = { entries: Array<{ name: string; derived?: { hasRun: boolean } }> };
    const saved = JSON.parse(await readFile(path.join(dir, CATALOGUE_FILE), "utf8")) as Saved;
    expect(saved.entries.map((e) => [e.name, e.derived?.hasRun]).sort()).toEqual([["a", true], ["b", true]]);

    // The catalogue now says neither exports run (stamps intact), and b's file is edited by hand to a syntax error.
    for (const e of saved.entries) e.derived!.hasRun = false;
    await writeFile(path.join(dir, CATALOGUE_FILE), JSON.stringify(saved));
    await writeFile(path.join(dir, "b.ts"), (await readFile(path.join(dir, "b.ts"), "utf8")).replace("return 1;", "return (;"));

    const second = fresh("derived");
    const [a, b] = await second.workflows.list();
    // Before any library asked: a's derivation came from the catalogue file; b's file changed, so nothing was kept for it.
    expect(second.workflows.derivedOf(a!)?.hasRun).toBe(false);
    expect(second.workflows.derivedOf(b!)).toBeUndefined();
    const problems = (await new WorkflowLibrary(second.workflows).list()).map((w) => `${w.name}: ${w.problem}`);
    expect(problems[0]).toBe("a: does not export a function named run"); // reused, not parsed again
    expect(problems[1]).toMatch(/^b: syntax error at line 1:/); // derived from the file as it is now
    expect(second.workflows.derivedOf(b!)?.syntaxError).not.toBeNull(); // and kept for the next process
    await second.close();
  });

  it("does not make its folder again when the store was removed before the catalogue file was written", async () => {
    const base = path.join(work, "removed");
    const storage = new FileStorage({ basePath: base });
    await storage.workflows.save(record("kept", "a workflow"));
    expect(await described(storage)).toEqual(["kept:a workflow"]); // the catalogue changed: a write is due
    await rm(base, { recursive: true, force: true, maxRetries: 5 });
    await storage.close(); // writes what is due at once
    await expect(stat(base)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("hands out records nobody can change for the next caller", async () => {
    const s = fresh("frozen");
    await s.workflows.save(record("a", "one"));
    const [a] = await s.workflows.list();
    expect(() => {
      (a as { description: string }).description = "changed";
    }).toThrow(TypeError);
    expect(await described(s)).toEqual(["a:one"]);
    await s.close();
  });
});
