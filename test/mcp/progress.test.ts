/**
 * Long run_code calls over stdio and HTTP: with a progress token the server sends heartbeats, and a
 * client's notifications/cancelled stops the run (a `for(;;){}` loop that only a restart can stop)
 * while the session stays usable; what the run prints arrives as logging notifications while it runs.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { LoggingMessageNotificationSchema, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  callTool,
  cleanup,
  connectHttp,
  connectStdio,
  ensureBuilt,
  isAlive,
  startHttpServer,
  structuredOf,
  tempDir,
  waitUntil,
  type HttpServerProcess,
} from "./harness.js";

let dir: string;
const toClose: Array<() => Promise<unknown>> = [];

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  for (const close of toClose.splice(0).reverse()) await close().catch(() => undefined);
  await cleanup(dir);
});

const transports: Record<string, () => Promise<Client>> = {
  stdio: async () => {
    const conn = await connectStdio(["--base", "base"], { cwd: dir });
    toClose.push(() => conn.close());
    return conn.client;
  },
  http: async () => {
    const server: HttpServerProcess = await startHttpServer(["--base", "base"], { cwd: dir });
    toClose.push(() => server.stop());
    const client = await connectHttp(server.url);
    toClose.push(() => client.close());
    return client;
  },
};

async function childPid(client: Client): Promise<number> {
  return structuredOf<{ value: number }>(await callTool(client, "run_code", { code: "process.pid" })).value;
}

describe.each(Object.keys(transports))("mcp over %s: progress and cancellation", (transport) => {
  it("sends progress while run_code runs, and a cancel stops a for(;;){} loop; the next run works", async () => {
    const client = await transports[transport]!();
    const before = await childPid(client);
    const controller = new AbortController();
    const progress: Progress[] = [];
    // Only a cancel can end this run before its (long) timeout.
    const call = client.callTool({ name: "run_code", arguments: { code: "for (;;) {}", timeout_ms: 600_000 } }, undefined, {
      signal: controller.signal,
      timeout: 600_000,
      onprogress: (p) => {
        progress.push(p);
        controller.abort("the user pressed stop");
      },
    });
    await expect(call).rejects.toThrow(/stop|abort|cancel/i);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]!.message).toMatch(/^run_code: [\d.]+ s elapsed$/);
    expect(progress[0]!.progress).toBeGreaterThan(0);
    // The looping child was killed and the session goes on with a fresh one.
    await waitUntil(() => !isAlive(before), `the looping child ${before} to be gone`);
    const after = await callTool(client, "run_code", { code: "40 + 2" });
    expect(structuredOf(after)).toMatchObject({ ok: true, value: 42 });
    expect(await childPid(client)).not.toBe(before);
  });

  it("streams the run's stdout/stderr as logging notifications while it runs, only when the client asked for progress", async () => {
    const client = await transports[transport]!();
    const logs: Array<{ level: string; data: unknown; settled: boolean }> = [];
    let settled = false;
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push({ level: n.params.level, data: n.params.data, settled });
    });
    const code = 'console.log("first"); await new Promise((r) => setTimeout(r, 300)); console.log("second"); console.error("oops"); 1';
    const call = client.callTool({ name: "run_code", arguments: { code } }, undefined, { onprogress: () => undefined });
    void call.then(() => (settled = true));
    expect(structuredOf(await call)).toMatchObject({ ok: true, value: 1 });
    // The first line came on its own, before the run ended (the second line was printed later).
    expect(logs[0]).toEqual({ level: "info", data: "first\n", settled: false });
    expect(logs.filter((l) => l.level === "info").map((l) => l.data).join("")).toBe("first\nsecond\n");
    expect(logs.filter((l) => l.level === "warning").map((l) => l.data).join("")).toBe("oops\n");
    // Without a progress token nothing is streamed: the output comes with the reply only.
    logs.length = 0;
    await callTool(client, "run_code", { code: 'console.log("quiet"); 2' });
    expect(logs).toEqual([]);
  });
});
