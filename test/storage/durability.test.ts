/**
 * Durability of both backends with real processes (the storage code is transpiled on the fly and
 * run by `node` children, which rebuild their storage from a descriptor):
 *
 * - two processes saving 1,000 artifacts and 200 workflows each at the same moment lose nothing;
 * - a writer killed with SIGKILL at a random moment leaves every value whole: one of the versions
 *   written, described by that version's metadata;
 * - Redis going away mid-session gives clear StorageErrors, and the same RedisStorage works again
 *   once the server is back;
 * - (issue 18) writer and reader processes on the same names never see a mixed record or a
 *   wrong-kind decode; a FileStorage writer SIGKILLed at each exact point of a save leaves the old or
 *   the new record whole and a temp file the next open sweeps; a full disk (a 1 MiB tmpfs when we
 *   may mount one, else an injected ENOSPC) fails the save cleanly and the next save succeeds; a
 *   SIGSTOPped Redis never turns a save reported failed into a write applied later.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash, randomInt } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storageFromDescriptor } from "../../src/storage/descriptor.js";
import { FileStorage } from "../../src/storage/file/storage.js";
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

/**
 * Payloads that say what they are, so a reader can tell a wrong-kind decode or a mix of two saves:
 * text starts "T|", bytes start 0xff 0x00 "B|" (never valid UTF-8), JSON has k: "J"; the metadata
 * repeats kind, size and who saved it, and the workflow's description, params and provenance all
 * name the save its source comes from.
 */
const MIXED = `
const KINDS = ["text", "bytes", "json"];
function mixedPayload(kind, id, seq) {
  const pad = (seq % 4) * 16000 + 10;
  if (kind === "text") return \`T|\${id}|\${seq}|\` + "t".repeat(pad);
  if (kind === "bytes") {
    const head = new TextEncoder().encode(\`B|\${id}|\${seq}|\`);
    const out = new Uint8Array(2 + head.length + pad);
    out[0] = 0xff; out[1] = 0; out.set(head, 2); out.fill(0xfe, 2 + head.length);
    return out;
  }
  return { k: "J", id, seq, pad: "j".repeat(pad) };
}
function storedSize(value) {
  if (typeof value === "string") return new TextEncoder().encode(value).length;
  if (value instanceof Uint8Array) return value.length;
  return new TextEncoder().encode(JSON.stringify(value, null, 2)).length;
}
function mixedOptions(kind, id, seq) {
  return { description: \`\${id}#\${seq}\`, metadata: { id, seq, kind, size: storedSize(mixedPayload(kind, id, seq)) } };
}
function mixedWorkflow(id, seq) {
  const tag = \`\${id}#\${seq}\`;
  return {
    name: "mixed_wf",
    source: \`/** \${tag} */\\nexport async function run() { return "\${tag}"; }\\n// \${"w".repeat((seq % 4) * 16000)}\\n\`,
    description: tag,
    descriptionExplicit: true,
    params: [{ name: \`p_\${id}_\${seq}\`, type: "string", required: false }],
    createdAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-01T00:00:00.000Z",
    provenance: { trust: seq % 2 ? "trusted" : "untrusted", executor: id, savedAt: String(seq) },
  };
}
/** Problems with one loaded value (a wrong-kind decode), or null. */
function checkValue(v) {
  if (v === undefined) return null;
  if (typeof v === "string") return v.startsWith("T|") ? null : \`string that is not a text payload: \${JSON.stringify(v.slice(0, 30))}\`;
  if (v instanceof Uint8Array) return v[0] === 0xff && v[1] === 0 && v[2] === 66 && v[3] === 124 ? null : \`bytes that are not a bytes payload: \${Array.from(v.slice(0, 8))}\`;
  return v && v.k === "J" ? null : \`JSON that is not a JSON payload: \${JSON.stringify(v).slice(0, 40)}\`;
}
/** Problems with one info (kind, size, description from different saves), or null. */
function checkInfo(info) {
  if (!info) return null;
  const m = info.metadata;
  if (info.kind !== m.kind || info.size !== m.size || info.description !== \`\${m.id}#\${m.seq}\`) {
    return \`info mixes saves: kind \${info.kind} size \${info.size} description \${info.description} metadata \${JSON.stringify(m)}\`;
  }
  return null;
}
function checkWorkflow(wf) {
  if (!wf) return null;
  const tag = wf.description;
  const [id, seq] = tag.split("#");
  const ok = wf.source.includes(\`return "\${tag}"\`) && wf.params?.[0]?.name === \`p_\${id}_\${seq}\` &&
    wf.provenance?.executor === id && wf.provenance?.savedAt === seq;
  return ok ? null : \`workflow mixes saves: description \${tag}, source \${wf.source.slice(0, 40)}, params \${JSON.stringify(wf.params)}, provenance \${JSON.stringify(wf.provenance)}\`;
}
`;

const MIXED_SCRIPT = `
import { existsSync, writeFileSync } from "node:fs";
const [entry, descriptor, id, mode, goFile, stopFile, readyFile] = process.argv.slice(2);
const { storageFromDescriptor } = await import(entry);
const storage = await storageFromDescriptor(JSON.parse(descriptor));
${MIXED}
const names = ["m/0", "m/1", "m/2"];
writeFileSync(readyFile, "");
while (!existsSync(goFile)) await new Promise((r) => setTimeout(r, 2));
const problems = [];
let count = 0;
const deadline = Date.now() + 60_000;
while (!existsSync(stopFile) && Date.now() < deadline) {
  if (mode === "writer") {
    const kind = KINDS[(count + id.length) % 3];
    await storage.artifacts.save(names[count % 3], mixedPayload(kind, id, count), mixedOptions(kind, id, count));
    if (count % 3 === 0) await storage.workflows.save(mixedWorkflow(id, count));
  } else {
    for (const name of names) {
      const p1 = checkValue(await storage.artifacts.load(name));
      const p2 = checkInfo(await storage.artifacts.get(name));
      if (p1) problems.push(p1);
      if (p2) problems.push(p2);
    }
    for (const info of await storage.artifacts.list()) {
      const p = checkInfo(info);
      if (p) problems.push(p);
    }
    const p3 = checkWorkflow(await storage.workflows.get("mixed_wf"));
    if (p3) problems.push(p3);
    for (const wf of await storage.workflows.list()) {
      const p = checkWorkflow(wf);
      if (p) problems.push(p);
    }
  }
  count++;
}
process.stdout.write(JSON.stringify({ count, problems: problems.slice(0, 20), problemCount: problems.length }));
await storage.close();
`;

/** Saves v1, then dies by SIGKILL at one exact point of saving v2. */
const KILL_POINT_SCRIPT = `
const [entry, faults, descriptor, point, target] = process.argv.slice(2);
const { storageFromDescriptor } = await import(entry);
const { setFaultHook } = await import(faults);
const storage = await storageFromDescriptor(JSON.parse(descriptor));
${MIXED}
await storage.artifacts.save("k/a", mixedPayload("text", "v1", 1), mixedOptions("text", "v1", 1));
await storage.workflows.save(mixedWorkflow("v1", 1));
// The record's own file (an untrusted workflow save first writes its sticky provenance copy).
setFaultHook((p, file) => { if (p === point && !file.includes("/.provenance/")) process.kill(process.pid, "SIGKILL"); });
if (target === "artifact") await storage.artifacts.save("k/a", mixedPayload("json", "v2", 2), mixedOptions("json", "v2", 2));
else await storage.workflows.save(mixedWorkflow("v2", 2));
process.exit(3); // never reached: the hook kills the process
`;

/** Saves `v<i>` to one artifact with short timeouts until told to stop; prints each save's outcome. */
const OUTCOMES_SCRIPT = `
import { existsSync } from "node:fs";
import { writeFileSync } from "node:fs";
const [entry, url, prefix, stopFile, readyFile] = process.argv.slice(2);
const { RedisStorage } = await import(entry);
const storage = new RedisStorage({ url, prefix, commandTimeoutMs: 200, connectTimeoutMs: 200 });
const outcomes = [];
for (let i = 0; !existsSync(stopFile) && i < 100_000; i++) {
  try {
    await storage.artifacts.save("g", \`v\${i}\`);
    outcomes.push("ok");
    if (i === 0) writeFileSync(readyFile, "");
  } catch (err) {
    outcomes.push(err.code === "OUTCOME_UNKNOWN" ? "unknown" : "failed");
  }
  await new Promise((r) => setTimeout(r, 10));
}
process.stdout.write(JSON.stringify(outcomes));
process.exit(0); // without close(): a late copy of an unknown write is not fenced by a next call
`;

const { checkValue, checkInfo, checkWorkflow, mixedPayload } = new Function(`${MIXED}; return { checkValue, checkInfo, checkWorkflow, mixedPayload };`)() as {
  checkValue(v: ArtifactData | undefined): string | null;
  checkInfo(i: unknown): string | null;
  checkWorkflow(w: unknown): string | null;
  mixedPayload(kind: string, id: string, seq: number): ArtifactData;
};

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

interface Exit {
  code: number | null;
  signal: string | null;
  stderr: string;
  stdout: string;
}

function spawnChild(script: string, args: string[]): { child: ChildProcess; exited: Promise<Exit> } {
  const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  let stderr = "";
  let stdout = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<Exit>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      running.delete(child);
      resolve({ code, signal, stderr, stdout });
    });
  });
  return { child, exited };
}

/** Every temp file left anywhere under `dir` (ours are `.<pid>-<hex>.tmp`). */
async function tempFilesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).filter((e) => /\.tmp$/.test(e) && !/(^|\/)\.tmp$/.test(e));
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
let faults: string;
let redis: RedisServer;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "tcm-durability-"));
  redis = await startRedis();
  entry = pathToFileURL(await transpileTree("src/storage/index.ts", path.join(work, "code"))).href;
  await writeFile(path.join(work, "writers.mjs"), WRITERS_SCRIPT);
  await writeFile(path.join(work, "killed.mjs"), KILLED_WRITER_SCRIPT);
  await writeFile(path.join(work, "mixed.mjs"), MIXED_SCRIPT);
  await writeFile(path.join(work, "kill-point.mjs"), KILL_POINT_SCRIPT);
  await writeFile(path.join(work, "outcomes.mjs"), OUTCOMES_SCRIPT);
  faults = new URL("./faults.js", entry).href;
});

afterAll(async () => {
  // If a test failed early a child may still be writing: stop it before cleaning up.
  for (const child of running) child.kill("SIGKILL");
  await redis?.close();
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

const BACKENDS: Backend[] = [
  {
    name: "FileStorage",
    create: async () => {
      const basePath = await mkdtemp(path.join(work, "base-"));
      return { descriptor: { type: "file", basePath }, cleanup: () => rm(basePath, { recursive: true, force: true, maxRetries: 5 }) };
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

describe.each(BACKENDS)("$name: writers and readers on the same names", (backend) => {
  it("2 writer and 2 reader processes: every read is exactly one save, decoded as its kind, with that save's metadata", { timeout: 120_000 }, async () => {
    const { descriptor, cleanup } = await backend.create();
    try {
      const go = path.join(work, `mixed-go-${backend.name}`);
      const stop = path.join(work, `mixed-stop-${backend.name}`);
      const roles: Array<[string, string]> = [["w1", "writer"], ["writer2", "writer"], ["r1", "reader"], ["r2", "reader"]];
      const ready = (id: string): string => path.join(work, `mixed-ready-${backend.name}-${id}`);
      const children = roles.map(([id, mode]) => spawnChild(path.join(work, "mixed.mjs"), [entry, JSON.stringify(descriptor), id, mode, go, stop, ready(id)]));
      // All four start together (module loading on a busy machine takes seconds), then run 4 s.
      await Promise.all(children.map((c, i) => waitFor(ready(roles[i]![0]), c.exited)));
      await writeFile(go, "");
      await new Promise((r) => setTimeout(r, 4_000));
      await writeFile(stop, "");
      const results = await Promise.all(children.map((c) => c.exited));
      const reports = results.map((r, i) => {
        expect(r, `${roles[i]![0]}: ${r.stderr}`).toMatchObject({ code: 0 });
        return JSON.parse(r.stdout) as { count: number; problems: string[]; problemCount: number };
      });
      // Both roles really ran (a reader that only saw "nothing saved yet" proves nothing).
      for (const [i, rep] of reports.entries()) expect(rep.count, roles[i]![0]).toBeGreaterThan(3);
      expect(reports.flatMap((r) => r.problems)).toEqual([]);
      expect(reports.reduce((a, r) => a + r.problemCount, 0)).toBe(0);
      // Zero leftovers: nothing half-written stays behind a clean run.
      if (descriptor.type === "file") expect(await tempFilesUnder(descriptor.basePath)).toEqual([]);
    } finally {
      await cleanup();
    }
  });
});

describe("FileStorage: SIGKILL at each exact point of a save", () => {
  const POINTS = ["temp-partial", "temp-written", "committed"] as const;
  it.each(POINTS.flatMap((p) => (["artifact", "workflow"] as const).map((t) => [p, t] as const)))(
    "killed at %s of a %s save: the old or new record whole, and the leftover swept on the next open",
    { timeout: 60_000 },
    async (point, target) => {
      const basePath = await mkdtemp(path.join(work, "kill-point-"));
      try {
        const descriptor: StorageDescriptor = { type: "file", basePath };
        const { exited } = spawnChild(path.join(work, "kill-point.mjs"), [entry, faults, JSON.stringify(descriptor), point, target]);
        const r = await exited;
        expect(r.signal, r.stderr).toBe("SIGKILL");
        const storage = new FileStorage({ basePath, tempMaxAgeMs: 0 });
        const swept = await storage.sweepDone();
        // Before the rename the killed save left its temp file (now swept); after it, nothing.
        expect(swept).toBe(point === "committed" ? 0 : 1);
        expect(await tempFilesUnder(basePath)).toEqual([]);
        const newer = point === "committed";
        const value = await storage.artifacts.load("k/a");
        const info = await storage.artifacts.get("k/a");
        const wf = await storage.workflows.get("mixed_wf");
        expect([checkValue(value), checkInfo(info), checkWorkflow(wf)]).toEqual([null, null, null]);
        expect(value).toEqual(mixedPayload(target === "artifact" && newer ? "json" : "text", target === "artifact" && newer ? "v2" : "v1", target === "artifact" && newer ? 2 : 1));
        expect(wf?.description).toBe(target === "workflow" && newer ? "v2#2" : "v1#1");
        await storage.artifacts.save("k/a", "next save works");
        expect(await storage.artifacts.load("k/a")).toBe("next save works");
        await storage.close();
      } finally {
        await rm(basePath, { recursive: true, force: true, maxRetries: 5 });
      }
    },
  );
});

describe("FileStorage on a full disk", () => {
  it("ENOSPC fails the save, leaves nothing behind, and the next save succeeds once there is room", { timeout: 60_000 }, async () => {
    const mnt = path.join(work, "tmpfs");
    await mkdir(mnt, { recursive: true });
    let mounted = false;
    try {
      try {
        execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt], { stdio: "ignore" });
        mounted = true;
      } catch {
        mounted = false; // not root (or no mount permission): the injected-error test in file.test.ts covers this
      }
      const { setFaultHook } = await import("../../src/storage/faults.js");
      if (!mounted) {
        // Same behaviour, with the disk-full error injected halfway through the write.
        let fill = 0;
        setFaultHook((p) => {
          if (p === "temp-partial" && fill++ === 1) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
        });
      }
      try {
        const storage = new FileStorage({ basePath: mnt });
        await storage.artifacts.save("a", new Uint8Array(450 * 1024).fill(1), { description: "first" });
        const err = (await storage.artifacts.save("b", new Uint8Array(700 * 1024).fill(2)).catch((e: unknown) => e)) as Error;
        expect(err).toMatchObject({ name: "StorageError" });
        expect(err.message).toMatch(/ENOSPC/);
        expect(await tempFilesUnder(mnt)).toEqual([]);
        expect(await storage.artifacts.exists("b")).toBe(false);
        expect(((await storage.artifacts.load("a")) as Uint8Array).byteLength).toBe(450 * 1024);
        // Overwriting a with something too big fails the same way and keeps the old a.
        if (mounted) {
          await expect(storage.artifacts.save("a", new Uint8Array(700 * 1024))).rejects.toMatchObject({ name: "StorageError" });
          expect(await storage.artifacts.get("a")).toMatchObject({ description: "first", size: 450 * 1024 });
          expect(await tempFilesUnder(mnt)).toEqual([]);
          // A writer SIGKILLed halfway leaves a partial temp file that fills the disk: the next open sweeps it.
          const { exited } = spawnChild(path.join(work, "kill-point.mjs"), [entry, faults, JSON.stringify({ type: "file", basePath: mnt }), "temp-partial", "artifact"]);
          expect((await exited).signal).toBe("SIGKILL");
        }
        expect(await storage.artifacts.delete("a")).toBe(true);
        const reopened = new FileStorage({ basePath: mnt, tempMaxAgeMs: 0 });
        await reopened.sweepDone();
        expect(await tempFilesUnder(mnt)).toEqual([]);
        await reopened.artifacts.save("b", new Uint8Array(700 * 1024).fill(2));
        expect(((await reopened.artifacts.load("b")) as Uint8Array).byteLength).toBe(700 * 1024);
      } finally {
        setFaultHook(undefined);
      }
    } finally {
      if (mounted) execFileSync("umount", [mnt], { stdio: "ignore" });
    }
  });
});

describe("RedisStorage with a SIGSTOPped server: no ghost writes", () => {
  it("a save reported failed is never applied later; one reported OUTCOME_UNKNOWN is the only kind that may be", { timeout: 60_000 }, async () => {
    const server = await startRedis();
    const prefix = uniquePrefix("ghost");
    const stop = path.join(work, "ghost-stop");
    try {
      const ready = path.join(work, "ghost-ready");
      const { exited } = spawnChild(path.join(work, "outcomes.mjs"), [entry, server.url, prefix, stop, ready]);
      await waitFor(ready, exited);
      await new Promise((r) => setTimeout(r, 200));
      server.pause();
      await new Promise((r) => setTimeout(r, 1_500));
      await writeFile(stop, "");
      const r = await exited;
      expect(r, r.stderr).toMatchObject({ code: 0 });
      const outcomes = JSON.parse(r.stdout) as Array<"ok" | "unknown" | "failed">;
      server.resume();
      expect(outcomes.filter((o) => o === "ok").length).toBeGreaterThan(0);
      expect(outcomes).toContain("unknown"); // the save in flight when the server froze
      expect(outcomes).toContain("failed"); // saves after it: refused before anything was sent
      await new Promise((r) => setTimeout(r, 500)); // let anything buffered land
      const storage = new RedisStorage({ url: server.url, prefix });
      try {
        const value = (await storage.artifacts.load("g")) as string;
        const i = Number(value.slice(1));
        const lastOk = outcomes.lastIndexOf("ok");
        // The stored value is the last save that succeeded, or a later one whose outcome was unknown.
        expect(outcomes[i] === "ok" ? i === lastOk : outcomes[i] === "unknown" && i > lastOk, `v${i} was "${outcomes[i]}"`).toBe(true);
      } finally {
        await storage.close();
      }
    } finally {
      server.resume();
      await server.close();
    }
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
