/**
 * deps in Python sessions, end to end with real python3, venv and pip: a wheel from the machine's
 * configured index (pip reads its own configuration; nothing here names an index) is installed
 * into <base>/deps/python/venv by `deps.add` from Python code and imported in the next statement;
 * the Python list is apart from the npm list; refused specs run nothing; a pip that hangs is
 * killed at the timeout.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipInstall, venvOf } from "../../src/deps/python/installer.js";
import { PythonExecutor } from "../../src/execution/python/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";

// A small pure wheel of the local index that python3 here cannot import by itself.
const WHEEL = "text_unidecode";
const SPEC = "Text-Unidecode==1.3";

let base: string;
let session: Session;

beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), "tcm-pydeps-"));
  session = new Session({ storage: new FileStorage({ basePath: base }), executor: new PythonExecutor({ defaultTimeoutMs: 240_000 }) });
  await session.start();
});

afterAll(async () => {
  await session?.close();
  await rm(base, { recursive: true, force: true, maxRetries: 5 });
});

describe("deps in a Python session", () => {
  it("deps.add installs with pip into the base's venv; the next statement imports it; the list is per language", async () => {
    const before = await session.run(`import importlib.util\nimportlib.util.find_spec("${WHEEL}") is None`);
    expect(before.value).toBe(true);
    const added = await session.run(`r = deps.add("${SPEC}")\nimport ${WHEEL}\n(r, ${WHEEL}.unidecode("café"))`, { timeoutMs: 240_000 });
    expect(added.error).toBeNull();
    expect(added.value).toEqual([{ installed: ["text-unidecode==1.3"], alreadyPresent: [], failed: [] }, "cafe"]);
    expect(existsSync(path.join(venvOf(path.join(base, "deps", "python")), "bin", "python"))).toBe(true);
    // The Python list is its own file; the npm list (deps.txt) is untouched.
    expect(await readFile(path.join(base, "deps-python.txt"), "utf8")).toBe("text-unidecode==1.3\n");
    expect(existsSync(path.join(base, "deps.txt"))).toBe(false);
    const listed = await session.run("deps.list()");
    expect(listed.value).toEqual([{ name: "text-unidecode", spec: "text-unidecode==1.3", configured: false, installed: true }]);
    // The Session facade goes to the same service; already installed, pip does not run again.
    expect(await session.addDep("text_unidecode==1.3")).toEqual({ installed: [], alreadyPresent: ["text-unidecode==1.3"], failed: [] });
  }, 300_000);

  it("a fresh interpreter (after reset) finds the venv's packages too", async () => {
    await session.reset();
    const run = await session.run(`import ${WHEEL}\n${WHEEL}.unidecode("Ærøskøbing")`);
    expect(run.error).toBeNull();
    expect(run.value).toBe("AEroskobing");
  });

  it.each([
    ["requests; os.system('touch /tmp/tcm-pwned')", /Environment markers/],
    ["--index-url http://127.0.0.1:9/simple", /pip options are not allowed/],
    ["git+https://github.com/psf/requests", /URLs, VCS and direct references/],
    ["./local", /Local paths/],
    ["lodash@^4", /URLs, VCS and direct references/],
  ])("refuses %j with a clear message and installs nothing", async (spec, reason) => {
    const run = await session.run(`deps.add(${JSON.stringify(spec)})`);
    expect(run.ok).toBe(false);
    expect(run.error?.message).toMatch(reason);
    expect(await readFile(path.join(base, "deps-python.txt"), "utf8")).toBe("text-unidecode==1.3\n");
  });
});

describe("pipInstall", () => {
  let server: Server;
  const sockets: Socket[] = [];
  let saved: string | undefined;

  beforeAll(async () => {
    // An index that accepts connections and never answers: pip waits on it until it is killed.
    server = createServer((socket) => {
      sockets.push(socket);
      socket.on("error", () => {});
      socket.resume(); // read, so the end of the connection is seen
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    saved = process.env.PIP_INDEX_URL;
  });

  afterAll(async () => {
    if (saved === undefined) delete process.env.PIP_INDEX_URL;
    else process.env.PIP_INDEX_URL = saved;
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it("a venv stopped half-way is not used: the next install makes a whole one", async () => {
    const dir = path.join(base, "half");
    const cut = await pipInstall("python3", ["appdirs==1.4.4"], { dir, allowScripts: false, timeoutMs: 1_000 });
    expect(cut.ok).toBe(false);
    expect(cut.output).toMatch(/python -m venv timed out/);
    const next = await pipInstall("python3", ["appdirs==1.4.4"], { dir, allowScripts: false, timeoutMs: 240_000 });
    expect(next.output).not.toMatch(/No module named pip/);
    expect(next.ok).toBe(true);
  }, 300_000);

  it("kills pip at the timeout and says so", async () => {
    const dir = path.join(base, "deps", "python");
    // The venv the first test made: pip itself, not venv creation, is what hangs here.
    expect(existsSync(path.join(venvOf(dir), "bin", "python"))).toBe(true);
    const port = (server.address() as { port: number }).port;
    // The operator's environment is pip's configuration: this index hangs.
    process.env.PIP_INDEX_URL = `http://127.0.0.1:${port}/simple`;
    const closed = new Promise<void>((resolve) => server.once("connection", (socket) => socket.once("close", () => resolve())));
    const outcome = await pipInstall("python3", ["appdirs"], { dir, allowScripts: false, timeoutMs: 5_000 });
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(/pip install timed out after \d+ ms; the process was killed/);
    // pip held a connection to the index; it closed because pip is gone.
    await closed;
  }, 60_000);
});
