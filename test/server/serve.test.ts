/**
 * `ts-code-mode serve` against the built CLI: fail-closed auth, limits (body size, sessions, idle
 * timeout), SSE streaming and cancel-on-disconnect, per-tenant workspaces, exec's 501, the OpenAPI
 * document, and RemoteExecutor's SessionLostError when the server dies or freezes.
 */
import { mkdir, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { SessionLostError, ValidationError } from "../../src/errors.js";
import { RemoteExecutor } from "../../src/execution/remote/executor.js";
import { ROUTES } from "../../src/server/schemas.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { cli } from "../cli/harness.js";
import { EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";
import { waitFor } from "../helpers/processes.js";
import { api, cleanup, ensureBuilt, startServe, tempDir, TOKEN, REPO, type ServeProcess } from "./harness.js";

const servers: ServeProcess[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  await Promise.all(dirs.splice(0).map((d) => cleanup(d)));
});

async function serve(args: string[]): Promise<ServeProcess> {
  const dir = await tempDir();
  dirs.push(dir);
  const s = await startServe(["--base", dir, "--tools", EXAMPLE_TOOLS_PATH, ...args]);
  servers.push(s);
  return s;
}

async function createSession(url: string, headers: Record<string, string> = {}): Promise<string> {
  const r = await api(url, "POST", "/sessions", { json: {}, headers });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return (r.body as { id: string }).id;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("auth fails closed", () => {
  let s: ServeProcess;
  beforeAll(async () => {
    s = await serve(["--token", TOKEN]);
  }, 60_000);

  it("refuses a missing or wrong token with 401 UnauthorizedError; /health needs none", async () => {
    for (const token of [null, "wrong-token-0123456789abcdef", TOKEN.slice(0, -1)]) {
      const r = await api(s.url, "POST", "/sessions", { json: {}, token });
      expect(r.status).toBe(401);
      expect((r.body as { error: { name: string } }).error.name).toBe("UnauthorizedError");
    }
    expect((await api(s.url, "GET", "/info", { token: null })).status).toBe(401);
    expect((await api(s.url, "GET", "/openapi.json", { token: null })).status).toBe(401);
    expect(await api(s.url, "GET", "/health", { token: null })).toMatchObject({ status: 200, body: { ok: true } });
    expect((await api(s.url, "GET", "/info")).body).toMatchObject({ name: "ts-code-mode", executor: "subprocess", exec: false });
  });

  it("refuses to start without a token, with --no-auth off loopback, or with a short token (exit 2)", async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const noToken = await cli(["serve", "--base", dir, "--port", "0"], { cwd: dir });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/token is required/);
    const open = await cli(["serve", "--base", dir, "--port", "0", "--no-auth", "--host", "0.0.0.0"], { cwd: dir });
    expect(open.code).toBe(2);
    expect(open.stderr).toMatch(/--no-auth is refused on 0\.0\.0\.0/);
    const short = await cli(["serve", "--base", dir, "--port", "0", "--token", "short"], { cwd: dir });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/at least 16 characters/);
  });

  it("a broken tool file stops serve at start (exit 2) with the file and the fix named, before it listens", async () => {
    const dir = await tempDir();
    dirs.push(dir);
    await mkdir(path.join(dir, "tools"), { recursive: true });
    await writeFile(path.join(dir, "tools", "broken.yaml"), "name: [not, a, name\n");
    const r = await cli(["serve", "--base", dir, "--port", "0", "--token", TOKEN], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Fix the tool file/);
    expect(r.stderr).toMatch(/broken\.yaml/);
    expect(r.stderr).not.toMatch(/listening on/);
  });

  it("without a token on loopback, a request addressed to another host name is refused (DNS rebinding)", async () => {
    const open = await serve(["--no-auth"]);
    expect((await api(open.url, "GET", "/info", { token: null })).status).toBe(200);
    // fetch will not send another Host header; node:http will, as a rebinding browser would.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = http.get(new URL("/info", open.url), { headers: { host: "evil.example" } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on("error", reject);
    });
    expect(status).toBe(403);
  });
});

describe("limits", () => {
  it("a body over --max-body-bytes is refused with 413 before it is parsed", async () => {
    const s = await serve(["--token", TOKEN, "--max-body-bytes", "2048"]);
    const id = await createSession(s.url);
    const r = await api(s.url, "POST", `/sessions/${id}/run`, { json: { code: `"${"x".repeat(5_000)}"` } });
    expect(r.status).toBe(413);
    expect((r.body as { error: { name: string } }).error.name).toBe("PayloadTooLargeError");
    expect((await api(s.url, "POST", `/sessions/${id}/run`, { json: { code: "1 + 1" } })).body).toMatchObject({ ok: true, value: 2 });
  });

  it("--max-sessions refuses one more with 429 SessionLimitError until one is closed", async () => {
    const s = await serve(["--token", TOKEN, "--max-sessions", "2"]);
    const a = await createSession(s.url);
    await createSession(s.url);
    const third = await api(s.url, "POST", "/sessions", { json: {} });
    expect(third.status).toBe(429);
    expect((third.body as { error: { name: string } }).error.name).toBe("SessionLimitError");
    expect((await api(s.url, "DELETE", `/sessions/${a}`)).status).toBe(200);
    await createSession(s.url);
  });

  it("--idle-timeout closes an idle session and its child process dies", async () => {
    const s = await serve(["--token", TOKEN, "--idle-timeout", "1"]);
    const id = await createSession(s.url);
    const r = await api(s.url, "POST", `/sessions/${id}/run`, { json: { code: "process.pid" } });
    const pid = (r.body as { value: number }).value;
    expect(isAlive(pid)).toBe(true);
    await waitFor(() => !isAlive(pid), "the idle session's child process to end", 20_000);
    const after = await api(s.url, "POST", `/sessions/${id}/run`, { json: { code: "1" } });
    expect(after.status).toBe(404);
    expect((after.body as { error: { name: string } }).error.name).toBe("SessionLostError");
  });

  it("invalid requests are 400 ValidationError naming the field; exec is 501 NotSupportedError here", async () => {
    const s = await serve(["--token", TOKEN]);
    const id = await createSession(s.url);
    const bad = await api(s.url, "POST", `/sessions/${id}/run`, { json: { code: 1, extra: true } });
    expect(bad.status).toBe(400);
    expect((bad.body as { error: { name: string; message: string } }).error).toMatchObject({ name: "ValidationError", message: expect.stringMatching(/code/) });
    const exec = await api(s.url, "POST", `/sessions/${id}/exec`, { json: { command: ["ls"] } });
    expect(exec.status).toBe(501);
    expect((exec.body as { error: { name: string } }).error.name).toBe("NotSupportedError");
  });
});

describe("streaming", () => {
  let s: ServeProcess;
  beforeAll(async () => {
    s = await serve(["--token", TOKEN]);
  }, 60_000);

  it("Accept: text/event-stream streams output events before the result event", async () => {
    const id = await createSession(s.url);
    const res = await fetch(new URL(`/sessions/${id}/run`, s.url), {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ code: "console.log('first'); await new Promise((r) => setTimeout(r, 300)); console.error('second'); 6 * 7" }),
    });
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const text = await res.text();
    const events = [...text.matchAll(/event: (\w+)\ndata: (.*)\n/g)].map((m) => ({ event: m[1], data: JSON.parse(m[2] ?? "null") as Record<string, unknown> }));
    expect(events.map((e) => e.event)).toEqual(["output", "output", "result"]);
    expect(events[0]?.data).toEqual({ stream: "stdout", text: "first\n" });
    expect(events[1]?.data).toEqual({ stream: "stderr", text: "second\n" });
    expect(events[2]?.data).toMatchObject({ ok: true, value: 42, stdout: "first\n", stderr: "second\n" });
  });

  it("a client that disconnects cancels its run: the session's next run is not stuck behind it", async () => {
    const id = await createSession(s.url);
    const controller = new AbortController();
    const res = await fetch(new URL(`/sessions/${id}/run`, s.url), {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ code: "console.log('started'); await new Promise((r) => setTimeout(r, 600_000))", timeoutMs: 600_000 }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    let seen = "";
    while (!seen.includes("started")) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    // Runs of one session queue: without the cancel this waits ten minutes (and the test times out).
    const next = await api(s.url, "POST", `/sessions/${id}/run`, { json: { code: "'after'" } });
    expect(next.body).toMatchObject({ ok: true, value: "after" });
  });

  it("RemoteExecutor streams onOutput and cancels through its signal", async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const remote = new RemoteExecutor({ url: s.url, token: TOKEN, checkStorage: false });
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: remote });
    try {
      const chunks: string[] = [];
      const r = await session.run("console.log('a'); await new Promise((r) => setTimeout(r, 200)); console.log('b'); 1", { onOutput: (c) => chunks.push(c.text) });
      expect(r.ok).toBe(true);
      expect(chunks.join("")).toBe("a\nb\n");
      const controller = new AbortController();
      const running = session.run("console.log('go'); await new Promise((r) => setTimeout(r, 600_000))", {
        timeoutMs: 600_000,
        signal: controller.signal,
        onOutput: () => controller.abort(),
      });
      expect((await running).error?.name).toBe("CancelledError");
    } finally {
      await session.close();
    }
  });
});

describe("workspaces by header", () => {
  it("requires a valid header, and a session answers only its own workspace", async () => {
    const s = await serve(["--token", TOKEN, "--workspace-header", "X-Workspace"]);
    expect((await api(s.url, "POST", "/sessions", { json: {} })).status).toBe(400);
    expect((await api(s.url, "POST", "/sessions", { json: {}, headers: { "x-workspace": "../up" } })).status).toBe(400);
    const a = await createSession(s.url, { "x-workspace": "team-a" });
    const b = await createSession(s.url, { "x-workspace": "team-b" });
    await api(s.url, "POST", `/sessions/${a}/run`, { json: { code: "await artifacts.save('note.txt', 'a only')" }, headers: { "x-workspace": "team-a" } });
    const other = await api(s.url, "POST", `/sessions/${a}/run`, { json: { code: "1" }, headers: { "x-workspace": "team-b" } });
    expect(other.status).toBe(404);
    const list = await api(s.url, "GET", `/sessions/${b}/artifacts`, { headers: { "x-workspace": "team-b" } });
    expect(list.body).toEqual({ value: [] });
    const own = await api(s.url, "GET", `/sessions/${a}/artifacts/data?name=note.txt`, { headers: { "x-workspace": "team-a" } });
    expect(own.body).toBe("a only");
  });
});

describe("the OpenAPI document", () => {
  it("has every route, with the request schemas the server validates with", async () => {
    const s = await serve(["--token", TOKEN]);
    const doc = (await api(s.url, "GET", "/openapi.json")).body as { openapi: string; paths: Record<string, Record<string, { operationId: string; requestBody?: { content: Record<string, { schema: unknown }> }; responses: Record<string, unknown> }>> };
    expect(doc.openapi).toBe("3.1.0");
    for (const [id, spec] of Object.entries(ROUTES)) {
      const op = doc.paths[spec.path]?.[spec.method];
      expect(op, `${spec.method} ${spec.path}`).toBeDefined();
      expect(op?.operationId).toBe(id);
      expect(Object.keys(op?.responses ?? {})).toContain("default");
      if ("body" in spec) expect(op?.requestBody?.content["application/json"]?.schema).toEqual(z.toJSONSchema(spec.body, { io: "input", target: "draft-2020-12", unrepresentable: "any" }));
    }
    const count = Object.values(doc.paths).reduce((n, p) => n + Object.keys(p).length, 0);
    expect(count).toBe(Object.keys(ROUTES).length);
  });
});

describe("RemoteExecutor when the server is gone", () => {
  it("a killed server gives SessionLostError (runs: in the result; facade calls: thrown), never a hang", async () => {
    const s = await serve(["--token", TOKEN, "--client-storage"]);
    const dir = await tempDir();
    dirs.push(dir);
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new RemoteExecutor({ url: s.url, token: TOKEN, shareStorage: true }) });
    expect((await session.run("1 + 1")).value).toBe(2);
    await s.stop("SIGKILL");
    const r = await session.run("1 + 1");
    expect(r.error?.name).toBe("SessionLostError");
    await expect(session.listTools()).rejects.toBeInstanceOf(SessionLostError);
    await session.close();
  });

  it("a frozen server gives SessionLostError at the request deadline", async () => {
    const s = await serve(["--token", TOKEN]);
    const dir = await tempDir();
    dirs.push(dir);
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new RemoteExecutor({ url: s.url, token: TOKEN, checkStorage: false, requestTimeoutMs: 5_000 }) });
    // 5 s, not less: the same limit bounds the session's creation, which takes over 1 s on a loaded machine.
    await session.start();
    s.child.kill("SIGSTOP");
    try {
      const r = await session.run("1", { timeoutMs: 500 });
      expect(r.error?.name).toBe("SessionLostError");
      expect(r.error?.message).toMatch(/did not answer/);
    } finally {
      s.child.kill("SIGCONT");
    }
    await session.close();
  });

  it("a Session whose storage is not the server's is refused at start (ValidationError)", async () => {
    const s = await serve(["--token", TOKEN]);
    const dir = await tempDir();
    dirs.push(dir);
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new RemoteExecutor({ url: s.url, token: TOKEN }) });
    await expect(session.start()).rejects.toBeInstanceOf(ValidationError);
    await expect(session.start()).rejects.toThrow(/--client-storage/);
  });
});

describe("the CLI's --remote", () => {
  it("run --remote runs the code on the server (token from TS_CODE_MODE_TOKEN)", async () => {
    const s = await serve(["--token", TOKEN]);
    const dir = await tempDir();
    dirs.push(dir);
    const child = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      void import("node:child_process").then(({ spawn }) => {
        const p = spawn(process.execPath, [path.join(REPO, "dist/cli/main.js"), "run", "--remote", s.url, "--json", "(await tools.list()).length"], {
          cwd: dir,
          env: { ...process.env, TS_CODE_MODE_TOKEN: TOKEN },
        });
        let stdout = "";
        p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        p.on("close", (code) => resolve({ code, stdout }));
      });
    });
    expect(child.code).toBe(0);
    expect(JSON.parse(child.stdout)).toMatchObject({ ok: true, value: 7 });
    const refused = await cli(["run", "--remote", s.url, "1"], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/UnauthorizedError|bearer token/);
  });
});
