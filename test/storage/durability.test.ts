/**
 * Durability of both backends with real processes (the storage code is transpiled on the fly and
 * run by `node` children, which rebuild their storage from a descriptor):
 *
 * - two processes saving 1,000 artifacts and 200 workflows each at the same moment lose nothing;
 * - a writer killed with SIGKILL at a random moment leaves every value whole: one of the versions
 *   written, described by that version's metadata;
 * - Redis going away mid-session gives clear StorageErrors, and the same RedisStorage works again
 *   once the server is back.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomInt } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storageFromDescriptor } from "../../src/storage/descriptor.js";
import type { ArtifactData, StorageBackend, StorageDescriptor } from "../../src/storage/protocol.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { deleteKeys, startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";
import { transpileTree } from "./transpile.js";

const ARTIFACTS_PER_PROCESS = 1000;
const WORKFLOWS_PER_PROCESS = 200;
const KILL_ROUNDS = 6;

/** Shared by the children (as source text) and the parent (evaluated below), so both agree exactly. */
const VALUES = `
function artifactValue(id, i) {
  if (i % 3 === 0) return \`text from \${id} #\${i} ✓ \${"x".repeat(200)}\`;
  if (i % 3 === 1) return Uint8Array.from({ length: 300 }, (_, j) => (i * 31 + j * 7 + id.length) % 256);
  return { id, i, tags: [id, String(i)], nested: { even: i % 2 === 0 } };
}
function workflowRecord(id, i) {
  return {
    name: \`wf_\${id}_\${i}\`,
    source: \`/** Workflow \${i} of \${id}. */\\nexport async function run({ n }: { n: number }) {\\n  return n + \${i};\\n}\\n\`,
    description: \`Workflow \${i} of \${id}.\`,
    params: [{ name: "n", type: "number", required: true }],
    createdAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-01T00:00:00.000Z",
    author: id,
  };
}
/** Three versions of each big value, of three kinds, each around a megabyte. */
function bigVersion(name, v) {
  const seed = name.length * 7 + v;
  if (v === 0) return \`version 0 of \${name} \` + "0123456789abcdef".repeat(65536);
  if (v === 1) return Uint8Array.from({ length: 1_500_000 }, (_, j) => (j * 13 + seed) % 256);
  return { version: 2, name, rows: Array.from({ length: 20000 }, (_, j) => ({ j, label: \`row \${j} of \${name}\` })) };
}
function bigSource(v) {
  return \`/** v\${v} */\\nexport async function run() {\\n  return "\${String(v).repeat(200000)}";\\n}\\n\`;
}
`;

const WRITERS_SCRIPT = `
import { existsSync, writeFileSync } from "node:fs";
const [entry, descriptor, id, artifacts, workflows, readyFile, goFile] = process.argv.slice(2);
const { storageFromDescriptor } = await import(entry);
const storage = await storageFromDescriptor(JSON.parse(descriptor));
${VALUES}
writeFileSync(readyFile, "");
const deadline = Date.now() + 30_000; // never outlive a test that gave up on us
while (!existsSync(goFile)) {
  if (Date.now() > deadline) process.exit(2);
  await new Promise((r) => setTimeout(r, 2));
}
// Artifacts and workflows interleaved, so both kinds of write overlap with the other process's.
const jobs = [];
const every = Math.max(1, Math.floor(Number(artifacts) / Math.max(1, Number(workflows))));
let w = 0;
for (let i = 0; i < Number(artifacts); i++) {
  jobs.push(() => storage.artifacts.save(\`shared/\${i % 10}/\${id}-\${i}\`, artifactValue(id, i), { description: \`\${id} #\${i}\`, metadata: { id, i } }));
  if (i % every === 0 && w < Number(workflows)) {
    const k = w++;
    jobs.push(() => storage.workflows.save(workflowRecord(id, k)));
  }
}
while (w < Number(workflows)) {
  const k = w++;
  jobs.push(() => storage.workflows.save(workflowRecord(id, k)));
}
let next = 0;
async function worker() {
  while (next < jobs.length) await jobs[next++]();
}
await Promise.all(Array.from({ length: 24 }, worker));
await storage.close();
`;

const KILLED_WRITER_SCRIPT = `
import { writeFileSync } from "node:fs";
const [entry, descriptor, readyFile, round] = process.argv.slice(2);
const { storageFromDescriptor } = await import(entry);
const storage = await storageFromDescriptor(JSON.parse(descriptor));
${VALUES}
const names = ["big/a", "big/b", "big/c"];
for (let k = Number(round); ; k++) {
  const v = k % 3;
  for (const name of names) {
    await storage.artifacts.save(name, bigVersion(name, v), { description: \`v\${v}\`, metadata: { version: v } });
  }
  await storage.workflows.save({ name: "big_wf", source: bigSource(v), description: \`v\${v}\`, descriptionExplicit: true, createdAt: "t", updatedAt: "t" });
  if (k === Number(round)) writeFileSync(readyFile, "");
}
`;

const { artifactValue, workflowRecord, bigVersion, bigSource } = new Function(
  `${VALUES}; return { artifactValue, workflowRecord, bigVersion, bigSource };`,
)() as {
  artifactValue(id: string, i: number): ArtifactData;
  workflowRecord(id: string, i: number): { name: string; source: string; description: string };
  bigVersion(name: string, v: number): ArtifactData;
  bigSource(v: number): string;
};

/** Hash of the bytes a value is stored as (the codec's encoding), so a kind change cannot hide a torn payload. */
function storedHash(value: ArtifactData | undefined): string {
  const h = createHash("sha256");
  if (typeof value === "string") h.update(Buffer.from(value, "utf8"));
  else if (value instanceof Uint8Array) h.update(value);
  else h.update(Buffer.from(JSON.stringify(value, null, 2), "utf8"));
  return h.digest("hex");
}

function kindOf(value: ArtifactData): string {
  return typeof value === "string" ? "text" : value instanceof Uint8Array ? "bytes" : "json";
}

const running = new Set<ChildProcess>();

function spawnChild(script: string, args: string[]): { child: ChildProcess; exited: Promise<{ code: number | null; signal: string | null; stderr: string }> } {
  const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  running.add(child);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      running.delete(child);
      resolve({ code, signal, stderr });
    });
  });
  return { child, exited };
}

async function waitFor(file: string, exited: Promise<{ code: number | null; stderr: string }>): Promise<void> {
  let done = false;
  const failed = exited.then((r) => {
    done = true;
    throw new Error(`child exited before it was ready (${r.code}): ${r.stderr}`);
  });
  failed.catch(() => undefined);
  while (!existsSync(file)) {
    if (done) await failed;
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface Backend {
  name: string;
  /** A fresh, empty store and how to remove it. */
  create(): Promise<{ descriptor: StorageDescriptor; cleanup(): Promise<void> }>;
}

let work: string;
let entry: string;
let redis: RedisServer;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "tcm-durability-"));
  redis = await startRedis();
  entry = pathToFileURL(await transpileTree("src/storage/index.ts", path.join(work, "code"))).href;
  await writeFile(path.join(work, "writers.mjs"), WRITERS_SCRIPT);
  await writeFile(path.join(work, "killed.mjs"), KILLED_WRITER_SCRIPT);
});

afterAll(async () => {
  // If a test failed early a child may still be writing: stop it before cleaning up.
  for (const child of running) child.kill("SIGKILL");
  await redis?.close();
  await rm(work, { recursive: true, force: true });
});

const BACKENDS: Backend[] = [
  {
    name: "FileStorage",
    create: async () => {
      const basePath = await mkdtemp(path.join(work, "base-"));
      return { descriptor: { type: "file", basePath }, cleanup: () => rm(basePath, { recursive: true, force: true }) };
    },
  },
  {
    name: "RedisStorage",
    create: async () => {
      const prefix = uniquePrefix("dur");
      return { descriptor: { type: "redis", url: redis.url, prefix }, cleanup: async () => void (await deleteKeys(redis.url, `${prefix}:`)) };
    },
  },
];

describe.each(BACKENDS)("$name durability", (backend) => {
  it("keeps all 2,000 artifacts and 400 workflows saved at once by two processes, with the right contents", { timeout: 120_000 }, async () => {
    const { descriptor, cleanup } = await backend.create();
    let storage: StorageBackend | undefined;
    try {
      const go = path.join(work, `go-${backend.name}`);
      const ids = ["p1", "proc2"];
      const children = ids.map((id) =>
        spawnChild(path.join(work, "writers.mjs"), [
          entry,
          JSON.stringify(descriptor),
          id,
          String(ARTIFACTS_PER_PROCESS),
          String(WORKFLOWS_PER_PROCESS),
          path.join(work, `ready-${backend.name}-${id}`),
          go,
        ]),
      );
      await Promise.all(children.map((c, i) => waitFor(path.join(work, `ready-${backend.name}-${ids[i]}`), c.exited)));
      await writeFile(go, ""); // both start at once, so their writes really overlap
      for (const { exited } of children) {
        const r = await exited;
        expect(r, r.stderr).toMatchObject({ code: 0 });
      }

      storage = await storageFromDescriptor(descriptor);
      const list = await storage.artifacts.list();
      expect(list).toHaveLength(ids.length * ARTIFACTS_PER_PROCESS);
      const expected = new Map<string, { hash: string; kind: string; id: string; i: number }>();
      for (const id of ids) {
        for (let i = 0; i < ARTIFACTS_PER_PROCESS; i++) {
          const v = artifactValue(id, i);
          expected.set(`shared/${i % 10}/${id}-${i}`, { hash: storedHash(v), kind: kindOf(v), id, i });
        }
      }
      expect(list.map((i) => i.name).sort()).toEqual([...expected.keys()].sort());
      for (const info of list) {
        const want = expected.get(info.name)!;
        expect(info).toMatchObject({ kind: want.kind, description: `${want.id} #${want.i}`, metadata: { id: want.id, i: want.i } });
        const value = await storage.artifacts.load(info.name);
        expect(kindOf(value!)).toBe(want.kind);
        expect(storedHash(value)).toBe(want.hash);
      }

      const workflows = await storage.workflows.list();
      expect(workflows).toHaveLength(ids.length * WORKFLOWS_PER_PROCESS);
      for (const id of ids) {
        for (let i = 0; i < WORKFLOWS_PER_PROCESS; i++) {
          expect(workflows).toContainEqual(expect.objectContaining(workflowRecord(id, i)));
        }
      }
    } finally {
      await storage?.close();
      await cleanup();
    }
  });

  it(`a writer killed with SIGKILL mid-write leaves each value whole and described by its own metadata (${KILL_ROUNDS} kills)`, { timeout: 120_000 }, async () => {
    const { descriptor, cleanup } = await backend.create();
    const storage = await storageFromDescriptor(descriptor);
    const versions = new Map<string, Map<string, { v: number; kind: string }>>();
    for (const name of ["big/a", "big/b", "big/c"]) {
      versions.set(name, new Map([0, 1, 2].map((v) => [storedHash(bigVersion(name, v)), { v, kind: kindOf(bigVersion(name, v)) }])));
    }
    const sources = new Map([0, 1, 2].map((v) => [bigSource(v), v]));
    const mismatches: string[][] = [];
    try {
      for (let round = 0; round < KILL_ROUNDS; round++) {
        const ready = path.join(work, `killed-${backend.name}-${round}`);
        const { child, exited } = spawnChild(path.join(work, "killed.mjs"), [entry, JSON.stringify(descriptor), ready, String(round)]);
        await waitFor(ready, exited);
        await new Promise((r) => setTimeout(r, randomInt(0, 250)));
        child.kill("SIGKILL");
        expect((await exited).signal).toBe("SIGKILL");

        const roundMismatches: string[] = [];
        expect((await storage.artifacts.list()).map((i) => i.name)).toEqual(["big/a", "big/b", "big/c"]);
        for (const [name, known] of versions) {
          const value = await storage.artifacts.load(name);
          const info = await storage.artifacts.get(name);
          const version = known.get(storedHash(value));
          // Never torn: the bytes are exactly one of the versions written.
          expect(version, `round ${round}: ${name} holds bytes that were never written`).toBeDefined();
          expect(info?.size).toBe(Buffer.byteLength(typeof value === "string" ? value : value instanceof Uint8Array ? value : JSON.stringify(value, null, 2)));
          if (info?.metadata["version"] !== version!.v || info?.description !== `v${version!.v}` || info?.kind !== version!.kind) {
            roundMismatches.push(`${name}: bytes of v${version!.v}, metadata ${JSON.stringify(info?.metadata)} kind ${info?.kind}`);
          }
        }
        const wf = await storage.workflows.get("big_wf");
        const sourceVersion = wf ? sources.get(wf.source) : undefined;
        expect(sourceVersion, `round ${round}: big_wf holds a source that was never written`).toBeDefined();
        if (wf!.description !== `v${sourceVersion}`) roundMismatches.push(`big_wf: source v${sourceVersion}, description ${wf!.description}`);
        mismatches.push(roundMismatches);
      }
    } finally {
      await storage.close();
      await cleanup();
    }
    // Redis writes payload and metadata in one script; FileStorage writes an intent sidecar first,
    // so a reader after a kill between its renames still sees the new value whole. Neither may mix.
    expect(mismatches.flat()).toEqual([]);
  });
});

describe("RedisStorage across a server restart", () => {
  it("fails with a clear StorageError while the server is down and works again afterwards, same instance", async () => {
    const server = await startRedis();
    const storage = new RedisStorage({ url: server.url, prefix: uniquePrefix("restart") });
    try {
      await storage.artifacts.save("before", "1", { metadata: { a: 1 } });
      await storage.workflows.save({ name: "wf", source: "x", description: "", createdAt: "t", updatedAt: "t" });
      await server.stop();

      const down: Array<[string, () => Promise<unknown>]> = [
        ["artifacts.save", () => storage.artifacts.save("during", "2")],
        ["artifacts.load", () => storage.artifacts.load("before")],
        ["artifacts.list", () => storage.artifacts.list()],
        ["workflows.get", () => storage.workflows.get("wf")],
        ["workflows.list", () => storage.workflows.list()],
      ];
      for (const [label, op] of down) {
        const err = (await op().catch((e: unknown) => e)) as Error;
        expect(err, label).toBeInstanceOf(Error);
        expect(err.name, label).toBe("StorageError");
        expect(err.message, label).toContain(`127.0.0.1:${server.port}`);
        expect(err.message, label).toMatch(/ECONNREFUSED|connection/i);
      }

      await server.restart(); // a fresh, empty server (no persistence) on the same port
      expect(await storage.artifacts.list()).toEqual([]);
      const info = await storage.artifacts.save("after", Uint8Array.from([1, 2, 3]), { metadata: { b: 2 } });
      expect(info).toMatchObject({ kind: "bytes", size: 3, metadata: { b: 2 } });
      expect(Array.from((await storage.artifacts.load("after")) as Uint8Array)).toEqual([1, 2, 3]);
      expect(await storage.artifacts.delete("after")).toBe(true);
      await storage.workflows.save({ name: "wf2", source: "y", description: "", createdAt: "t", updatedAt: "t" });
      expect((await storage.workflows.list()).map((r) => r.name)).toEqual(["wf2"]);
    } finally {
      await storage.close();
      await server.close();
    }
  });
});
