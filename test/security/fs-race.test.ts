/**
 * filesystem_* under a real race (issue 32 item 4): a second process swaps a project folder for a
 * symlink to an outside folder and back, as fast as it can, while 300 writes and 300 reads go
 * through the toolset. None may land outside or read the outside file (the check-then-open code
 * let 32 of 300 writes and 1 of 300 reads escape). Bounded: 600 calls, 8 at a time.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filesystemToolset } from "../../src/agents/toolsets/filesystem.js";

const CALLS = 300;
const PARALLEL = 8;
let top: string;
let root: string;
let outside: string;
let swapper: ChildProcess | undefined;

// Renames d away, puts a symlink to the outside folder in its place, then puts d back; forever.
// Every step may fail (the toolset may have just created d): the loop goes on regardless.
const SWAPPER = `
const fs = require("node:fs");
const [d, real, out] = process.argv.slice(1);
const tryIt = (f) => { try { f(); } catch {} };
process.stdout.write("ready\\n");
for (;;) {
  tryIt(() => fs.renameSync(d, real));
  tryIt(() => fs.symlinkSync(out, d));
  tryIt(() => fs.unlinkSync(d));
  tryIt(() => fs.renameSync(real, d));
}`;

beforeAll(async () => {
  top = await mkdtemp(path.join(os.tmpdir(), "ts-code-mode-race-"));
  root = path.join(top, "project");
  outside = path.join(top, "outside");
  await mkdir(path.join(root, "d"), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(root, "d", "r.txt"), "INSIDE");
  await writeFile(path.join(outside, "r.txt"), "OUTSIDE");
});
afterAll(async () => {
  swapper?.kill("SIGKILL");
  await rm(top, { recursive: true, force: true, maxRetries: 5 });
});

async function pool(count: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    while (next < count) await task(next++);
  }));
}

describe("filesystem_* while another process swaps folders for symlinks", () => {
  it("0 of 300 writes and 0 of 300 reads escape the project", async () => {
    const child = spawn(process.execPath, ["-e", SWAPPER, path.join(root, "d"), path.join(root, "d.real"), outside], { stdio: ["ignore", "pipe", "inherit"] });
    swapper = child;
    await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
    const fs = filesystemToolset(root, false, 24_000);
    const write = fs.find((t) => t.name === "write_file")!;
    const read = fs.find((t) => t.name === "read_file")!;
    const signal = new AbortController().signal;
    let readsOutside = 0;
    let writesDone = 0;
    let readsDone = 0;
    await pool(CALLS, async (i) => {
      await write.execute({ path: `d/w${i}.txt`, content: "x" }, signal).then(() => writesDone++, () => undefined);
      await read.execute({ path: "d/r.txt" }, signal).then((text) => {
        readsDone++;
        if (text.includes("OUTSIDE")) readsOutside++;
      }, () => undefined);
    });
    child.kill("SIGKILL");
    const escapedWrites = (await readdir(outside)).filter((n) => n.startsWith("w") || n.endsWith(".tmp"));
    expect({ escapedWrites: escapedWrites.length, readsOutside }).toEqual({ escapedWrites: 0, readsOutside: 0 });
    // The calls ran (some are refused or miss mid-swap; that is the point, not a failure).
    expect(writesDone + readsDone).toBeGreaterThan(0);
  }, 120_000);
});
