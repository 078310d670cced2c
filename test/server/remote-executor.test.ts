/**
 * RemoteExecutor as a full executor (issue 33 item 4), against the built `serve`: a tenant's
 * workspace (`workspace`, `headers`, `run --remote --workspace`, `mcp --remote --workspace`),
 * `session.exec` on a server whose executor runs commands (a real container), and the output a
 * run had streamed before its server died, kept in the SessionLostError result.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import { RemoteExecutor } from "../../src/execution/remote/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";
import { ensureTestImage } from "../helpers/container.js";
import { callTool, connectStdio, runCli, structuredOf } from "../mcp/harness.js";
import { cleanup, ensureBuilt, startServe, tempDir, TOKEN, type ServeProcess } from "./harness.js";

const servers: ServeProcess[] = [];
const dirs: string[] = [];
const sessions: Session[] = [];

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

afterAll(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  await Promise.all(dirs.splice(0).map((d) => cleanup(d)));
});

async function serve(args: string[]): Promise<{ server: ServeProcess; dir: string }> {
  const dir = await tempDir();
  dirs.push(dir);
  const server = await startServe(["--base", dir, "--tools", EXAMPLE_TOOLS_PATH, ...args]);
  servers.push(server);
  return { server, dir };
}

function session(storage: FileStorage, executor: RemoteExecutor): Session {
  const s = new Session({ storage, executor });
  sessions.push(s);
  return s;
}

describe("workspaces (serve --workspace-header X-Workspace)", () => {
  let server: ServeProcess;
  let dir: string;
  beforeAll(async () => {
    ({ server, dir } = await serve(["--token", TOKEN, "--workspace-header", "X-Workspace"]));
  }, 60_000);

  it("RemoteExecutor({ workspace }) works in that tenant's workspace; another tenant does not see it", async () => {
    const a = session(new FileStorage({ basePath: dir, workspaceId: "team-a" }), new RemoteExecutor({ url: server.url, token: TOKEN, workspace: "team-a" }));
    const saved = await a.run("await artifacts.save('note.txt', 'for team a'); (await artifacts.list()).map((x) => x.name)");
    expect(saved.error).toBeNull();
    expect(saved.value).toEqual(["note.txt"]);
    // The facade reads the same workspace the guest wrote.
    expect(await a.loadArtifact("note.txt")).toBe("for team a");
    expect(existsSync(path.join(dir, "workspaces", "team-a", "artifacts"))).toBe(true);

    // `headers` carries the workspace header as given (here: the same header, another tenant).
    const b = session(new FileStorage({ basePath: dir, workspaceId: "team-b" }), new RemoteExecutor({ url: server.url, token: TOKEN, headers: { "X-Workspace": "team-b" } }));
    expect((await b.run("await artifacts.exists('note.txt')")).value).toBe(false);
  });

  it("refuses what cannot work, naming the fix", async () => {
    const noWorkspace = session(new FileStorage({ basePath: dir }), new RemoteExecutor({ url: server.url, token: TOKEN }));
    await expect(noWorkspace.start()).rejects.toThrow(/x-workspace header is required/);
    // The storage must be the workspace's: the server compares.
    const wrongStorage = session(new FileStorage({ basePath: dir }), new RemoteExecutor({ url: server.url, token: TOKEN, workspace: "team-a" }));
    await expect(wrongStorage.start()).rejects.toThrow(/workspace team-a/);
    const both = session(new FileStorage({ basePath: dir, workspaceId: "team-a" }), new RemoteExecutor({ url: server.url, token: TOKEN, workspace: "team-a", headers: { "x-workspace": "team-b" } }));
    await expect(both.start()).rejects.toThrow(/give one/);
    expect(() => new RemoteExecutor({ url: server.url, token: TOKEN, workspace: "../up" })).toThrow(ValidationError);
    expect(() => new RemoteExecutor({ url: server.url, headers: { Authorization: "Bearer x" } })).toThrow(/give the server's token as token/);
    expect(() => new RemoteExecutor({ url: server.url, headers: { "X-A": "1\r\nX-B: 2" } })).toThrow(/line break/);
  });

  it("run --remote --workspace and mcp --remote --workspace work in the tenant's workspace", async () => {
    const cwd = await tempDir();
    dirs.push(cwd);
    const env = { ...process.env, TS_CODE_MODE_TOKEN: TOKEN };
    const run = await runCli(["run", "--remote", server.url, "--workspace", "team-c", "--json", "await artifacts.save('from-run.txt', 'c'); 'saved'"], { cwd, env });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, value: "saved" });
    expect(existsSync(path.join(dir, "workspaces", "team-c", "artifacts"))).toBe(true);

    const mcp = await connectStdio(["--remote", server.url, "--remote-token", TOKEN, "--base", dir, "--workspace", "team-c"], { cwd });
    try {
      const r = structuredOf<{ ok: boolean; value: unknown; error: unknown }>(await callTool(mcp.client, "run_code", { code: "await artifacts.load('from-run.txt')" }));
      expect(r.error).toBeNull();
      expect(r.value).toBe("c");
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it("a workspace given to a server without workspaces is refused, naming --workspace-header", async () => {
    const { server: plain, dir: plainDir } = await serve(["--token", TOKEN]);
    const s = session(new FileStorage({ basePath: plainDir, workspaceId: "team-a" }), new RemoteExecutor({ url: plain.url, token: TOKEN, workspace: "team-a" }));
    await expect(s.start()).rejects.toThrow(/--workspace-header X-Workspace/);
  });
});

describe("session.exec through RemoteExecutor", () => {
  it("runs the command in the server's container", async () => {
    const image = await ensureTestImage();
    const { server, dir } = await serve(["--token", TOKEN, "--executor", "container", "--image", image, "--spare-executors", "0"]);
    const s = session(new FileStorage({ basePath: dir }), new RemoteExecutor({ url: server.url, token: TOKEN }));
    const r = await s.exec(["sh", "-c", "echo in-container; uname -s"]);
    expect(r).toMatchObject({ exitCode: 0, truncated: false });
    expect(r.output).toMatch(/in-container\s+Linux/);
    expect((await s.exec("exit 3")).exitCode).toBe(3);
  }, 120_000);

  it("a server whose executor cannot run commands answers NotSupportedError naming the container executor", async () => {
    const { server, dir } = await serve(["--token", TOKEN, "--executor", "in-process"]);
    const s = session(new FileStorage({ basePath: dir }), new RemoteExecutor({ url: server.url, token: TOKEN }));
    const err = await s.exec(["true"]).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err?.name).toBe("NotSupportedError");
    expect(err?.message).toMatch(/container executor/);
  });
});

describe("a server that dies mid-run", () => {
  it("the SessionLostError result keeps the output the run had streamed", async () => {
    const { server, dir } = await serve(["--token", TOKEN]);
    const s = session(new FileStorage({ basePath: dir }), new RemoteExecutor({ url: server.url, token: TOKEN }));
    let killed = false;
    const out: string[] = [];
    const r = await s.run("console.log('before the crash'); console.error('on stderr'); await new Promise((r) => setTimeout(r, 600_000))", {
      timeoutMs: 600_000,
      // The kill waits until both lines reached this client: what the server streamed, not a guess.
      onOutput: (chunk) => {
        out.push(chunk.text);
        if (killed) return;
        const seen = out.join("");
        if (seen.includes("before the crash") && seen.includes("on stderr")) {
          killed = true;
          server.child.kill("SIGKILL");
        }
      },
    });
    expect(r.error?.name).toBe("SessionLostError");
    expect(r.stdout).toBe("before the crash\n");
    expect(r.stderr).toBe("on stderr\n");
  }, 60_000);
});
