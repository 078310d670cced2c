/**
 * Two real processes writing into one FileStorage base at the same time. Each child runs the
 * storage code under test (transpiled on the fly, no build step), saves 300 distinct artifacts into
 * shared folders, and meanwhile churns artifacts in folders that keep being emptied and removed.
 * Nothing may be lost, mixed up or left half-written.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileStorage } from "../../src/storage/file/storage.js";
import type { ArtifactData } from "../../src/storage/protocol.js";
import { transpileTree } from "./transpile.js";

const PER_PROCESS = 300;

// The child derives each value from (id, i) with the same formula as `expectedValue` below.
const CHILD_SCRIPT = `
import { existsSync, writeFileSync } from "node:fs";
const [entry, base, id, count, readyFile, goFile] = process.argv.slice(2);
const { FileStorage } = await import(entry);
const storage = new FileStorage({ basePath: base });

function value(id, i) {
  if (i % 3 === 0) return \`text from \${id} #\${i} ✓ ${"x".repeat(200)}\`;
  if (i % 3 === 1) return Uint8Array.from({ length: 300 }, (_, j) => (i * 31 + j * 7 + id.length) % 256);
  return { id, i, tags: [id, String(i)], nested: { even: i % 2 === 0 } };
}

writeFileSync(readyFile, "");
const deadline = Date.now() + 20_000; // never outlive a test that gave up on us
while (!existsSync(goFile)) {
  if (Date.now() > deadline) process.exit(2);
  await new Promise((r) => setTimeout(r, 2));
}

let next = 0;
async function worker() {
  while (next < Number(count)) {
    const i = next++;
    await storage.artifacts.save(\`shared/\${i % 10}/\${id}-\${i}\`, value(id, i), { description: \`\${id} #\${i}\`, metadata: { id, i } });
    // Churn: a folder that both processes keep filling and emptying, so one process's delete
    // removes folders the other is about to write into.
    const churn = \`churn/\${i % 3}/\${id}-\${i}\`;
    await storage.artifacts.save(churn, "short-lived");
    await storage.artifacts.delete(churn);
  }
}
await Promise.all(Array.from({ length: 24 }, worker));
`;

function expectedValue(id: string, i: number): ArtifactData {
  if (i % 3 === 0) return `text from ${id} #${i} ✓ ${"x".repeat(200)}`;
  if (i % 3 === 1) return Uint8Array.from({ length: 300 }, (_, j) => (i * 31 + j * 7 + id.length) % 256);
  return { id, i, tags: [id, String(i)], nested: { even: i % 2 === 0 } };
}

/** A hash of a value's content that is the same for equal strings, byte arrays or JSON values. */
function contentHash(value: ArtifactData | undefined): string {
  const h = createHash("sha256");
  if (typeof value === "string") h.update(`text:${value}`);
  else if (value instanceof Uint8Array) h.update("bytes:").update(value);
  else h.update(`json:${JSON.stringify(value)}`);
  return h.digest("hex");
}

const running = new Set<ChildProcess>();

function runChild(script: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    running.add(child);
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      running.delete(child);
      if (code === 0) resolve();
      else reject(new Error(`child exited with ${code ?? signal}: ${stderr}`));
    });
  });
}

async function waitFor(file: string): Promise<void> {
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 5));
}

describe("FileStorage across two processes", () => {
  let work: string;
  let entry: string;

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), "tcm-file-concurrency-"));
    entry = await transpileTree("src/storage/file/storage.ts", path.join(work, "code"));
    await writeFile(path.join(work, "child.mjs"), CHILD_SCRIPT);
  });

  afterAll(async () => {
    // If the test failed early, the other child may still be writing: stop it before cleaning up.
    for (const child of running) child.kill("SIGKILL");
    await rm(work, { recursive: true, force: true, maxRetries: 5 });
  });

  it("keeps all 600 artifacts saved concurrently by two processes, with the right contents", async () => {
    const base = path.join(work, "base");
    const go = path.join(work, "go");
    const ids = ["p1", "proc2"];
    const children = ids.map((id) =>
      runChild(path.join(work, "child.mjs"), [pathToFileURL(entry).href, base, id, String(PER_PROCESS), path.join(work, `ready-${id}`), go]),
    );
    const finished = Promise.all(children);
    // Start both at once, so their writes really overlap (a child that dies early fails the race).
    await Promise.race([Promise.all(ids.map((id) => waitFor(path.join(work, `ready-${id}`)))), finished]);
    await writeFile(go, "");
    await finished;

    const storage = new FileStorage({ basePath: base });
    const list = await storage.artifacts.list();
    expect(list.filter((i) => i.name.startsWith("churn/"))).toEqual([]);
    expect(list).toHaveLength(ids.length * PER_PROCESS);

    const expected = new Map<string, { hash: string; kind: string; id: string; i: number }>();
    for (const id of ids) {
      for (let i = 0; i < PER_PROCESS; i++) {
        const v = expectedValue(id, i);
        const kind = typeof v === "string" ? "text" : v instanceof Uint8Array ? "bytes" : "json";
        expected.set(`shared/${i % 10}/${id}-${i}`, { hash: contentHash(v), kind, id, i });
      }
    }
    expect(list.map((i) => i.name).sort()).toEqual([...expected.keys()].sort());
    for (const info of list) {
      const want = expected.get(info.name)!;
      expect(info).toMatchObject({ kind: want.kind, description: `${want.id} #${want.i}`, metadata: { id: want.id, i: want.i } });
      expect(contentHash(await storage.artifacts.load(info.name))).toBe(want.hash);
    }
  });
});
