/**
 * deps end to end: a real package (a tarball made by `npm pack` from test/fixtures) installed with
 * npm into the executor's deps folder and imported by agent code in the next run, on both
 * executors; operator switches; invalid specs install nothing. One opt-in test uses the registry.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DepsConfig } from "../../src/deps/index.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import type { Executor } from "../../src/execution/protocol.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";

const FIXTURE = path.resolve(import.meta.dirname, "..", "fixtures", "deps", "tcm-tiny");
let work: string;
let tarball: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "tcm-deps-"));
  const src = path.join(work, "src");
  await cp(FIXTURE, src, { recursive: true });
  const { stdout } = await promisify(execFile)("npm", ["pack", "--silent", "--pack-destination", work], { cwd: src });
  tarball = path.join(work, stdout.trim().split("\n").pop()!);
}, 60_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true, maxRetries: 5 });
});

const executors: Array<[string, (o: DepsConfig) => Executor]> = [
  ["InProcessExecutor", (o) => new InProcessExecutor(o)],
  ["SubprocessExecutor", (o) => new SubprocessExecutor(o)],
];

async function session(make: (o: DepsConfig) => Executor, options: DepsConfig): Promise<{ session: Session; base: string }> {
  const base = await mkdtemp(path.join(work, "base-"));
  const s = new Session({ storage: new FileStorage({ basePath: base }), executor: make(options) });
  await s.start();
  return { session: s, base };
}

for (const [name, make] of executors) {
  describe(`deps (${name})`, () => {
    it("deps.add installs a package that the next run imports; install scripts do not run", async () => {
      const { session: s, base } = await session(make, { allowLocalPaths: true });
      try {
        const added = await s.run(`await deps.add(${JSON.stringify(tarball)})`);
        expect(added.error).toBeNull();
        expect(added.value).toEqual({ installed: [tarball], alreadyPresent: [], failed: [] });
        const used = await s.run('const tiny = await import("tcm-tiny"); tiny.shout("hi")');
        expect(used.value).toBe("HI!");
        expect((await s.run('require("tcm-tiny").version')).value).toBe("1.0.0");
        expect(existsSync(path.join(base, "deps", "node_modules", "tcm-tiny", "POSTINSTALL_RAN"))).toBe(false);
        expect(await readFile(path.join(base, "deps.txt"), "utf8")).toBe(`${tarball}\n`);
        const again = await s.run(`await deps.add(${JSON.stringify(tarball)})`);
        expect(again.value).toEqual({ installed: [], alreadyPresent: [tarball], failed: [] });
        const listed = await s.run("await deps.list()");
        expect(listed.value).toEqual([{ name: tarball, spec: tarball, configured: false, installed: true }]);
        // Not in ts-code-mode's own node_modules.
        expect(existsSync(path.resolve("node_modules", "tcm-tiny"))).toBe(false);
      } finally {
        await s.close();
      }
    }, 120_000);

    it("refuses invalid specs before anything runs, and installs nothing", async () => {
      const { session: s, base } = await session(make, {});
      try {
        for (const [spec, message] of [
          ["lodash; rm -rf /", /shell metacharacters/],
          ["https://example.com/x.tgz", /URLs|Local paths/],
          [tarball, /Local paths are not allowed/],
          ["", /empty/],
        ] as const) {
          const r = await s.run(`await deps.add(${JSON.stringify(spec)})`);
          expect(r.error?.name, spec).toBe("ValidationError");
          expect(r.error?.message).toMatch(/^deps\.add: /);
          expect(r.error?.message).toMatch(message);
        }
        expect(existsSync(path.join(base, "deps", "node_modules"))).toBe(false);
        expect(existsSync(path.join(base, "deps.txt"))).toBe(false);
      } finally {
        await s.close();
      }
    });

    it("with allowRuntimeDeps: false refuses add/remove, still lists and syncs, and drops the capability", async () => {
      const { session: s } = await session(make, { allowRuntimeDeps: false, allowLocalPaths: true, deps: [tarball] });
      try {
        expect(s.supports("depsInstall")).toBe(false);
        const add = await s.run('await deps.add("lodash")');
        expect(add.error?.message).toMatch(/runtime deps are disabled by the operator/);
        const remove = await s.run(`await deps.remove(${JSON.stringify(tarball)})`);
        expect(remove.error?.message).toMatch(/runtime deps are disabled/);
        // Configured deps were installed at start.
        expect((await s.run("(await deps.list()).map((d) => [d.configured, d.installed])")).value).toEqual([[true, true]]);
        expect((await s.run("(await deps.sync()).alreadyPresent.length")).value).toBe(1);
        expect((await s.run('(await import("tcm-tiny")).shout("x")')).value).toBe("X!");
      } finally {
        await s.close();
      }
    }, 120_000);
  });
}

describe("deps: the list", () => {
  it("remove() takes an agent's package off the list (configuration only) and says so; operator deps stay", async () => {
    const { session: s, base } = await session((o) => new InProcessExecutor(o), { allowLocalPaths: true });
    try {
      await s.addDep(tarball);
      const removed = await s.removeDep(tarball);
      expect(removed).toEqual({ removed: true, note: expect.stringMatching(/configuration only/) });
      expect(await readFile(path.join(base, "deps.txt"), "utf8")).toBe("");
      expect((await readdir(path.join(base, "deps", "node_modules"))).includes("tcm-tiny")).toBe(true);
      expect((await s.removeDep("lodash")).removed).toBe(false);
    } finally {
      await s.close();
    }
  }, 120_000);

  it("a configured dep that cannot be installed fails start() with the spec named", async () => {
    const base = await mkdtemp(path.join(work, "bad-"));
    const s = new Session({ storage: new FileStorage({ basePath: base }), executor: new InProcessExecutor({ allowLocalPaths: true, deps: [path.join(work, "missing-1.0.0.tgz")] }) });
    await expect(s.start()).rejects.toThrow(/Could not install the configured deps:\n.*missing-1\.0\.0\.tgz/);
    await s.close();
  }, 120_000);

  it("an invalid configured spec fails at construction", () => {
    expect(() => new InProcessExecutor({ deps: ["bad; spec"] })).toThrow(/shell metacharacters/);
    expect(() => new SubprocessExecutor({ deps: ["./local"] })).toThrow(/Local paths are not allowed/);
  });
});

// Opt-in: reaches the npm registry. TCM_REGISTRY_TESTS=1 npx vitest run test/deps
describe.runIf(process.env["TCM_REGISTRY_TESTS"] === "1")("deps from the npm registry (opt-in)", () => {
  it("installs is-number@7.0.0 and imports it", async () => {
    const { session: s } = await session((o) => new SubprocessExecutor(o), {});
    try {
      expect((await s.run('(await deps.add("is-number@7.0.0")).installed')).value).toEqual(["is-number@7.0.0"]);
      expect((await s.run('(await import("is-number")).default(5)')).value).toBe(true);
    } finally {
      await s.close();
    }
  }, 180_000);
});
