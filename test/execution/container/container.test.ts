/**
 * ContainerExecutor on a real engine (podman's Docker API): locked-down defaults, limits, network
 * and filesystem isolation, shell commands, cleanup. Sessions are started in parallel in beforeAll
 * (each starts a container); each test uses its own variables.
 */
import { spawnSync } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContainerExecutor, type ContainerExecutorOptions } from "../../../src/execution/container/executor.js";
import { CONTAINER_LABEL, OWNER_HOST_LABEL, OWNER_PID_LABEL } from "../../../src/execution/container/guest.js";
import { MAX_EXEC_OUTPUT_CHARS } from "../../../src/execution/container/exec.js";
import { policy } from "../../../src/tools/middleware/builtins.js";
import { Session } from "../../../src/session.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import { EXAMPLE_TOOLS_PATH } from "../../conformance/executor.js";
import { ensureTestImage, ownContainers, testDocker } from "../../helpers/container.js";
import { setEnv } from "../../helpers/env.js";
import { waitFor } from "../../helpers/processes.js";

let tmp: string;
let image: string;
const sessions: Session[] = [];

async function open(options: ContainerExecutorOptions = {}): Promise<{ s: Session; ex: ContainerExecutor }> {
  const ex = new ContainerExecutor({ toolsPath: EXAMPLE_TOOLS_PATH, defaultTimeoutMs: 20_000, ...options });
  const s = new Session({ storage: new FileStorage({ basePath: await mkdtemp(path.join(tmp, "s-")) }), executor: ex });
  sessions.push(s);
  await s.start();
  return { s, ex };
}

async function value(s: Session, code: string, timeoutMs?: number): Promise<unknown> {
  const r = await s.run(code, timeoutMs === undefined ? {} : { timeoutMs });
  expect(r.error, code).toBeNull();
  return r.value;
}

let main: { s: Session; ex: ContainerExecutor };
let workspace: string;
let readonlyDir: string;
let mounted: { s: Session; ex: ContainerExecutor };
let denied: { s: Session; ex: ContainerExecutor };
let limited: { s: Session; ex: ContainerExecutor };

/** Set in the host's environment before the containers start; must not reach them. */
const HOST_SECRET = "tcm-host-secret-value";
let restoreEnv: (() => void) | undefined;

beforeAll(async () => {
  restoreEnv = setEnv({ TCM_TEST_HOST_SECRET: HOST_SECRET });
  tmp = await mkdtemp(path.join(os.tmpdir(), "tcm-container-"));
  image = await ensureTestImage();
  workspace = await mkdtemp(path.join(tmp, "workspace-"));
  readonlyDir = await mkdtemp(path.join(tmp, "ro-"));
  await writeFile(path.join(readonlyDir, "hello.txt"), "from the host");
  // The container's user (nobody) reads the mount and writes into the workspace.
  await chmod(tmp, 0o755);
  await chmod(readonlyDir, 0o755);
  await chmod(path.join(readonlyDir, "hello.txt"), 0o644);
  spawnSync("chown", ["65534:65534", workspace]);
  [main, mounted, denied, limited] = await Promise.all([
    open(),
    open({ workspace, mounts: [{ source: readonlyDir, target: "/data" }] }),
    open({ middleware: [policy({ deny: ["shell.*"] })] }),
    open({ memoryMb: 96 }),
  ]);
}, 120_000);

afterAll(async () => {
  restoreEnv?.();
  await Promise.all(sessions.map((s) => s.close()));
  // Every container this file started is gone once its session is closed (looked up by label).
  expect(await ownContainers()).toEqual([]);
  await rm(tmp, { recursive: true, force: true, maxRetries: 5 });
});

describe("skills.run inside the container", () => {
  /** A script that reports where it runs: its user, its files, whether it sees the host's tmp folder. */
  const WHERE = [
    "const fs = require('node:fs');",
    "process.stderr.write('a warning on stderr\\n');",
    "if (process.argv[2] === 'fail') { process.stderr.write('it broke'); process.exit(3); }",
    "console.log(JSON.stringify({ args: process.argv.slice(2), uid: process.getuid(), dir: __dirname, notes: fs.readFileSync(__dirname + '/../references/notes.md', 'utf8'), hostTmp: fs.existsSync(process.env.HOST_TMP || '/nonexistent-host-path') }));",
  ].join("\n");

  it("copies the skill's files in, runs the argv there (never on the host, no shell), returns stdout only, and removes them", async () => {
    await value(main.s, `await skills.create({ name: "where", description: "Where it runs. Use in tests.", body: "x", files: { "scripts/where.cjs": ${JSON.stringify(WHERE)}, "references/notes.md": "the notes" } })`);
    const args = ["$(touch /tmp/pwned)", "; id", "--help", "a b", tmp];
    const out = JSON.parse((await value(main.s, `await skills.run("where", "scripts/where.cjs", ${JSON.stringify(args)})`)) as string) as Record<string, unknown>;
    expect(out).toMatchObject({ args, uid: 65534, notes: "the notes", hostTmp: false });
    expect(out["dir"]).toMatch(/^\/tmp\/tcm-skill-[0-9a-f-]+\/where\/scripts$/);
    // Nothing is left in the container's /tmp, and no argument was run by a shell.
    expect((await main.s.exec(["node", "-e", "console.log(JSON.stringify(require('fs').readdirSync('/tmp')))"])).output.trim()).toBe("[]");
  });

  it("a failing script is a ToolError quoting its stderr; a script over the run's time is stopped", async () => {
    const r = await main.s.run('await skills.run("where", "scripts/where.cjs", ["fail"])');
    expect(r.error).toMatchObject({ name: "ToolError" });
    expect(r.error?.message).toMatch(/skills\.run\("where", "scripts\/where\.cjs"\) exited with code 3 inside the container: a warning on stderr\nit broke/);
    await value(main.s, `await skills.create({ name: "hangs", description: "Hangs. Use in tests.", body: "x", files: { "scripts/hang.cjs": "setInterval(() => {}, 1000)" } })`);
    const hung = await main.s.run('await skills.run("hangs", "scripts/hang.cjs", [])', { timeoutMs: 2_000 });
    expect(hung.ok).toBe(false);
    const count = "const fs = require('fs'); console.log(fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p)).map((p) => { try { return fs.readFileSync('/proc/' + p + '/cmdline', 'utf8'); } catch { return ''; } }).filter((c) => c.includes(['hang', 'cjs'].join('.'))).length)"; // the needle is not in its own argv
    await waitFor(async () => (await main.s.exec(["node", "-e", count])).output.trim() === "0", "the hanging script to be killed inside the container", 10_000, 200);
    await waitFor(async () => (await main.s.exec(["node", "-e", "console.log(require('fs').readdirSync('/tmp').length)"])).output.trim() === "0", "its files to be removed", 10_000, 200);
  });
});

describe("locked-down defaults", () => {
  it("the container has no network, no capabilities, no new privileges, a read-only root, limits, an init, labels, user nobody", async () => {
    const info = await (await testDocker()).getContainer(main.ex.containerId!).inspect();
    const hc = info.HostConfig;
    expect(hc.NetworkMode).toBe("none");
    // CapDrop ALL: the guest process holds no capability at all.
    const status = (await value(main.s, `(await import("node:fs")).readFileSync("/proc/self/status", "utf8")`)) as string;
    expect(status).toMatch(/^CapEff:\s+0+$/m);
    expect(status).toMatch(/^CapBnd:\s+0+$/m);
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(hc.SecurityOpt?.join(",")).toMatch(/no-new-privileges/);
    expect(hc.ReadonlyRootfs).toBe(true);
    expect(hc.PidsLimit).toBe(256);
    expect(hc.Memory).toBe(512 * 1024 * 1024);
    expect(hc.Init).toBe(true);
    expect(info.Config.User).toBe("65534:65534");
    expect(info.Config.Labels).toMatchObject({ [CONTAINER_LABEL]: "1", [OWNER_PID_LABEL]: String(process.pid) });
    // Nothing of the host's environment crosses (no credentials).
    expect(info.Config.Env?.join("\n")).not.toContain(HOST_SECRET);
  });

  it("capabilities() is truthful: networkIsolation only without a network", () => {
    const caps = main.ex.capabilities().capabilities;
    expect([...caps].sort()).toEqual(["filesystemIsolation", "memoryLimit", "networkIsolation", "processIsolation", "reset", "timeout"]);
    expect(new ContainerExecutor({ network: "bridge" }).capabilities().capabilities).not.toContain("networkIsolation");
    expect(main.ex.trust).toBe("untrusted");
  });

  it("what the container's code saves is recorded as the container's (untrusted); it runs no host commands", async () => {
    const source = "export async function run(args: { n: number }) { return args.n * 2; }";
    // The process's first workflow save loads the TypeScript checker for its signature: seconds on
    // a loaded machine (a clean-clone CI run hit the 20 s default), and this test is about provenance.
    await value(main.s, `await workflows.create({ name: "from_container", source: ${JSON.stringify(source)} })`, 120_000);
    const saved = (await main.ex.host!.workflows.list()).find((w) => w.name === "from_container");
    expect(saved?.provenance).toMatchObject({ trust: "untrusted", executor: "container" });
    expect(main.ex.host!.runsCommands).toBe(false);
  });

  it("a missing image fails start with the command that builds it", async () => {
    const ex = new ContainerExecutor({ image: "localhost/ts-code-mode-runtime:missing" });
    const s = new Session({ storage: new FileStorage({ basePath: await mkdtemp(path.join(tmp, "s-")) }), executor: ex });
    await expect(s.start()).rejects.toThrow("the container image localhost/ts-code-mode-runtime:missing is missing; build it with: ts-code-mode image build --tag localhost/ts-code-mode-runtime:missing");
    await s.close();
  });
});

describe("isolation", () => {
  it("networkIsolation: the guest cannot connect anywhere, and has only loopback", async () => {
    const outcome = await value(
      main.s,
      `const net = await import("node:net");
       await new Promise((resolve) => {
         const c = net.connect({ host: "1.1.1.1", port: 80, timeout: 3000 });
         c.on("connect", () => { c.destroy(); resolve("connected"); });
         c.on("error", (e) => resolve(e.code));
         c.on("timeout", () => { c.destroy(); resolve("timeout"); });
       })`,
    );
    expect(outcome).toBe("ENETUNREACH");
    expect(Object.keys((await value(main.s, `(await import("node:os")).networkInterfaces()`)) as object)).toEqual(["lo"]);
  });

  it("filesystemIsolation: host files are not there and the root is read-only", async () => {
    const secret = path.join(tmp, "host-secret.txt");
    await writeFile(secret, "secret");
    const fs = `const fs = await import("node:fs");`;
    expect(await value(main.s, `${fs} fs.existsSync(${JSON.stringify(secret)})`)).toBe(false);
    expect(await value(main.s, `${fs} (() => { try { fs.writeFileSync("/etc/x", "y"); return "written"; } catch (e) { return e.code; } })()`)).toBe("EROFS");
    // The workdir and /tmp are writable tmpfs.
    expect(await value(main.s, `${fs} fs.writeFileSync("note.txt", "ok"); fs.readFileSync("/workspace/note.txt", "utf8")`)).toBe("ok");
  });

  it("a read-only mount can be read and not written; the workspace is the same path inside and out", async () => {
    const fs = `const fs = await import("node:fs");`;
    expect(await value(mounted.s, `${fs} fs.readFileSync("/data/hello.txt", "utf8")`)).toBe("from the host");
    expect(await value(mounted.s, `${fs} (() => { try { fs.writeFileSync("/data/x", "y"); return "written"; } catch (e) { return e.code; } })()`)).toBe("EROFS");
    expect(await value(mounted.s, `process.cwd()`)).toBe(workspace);
    const r = await mounted.s.exec("echo made-inside > inside.txt && pwd");
    expect(r).toEqual({ output: `${workspace}\n`, exitCode: 0, truncated: false });
    expect(await readFile(path.join(workspace, "inside.txt"), "utf8")).toBe("made-inside\n");
  });
});

describe("limits", () => {
  it("a memory bomb outside V8's heap ends in MemoryLimitError (exit 137), and a fresh container runs the next code", async () => {
    const before = limited.ex.containerId;
    const r = await limited.s.run(`const keep = []; for (;;) { const b = Buffer.alloc(8 * 1024 * 1024); b.fill(1); keep.push(b); }`, { timeoutMs: 20_000 });
    expect(r.error?.name).toBe("MemoryLimitError");
    expect(r.error?.message).toMatch(/memory limit of 96 MB/);
    expect(await value(limited.s, "1 + 1")).toBe(2);
    expect(limited.ex.containerId).not.toBe(before);
  });

  it("a runaway async loop is stopped at the timeout by replacing the container; the old one is removed", async () => {
    const before = main.ex.containerId!;
    const r = await main.s.run(`await null; for (;;) {}`, { timeoutMs: 500 });
    expect(r.error?.name).toBe("TimeoutError");
    expect(await value(main.s, "'alive'")).toBe("alive");
    expect(main.ex.containerId).not.toBe(before);
    expect(await ownContainers()).not.toContain(before);
  });

  it("a container crash (process.exit) is a clear error and the next run gets a fresh container", async () => {
    const before = main.ex.containerId!;
    const r = await main.s.run(`process.exit(3)`);
    expect(r.error?.name).toBe("ExecutorCrashError");
    expect(r.error?.message).toMatch(/exit code 3/);
    expect(await value(main.s, "'again'")).toBe("again");
    expect(main.ex.containerId).not.toBe(before);
  });

  it("a second connection to the host socket is refused: only the guest runtime speaks", async () => {
    const outcome = await value(
      main.s,
      `const net = await import("node:net");
       await new Promise((resolve) => {
         const c = net.connect(process.env.TS_CODE_MODE_SOCKET);
         c.on("close", () => resolve("closed"));
         c.on("error", (e) => resolve(e.code));
         c.on("data", () => resolve("data"));
       })`,
    );
    expect(["closed", "ECONNREFUSED", "ENOENT"]).toContain(outcome);
    expect(await value(main.s, "'still here'")).toBe("still here");
  });
});

describe("shell commands", () => {
  it("session.exec runs a string under sh -c inside the container and returns output and exit code", async () => {
    expect(await main.s.exec("echo out; echo err >&2; exit 3")).toEqual({ output: "out\nerr\n", exitCode: 3, truncated: false });
    expect(await main.s.exec("pwd")).toMatchObject({ output: "/workspace\n", exitCode: 0 });
    expect(await main.s.exec("pwd", { cwd: "/tmp" })).toMatchObject({ output: "/tmp\n" });
  });

  it("an argv array is run as is: its words are never parsed by a shell", async () => {
    expect(await main.s.exec(["echo", "a; echo injected", "$(id)"])).toEqual({ output: "a; echo injected $(id)\n", exitCode: 0, truncated: false });
  });

  it("output is capped and says it was truncated", async () => {
    const r = await main.s.exec(`i=0; while [ $i -lt 3000 ]; do echo 0123456789012345678901234567890123456789012345678901234567890123456789; i=$((i+1)); done`);
    expect(r.truncated).toBe(true);
    expect(r.output.length).toBe(MAX_EXEC_OUTPUT_CHARS);
    expect(r.exitCode).toBe(0);
  });

  it("a command past its timeout is killed with what it started (exit 124)", async () => {
    const r = await main.s.exec("sleep 30 & sleep 30; echo never", { timeoutMs: 300 });
    expect(r.exitCode).toBe(124);
    expect(r.output).not.toContain("never");
    // Nothing of it is left: no sleep among the container's processes.
    const ps = await main.s.exec(["sh", "-c", "for p in /proc/[0-9]*; do cat $p/comm; done"]);
    expect(ps.exitCode).toBe(0);
    expect(ps.output.split("\n")).toContain("node"); // the listing works: the guest runtime is there
    expect(ps.output.split("\n")).not.toContain("sleep");
  });

  it("agent code reaches it as tools.shell.exec, and tool middleware gates it", async () => {
    expect(await value(main.s, `(await tools.shell.exec({ command: ["echo", "from-guest"] })).output`)).toBe("from-guest\n");
    const r = await denied.s.run(`await tools.shell.exec({ command: "echo hi" })`);
    expect(r.error?.name).toBe("ToolError");
    expect(r.error?.message).toMatch(/denied by policy/);
    await expect(denied.s.exec("echo hi")).rejects.toThrow(/denied by policy/);
  });
});

describe("cleanup", () => {
  it("close() removes the container; a container whose owner died is reaped at the next start and by `containers prune`", async () => {
    const docker = await testDocker();
    // An owner that is gone: a process that has exited.
    const dead = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" });
    const deadPid = dead.stdout.trim();
    const orphan = await docker.createContainer({
      Image: image,
      Cmd: ["sleep", "300"],
      Labels: { [CONTAINER_LABEL]: "1", [OWNER_PID_LABEL]: deadPid, [OWNER_HOST_LABEL]: os.hostname() },
      HostConfig: { NetworkMode: "none" },
    });
    await orphan.start();
    const { s, ex } = await open({ shell: false });
    await expect(orphan.inspect()).rejects.toMatchObject({ statusCode: 404 });
    const id = ex.containerId!;
    await s.close();
    expect(await ownContainers()).not.toContain(id);
  });
});
