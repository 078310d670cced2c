/**
 * Issue 35.1 as race and crash trials with real processes (the storage code transpiled and run by
 * `node` children): while writer processes replace one FileStorage skill, reader processes never
 * find it absent nor a listing mixed, no save fails (no ENOTEMPTY), and a writer SIGKILLed at a
 * random moment (or at each exact point of a save) leaves the old or the new version whole. Every trial is bounded by a stop file and a deadline; the
 * counts are asserted exactly (0 absent, 0 mixed, 0 failed saves).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomInt } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileStorage } from "../../src/storage/file/storage.js";
import { atIssueScale, reportFaults, scaled } from "../helpers/fault-report.js";
import { transpileTree } from "./transpile.js";

/** Shared by children and parent: versions that name themselves in every file, so a mix shows. */
const SKILL_VALUES = `
function skillFiles(tag, count) {
  const files = [{ path: "SKILL.md", bytes: new TextEncoder().encode(\`---\\nname: racer\\ndescription: version \${tag}\\n---\\n\${tag}\\n\`) }];
  for (let i = 1; i < count; i++) files.push({ path: \`scripts/s\${i}.sh\`, bytes: new TextEncoder().encode(\`echo \${tag}\\n\`) });
  return files;
}
function tagOf(bytes) { return new TextDecoder().decode(bytes).split("\\n").at(-2); }
function workflowRecord(language, tag) {
  const source = language === "python" ? \`def run():\\n    return "\${tag}"\\n\` : \`export async function run() { return "\${tag}"; }\\n\`;
  return { name: "racer", source, description: "", createdAt: "t", updatedAt: "t", ...(language === "python" ? { language: "python" } : {}) };
}
`;

/**
 * mode writer-*: save until stopped; reader-*: read and count, and create the reached file once it
 * has made its share of the reads (it reads on until stopped, so the writers never race alone).
 * Each child ends by itself at its deadline should the parent never stop it.
 */
const RACE_SCRIPT = `
import { existsSync, writeFileSync } from "node:fs";
const [entry, basePath, id, mode, files, stopFile, readyFile, reachedFile, share, deadlineMs] = process.argv.slice(2);
const { FileStorage } = await import(entry);
const storage = new FileStorage({ basePath });
${SKILL_VALUES}
writeFileSync(readyFile, "");
const out = { count: 0, absent: 0, mixed: 0, failed: 0, errors: [] };
const deadline = Date.now() + Number(deadlineMs);
while (!existsSync(stopFile) && Date.now() < deadline) {
  try {
    if (mode === "writer-skill") await storage.skills.save("racer", skillFiles(\`\${id}#\${out.count}\`, Number(files)));
    else if (mode === "writer-wf-ts" || mode === "writer-wf-py") await storage.workflows.save(workflowRecord(mode.endsWith("py") ? "python" : "typescript", \`\${id}#\${out.count}\`));
    else if (mode === "reader-wf") {
      const got = await storage.workflows.get("racer");
      const listed = (await storage.workflows.list()).some((w) => w.name === "racer");
      if (!got || !listed) { out.absent++; if (out.errors.length < 5) out.errors.push(JSON.stringify({ got: !!got, listed })); }
      else if (!got.source.includes(got.language === "python" ? "def run" : "export async function run")) out.mixed++;
    }
    else if (mode === "reader-skill") {
      const listed = await storage.skills.files("racer");
      const md = await storage.skills.read("racer", "SKILL.md");
      const script = await storage.skills.read("racer", "scripts/s1.sh");
      const names = await storage.skills.names();
      if (!listed || !md || !script || !names.includes("racer")) { out.absent++; if (out.errors.length < 5) out.errors.push(JSON.stringify({ listed: !!listed, md: !!md, script: !!script, names })); }
      // One listing is one version (separate reads may each see a different save, as in any store).
      // The scripts of one version are the same size; of two saves, usually not (tags differ in length).
      else if (listed.length !== Number(files) || new Set(listed.filter((f) => f.path !== "SKILL.md").map((f) => f.size)).size > 1) out.mixed++;
    }
  } catch (err) {
    out.failed++;
    if (out.errors.length < 5) out.errors.push(String(err?.message ?? err));
  }
  out.count++;
  if (out.count === Number(share)) writeFileSync(reachedFile, "");
}
process.stdout.write(JSON.stringify(out));
await storage.close();
`;

/** Replaces the skill until killed (at a fault point, when one is given); signals after its first save. */
const KILLED_SCRIPT = `
import { writeFileSync } from "node:fs";
const [entry, faults, basePath, what, files, readyFile, point] = process.argv.slice(2);
const { FileStorage } = await import(entry);
const { setFaultHook } = await import(faults);
const storage = new FileStorage({ basePath });
${SKILL_VALUES}
for (let k = 0; ; k++) {
  if (point && k === 1) setFaultHook((p) => { if (p === point) process.kill(process.pid, "SIGKILL"); });
  if (what === "workflow") await storage.workflows.save(workflowRecord(k % 2 ? "python" : "typescript", \`k#\${k}\`));
  else await storage.skills.save("racer", skillFiles(\`k#\${k}\`, Number(files)));
  if (k === 0) writeFileSync(readyFile, "");
  if (point && k >= 1) process.exit(3); // the hook should have killed us
}
`;

/** One save per round, started when the parent creates go-<round>; acknowledges with ack-<round>-<id> (fail-… when the save threw). */
const ROUNDS_SCRIPT = `
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
const [entry, basePath, id, language, rounds, dir, deadlineMs] = process.argv.slice(2);
const { FileStorage } = await import(entry);
const storage = new FileStorage({ basePath });
${SKILL_VALUES}
writeFileSync(path.join(dir, \`ready-\${id}\`), "");
const deadline = Date.now() + Number(deadlineMs);
for (let k = 0; k < Number(rounds) && Date.now() < deadline; k++) {
  while (!existsSync(path.join(dir, \`go-\${k}\`))) {
    if (Date.now() > deadline) process.exit(4);
    await new Promise((r) => setImmediate(r));
  }
  try {
    await storage.workflows.save(workflowRecord(language, \`\${id}#\${k}\`));
    writeFileSync(path.join(dir, \`ack-\${k}-\${id}\`), "");
  } catch (err) {
    writeFileSync(path.join(dir, \`fail-\${k}-\${id}\`), String(err?.message ?? err));
  }
}
await storage.close();
`;

const { skillFiles, tagOf } = new Function(`${SKILL_VALUES}; return { skillFiles, tagOf };`)() as {
  skillFiles(tag: string, count: number): Array<{ path: string; bytes: Uint8Array }>;
  tagOf(bytes: Uint8Array): string;
};

interface Exit {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

const running = new Set<ChildProcess>();
let work: string;
let entry: string;
let faults: string;

function spawnChild(script: string, args: string[]): { child: ChildProcess; exited: Promise<Exit> } {
  const child = spawn(process.execPath, [path.join(work, script), ...args], { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<Exit>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      running.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, exited };
}

/** A trial's child that is not ready within this long is stuck (it is ready in well under a second). */
const READY_DEADLINE_MS = 60_000;

async function waitForFile(file: string, exited: Promise<Exit>): Promise<void> {
  let gone: Exit | null = null;
  void exited.then((r) => (gone = r));
  const deadline = Date.now() + READY_DEADLINE_MS;
  while (!existsSync(file)) {
    if (gone) throw new Error(`child exited before it was ready (${(gone as Exit).code}): ${(gone as Exit).stderr}`);
    if (Date.now() > deadline) throw new Error(`child not ready after ${READY_DEADLINE_MS} ms (${file})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface Counts {
  count: number;
  absent: number;
  mixed: number;
  failed: number;
  errors: string[];
}

/**
 * How long a race goes on, once every child is ready: until the readers have made `reads` reads
 * between them, every writer has saved `writes` times, and at least `minMs` have passed (the
 * writers get time to replace many times even on a fast machine), or until `deadlineMs`,
 * whichever comes first. Stopping on counts, not on time alone, makes the rows of `npm run faults`
 * the issue's size and keeps a writer the scheduler starved on a loaded machine in the race.
 */
interface RaceLength {
  reads: number;
  writes: number;
  minMs: number;
  deadlineMs: number;
}

/** Runs writer and reader children on one base folder (see RaceLength); returns their counts. */
async function race(basePath: string, modes: string[], files: number, length: RaceLength): Promise<Array<Counts & { mode: string }>> {
  const stop = path.join(basePath, "..", `stop-${randomInt(1e9)}`);
  const readShare = Math.ceil(length.reads / modes.filter((m) => m.startsWith("reader")).length);
  // The children's own deadline comes later: they stop on the parent's stop file, not on their clock.
  const childDeadlineMs = length.deadlineMs + 60_000;
  const children = modes.map((mode, i) => {
    const ready = path.join(basePath, "..", `ready-${randomInt(1e9)}`);
    const reached = path.join(basePath, "..", `reached-${randomInt(1e9)}`);
    return { mode, ready, reached, ...spawnChild("race.mjs", [entry, basePath, `w${i}`, mode, String(files), stop, ready, reached, String(mode.startsWith("reader") ? readShare : length.writes), String(childDeadlineMs)]) };
  });
  for (const c of children) await waitForFile(c.ready, c.exited);
  const started = Date.now();
  const done = () => Date.now() - started >= length.minMs && children.every((c) => existsSync(c.reached));
  while (!done() && Date.now() - started < length.deadlineMs) await new Promise((r) => setTimeout(r, 20));
  await writeFile(stop, "");
  const out = [];
  for (const c of children) {
    const r = await c.exited;
    expect(r.code, r.stderr).toBe(0);
    out.push({ mode: c.mode, ...(JSON.parse(r.stdout) as Counts) });
  }
  return out;
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "tcm-replace-"));
  entry = pathToFileURL(await transpileTree("src/storage/index.ts", path.join(work, "code"))).href;
  faults = new URL("./faults.js", entry).href;
  await writeFile(path.join(work, "race.mjs"), RACE_SCRIPT);
  await writeFile(path.join(work, "killed.mjs"), KILLED_SCRIPT);
  await writeFile(path.join(work, "rounds.mjs"), ROUNDS_SCRIPT);
});

afterAll(async () => {
  for (const child of running) child.kill("SIGKILL");
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

async function freshBase(): Promise<string> {
  const dir = await mkdtemp(path.join(work, "case-"));
  const basePath = path.join(dir, "base");
  await mkdir(basePath);
  return basePath;
}

/** The skill as a reader sees it: null when absent, else its files' count and whether every file names one version. */
async function skillState(basePath: string, files: number): Promise<{ tag: string } | null> {
  const storage = new FileStorage({ basePath });
  try {
    await storage.sweepDone();
    const listed = await storage.skills.files("racer");
    if (!listed) return null;
    const md = await storage.skills.read("racer", "SKILL.md");
    const tag = tagOf(md!);
    expect(listed.map((f) => f.path)).toEqual(skillFiles(tag, files).map((f) => f.path).sort());
    for (const f of listed) expect(new TextDecoder().decode((await storage.skills.read("racer", f.path))!)).toContain(tag);
    return { tag };
  } finally {
    await storage.close();
  }
}

describe("FileStorage skills: one commit point per replace (issue 35.1)", () => {
  // The issue gave rates, not a count (no skill in 3.7–27% of reads): the race runs for a time,
  // with a floor of reads; a few hundred reads at the default faults scale would show ~10 absent.
  const skillRace: RaceLength = { reads: 25, writes: 3, minMs: scaled(1_500), deadlineMs: 60_000 };
  it("2 writer processes replacing a skill and 2 reader processes: 0 absent reads, 0 mixed, 0 failed saves", { timeout: skillRace.deadlineMs + 120_000 }, async () => {
    const basePath = await freshBase();
    const seed = new FileStorage({ basePath });
    await seed.skills.save("racer", skillFiles("seed#0", 12));
    await seed.close();
    const counts = await race(basePath, ["writer-skill", "writer-skill", "reader-skill", "reader-skill"], 12, skillRace);
    const readers = counts.filter((c) => c.mode.startsWith("reader"));
    const writers = counts.filter((c) => c.mode.startsWith("writer"));
    reportFaults({ trial: "skill: 2 writers + 2 readers", runs: readers.reduce((n, c) => n + c.count, 0), absentReads: readers.reduce((n, c) => n + c.absent, 0) });
    expect(readers.reduce((n, c) => n + c.count, 0)).toBeGreaterThanOrEqual(skillRace.reads);
    expect(writers.reduce((n, c) => n + c.count, 0)).toBeGreaterThan(5);
    expect(counts.map((c) => ({ mode: c.mode, absent: c.absent, mixed: c.mixed, failed: c.failed, errors: c.errors }))).toEqual(
      counts.map((c) => ({ mode: c.mode, absent: 0, mixed: 0, failed: 0, errors: [] })),
    );
    // Garbage is collected: once the writers are gone, only the pointed-at version is left.
    const after = new FileStorage({ basePath });
    await after.sweepDone();
    await after.close();
    expect((await readdir(path.join(basePath, "skills", ".versions"))).length).toBe(1);
  });

  // The issue lost the skill in 5 of 110 trials with 200-file skills and 20 of 80 with 5-file ones:
  // as many of each at the default faults scale, 3 of each under npm test, alternating sizes.
  const bigKills = atIssueScale(3, 110);
  const smallKills = atIssueScale(3, 80);
  const killSizes = Array.from({ length: Math.max(bigKills, smallKills) }, (_, i) => [...(i < smallKills ? [5] : []), ...(i < bigKills ? [200] : [])]).flat();
  it(`a writer SIGKILLed at a random moment of a replace leaves the old or the new skill, whole (${smallKills} trials with 5 files, ${bigKills} with 200)`, { timeout: 60_000 + killSizes.length * 10_000 }, async () => {
    const trials = killSizes.length;
    let lost = 0;
    for (const files of killSizes) {
      const basePath = await freshBase();
      const ready = path.join(basePath, "..", "ready");
      const { child, exited } = spawnChild("killed.mjs", [entry, faults, basePath, "skill", String(files), ready, ""]);
      await waitForFile(ready, exited);
      await new Promise((r) => setTimeout(r, randomInt(0, 60)));
      child.kill("SIGKILL");
      await exited;
      if ((await skillState(basePath, files)) === null) lost++;
    }
    reportFaults({ trial: `skill writer SIGKILL (${smallKills} × 5 files, ${bigKills} × 200 files)`, runs: trials, absentReads: lost, lostAckedSaves: lost });
    expect(lost).toBe(0);
  });

  for (const point of ["temp-written", "committed"] as const) {
    it(`a writer SIGKILLed at "${point}" of a replace leaves ${point === "committed" ? "the new" : "the old"} skill, whole`, { timeout: 30_000 }, async () => {
      const basePath = await freshBase();
      const ready = path.join(basePath, "..", "ready");
      const { exited } = spawnChild("killed.mjs", [entry, faults, basePath, "skill", "8", ready, point]);
      const r = await exited;
      expect(r.signal, r.stderr).toBe("SIGKILL");
      expect(await skillState(basePath, 8)).toEqual({ tag: point === "committed" ? "k#1" : "k#0" });
    });
  }

  it("a skill folder of the old layout (a real folder) is replaced, and one left mid-migration by a killed writer is put back on open", async () => {
    const basePath = await freshBase();
    const skills = path.join(basePath, "skills");
    for (const f of skillFiles("old#0", 3)) {
      await mkdir(path.dirname(path.join(skills, "racer", f.path)), { recursive: true });
      await writeFile(path.join(skills, "racer", f.path), f.bytes);
    }
    expect(await skillState(basePath, 3)).toEqual({ tag: "old#0" });
    const storage = new FileStorage({ basePath });
    await storage.skills.save("racer", skillFiles("new#1", 3));
    await storage.close();
    expect(await skillState(basePath, 3)).toEqual({ tag: "new#1" });
    // A writer (pid 2^22 + 1: not a live process) killed after moving a real folder aside, before its pointer.
    await rm(path.join(skills, "racer"));
    await rm(path.join(skills, ".versions"), { recursive: true });
    await mkdir(path.join(skills, ".versions"));
    await mkdir(path.join(skills, "old"));
    for (const f of skillFiles("old#2", 3)) {
      await mkdir(path.dirname(path.join(skills, "old", f.path)), { recursive: true });
      await writeFile(path.join(skills, "old", f.path), f.bytes);
    }
    await rename(path.join(skills, "old"), path.join(skills, ".versions", `racer.${2 ** 22 + 1}.0123456789ab.legacy`));
    expect(await skillState(basePath, 3)).toEqual({ tag: "old#2" });
    expect(existsSync(path.join(skills, "racer", "SKILL.md"))).toBe(true);
  });
});

/** The workflow as a fresh reader sees it: null when absent, else its language and tag. */
async function workflowState(basePath: string): Promise<{ language: string; tag: string } | null> {
  const storage = new FileStorage({ basePath });
  try {
    const got = await storage.workflows.get("racer");
    if (!got) return null;
    return { language: got.language ?? "typescript", tag: /"([^"]+)"/.exec(got.source)![1]! };
  } finally {
    await storage.close();
  }
}

describe("FileStorage workflows saved in TypeScript and Python at once (issue 35.2)", () => {
  // The issue counted 4,614 absent in 19,165 reads: the readers make that many at the default faults
  // scale (a few minutes on a loaded 2-core machine, hence the deadline), 100 under npm test.
  const workflowReads = atIssueScale(100, 19_165);
  const workflowRace: RaceLength = { reads: workflowReads, writes: 3, minMs: scaled(2_000), deadlineMs: 120_000 + workflowReads * 25 };
  it(`a TypeScript and a Python writer process on one name, 2 reader processes: 0 absent reads in ${workflowReads}, 0 mixed, 0 failed saves`, { timeout: workflowRace.deadlineMs + 120_000 }, async () => {
    const basePath = await freshBase();
    const seed = new FileStorage({ basePath });
    await seed.workflows.save({ name: "racer", source: 'export async function run() { return "seed#0"; }\n', description: "", createdAt: "t", updatedAt: "t" });
    await seed.close();
    const counts = await race(basePath, ["writer-wf-ts", "writer-wf-py", "reader-wf", "reader-wf"], 0, workflowRace);
    const reads = counts.filter((c) => c.mode === "reader-wf").reduce((n, c) => n + c.count, 0);
    reportFaults({ trial: "workflow .ts/.py writers + readers", runs: reads, absentReads: counts.reduce((n, c) => n + c.absent, 0) });
    expect(reads).toBeGreaterThanOrEqual(workflowReads);
    expect(counts.filter((c) => c.mode.startsWith("writer")).every((c) => c.count > 2)).toBe(true);
    expect(counts.map((c) => ({ mode: c.mode, absent: c.absent, mixed: c.mixed, failed: c.failed, errors: c.errors }))).toEqual(
      counts.map((c) => ({ mode: c.mode, absent: 0, mixed: 0, failed: 0, errors: [] })),
    );
    // One file of the name is left, in the language of the last save.
    const left = (await readdir(path.join(basePath, "workflows"))).filter((f) => f.startsWith("racer."));
    expect(left).toHaveLength(1);
  });

  // The issue lost both acknowledged saves in 1 of 60 rounds; npm test runs 60, npm run faults 5 times as many.
  const rounds = atIssueScale(60, 60);
  const roundsDeadlineMs = 60_000 + rounds * 1_000;
  it(`two processes save the same name at the same moment, one in each language: the name always holds one of that round's saves (${rounds} rounds)`, { timeout: roundsDeadlineMs + 60_000 }, async () => {
    const basePath = await freshBase();
    const dir = path.join(basePath, "..", "rounds");
    await mkdir(dir);
    const writers = (["typescript", "python"] as const).map((language, i) => ({ id: `w${i}`, ...spawnChild("rounds.mjs", [entry, basePath, `w${i}`, language, String(rounds), dir, String(roundsDeadlineMs)]) }));
    for (const w of writers) await waitForFile(path.join(dir, `ready-${w.id}`), w.exited);
    let lost = 0;
    const failures: string[] = [];
    const reader = new FileStorage({ basePath });
    try {
      for (let k = 0; k < rounds; k++) {
        await writeFile(path.join(dir, `go-${k}`), "");
        for (const w of writers) {
          const ack = path.join(dir, `ack-${k}-${w.id}`);
          const fail = path.join(dir, `fail-${k}-${w.id}`);
          while (!existsSync(ack) && !existsSync(fail)) await new Promise((r) => setTimeout(r, 2));
          if (existsSync(fail)) failures.push(`round ${k}: ${w.id}`);
        }
        const got = await reader.workflows.get("racer");
        // Both saves were acknowledged: the name holds one of them (not nothing, not an older round's).
        if (!got || /#(\d+)"/.exec(got.source)?.[1] !== String(k)) lost++;
      }
    } finally {
      await reader.close();
    }
    for (const w of writers) expect((await w.exited).code).toBe(0);
    reportFaults({ trial: "workflow .ts/.py same-moment saves", runs: rounds, lostAckedSaves: lost });
    expect({ lost, failures }).toEqual({ lost: 0, failures: [] });
  });

  // The issue gave no count for this one (its lost workflows came from the two rounds above).
  const workflowKills = scaled(6);
  it("a writer switching languages SIGKILLed at a random moment leaves a whole workflow, and the name stays writable (no stuck lock)", { timeout: 60_000 + workflowKills * 10_000 }, async () => {
    const trials = workflowKills;
    let absent = 0;
    for (let trial = 0; trial < trials; trial++) {
      const basePath = await freshBase();
      const ready = path.join(basePath, "..", "ready");
      const { child, exited } = spawnChild("killed.mjs", [entry, faults, basePath, "workflow", "0", ready, ""]);
      await waitForFile(ready, exited);
      await new Promise((r) => setTimeout(r, randomInt(0, 60)));
      child.kill("SIGKILL");
      await exited;
      if (!(await workflowState(basePath))) absent++;
      const after = new FileStorage({ basePath });
      await after.workflows.save({ name: "racer", source: 'def run():\n    return "after"\n', language: "python", description: "", createdAt: "t", updatedAt: "t" });
      await after.close();
      expect(await workflowState(basePath)).toEqual({ language: "python", tag: "after" });
    }
    reportFaults({ trial: "workflow writer SIGKILL", runs: trials, absentReads: absent, lostAckedSaves: absent });
    expect(absent).toBe(0);
  });

  for (const point of ["temp-written", "committed"] as const) {
    it(`a writer SIGKILLed at "${point}" of a save that changes the language leaves ${point === "committed" ? "the new" : "the old"} workflow`, { timeout: 30_000 }, async () => {
      const basePath = await freshBase();
      const ready = path.join(basePath, "..", "ready");
      const { exited } = spawnChild("killed.mjs", [entry, faults, basePath, "workflow", "0", ready, point]);
      const r = await exited;
      expect(r.signal, r.stderr).toBe("SIGKILL");
      expect(await workflowState(basePath)).toEqual(point === "committed" ? { language: "python", tag: "k#1" } : { language: "typescript", tag: "k#0" });
    });
  }
});
