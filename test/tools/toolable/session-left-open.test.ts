/**
 * Issue 32: a toolable session left open (killed when its run ends, or by the host) never becomes an
 * unhandled rejection in the host — a library host or `agent run` under Node's default
 * `--unhandled-rejections=throw` exited 1 when the killed session's bookkeeping promise rejected.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../../src/execution/in-process/executor.js";
import { Session } from "../../../src/session.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { processesWith, waitFor } from "../../helpers/processes.js";
import { PYTOOL } from "./fixture.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 5 });
});

let unhandled: unknown[] = [];
const record = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on("unhandledRejection", record);
});
afterEach(() => {
  process.off("unhandledRejection", record);
});

/** Node reports unhandled rejections once the microtask queue drains: two macrotask turns see every one. */
const settled = () => new Promise<void>((r) => setImmediate(() => setImmediate(r)));

/** The toolable adapter's live sessions (it forgets one in the same turn its end settles). */
function liveSessions(tools: ToolRegistry): number {
  const entry = (tools as unknown as { adapters: Map<string, { adapter: { sessions: Set<unknown> } }> }).adapters.get("py");
  return entry?.adapter.sessions.size ?? -1;
}

async function load(): Promise<ToolRegistry> {
  const dir = mkdtempSync(path.join(tmpdir(), "tcm-toolable-open-"));
  dirs.push(dir);
  writeFileSync(path.join(dir, "py.yaml"), `type: toolable\nname: py\ncommand: ${JSON.stringify(PYTOOL)}\n# A loaded machine can take seconds to start Python for each --manifest.\ndiscover_timeout: 60\n`);
  return ToolRegistry.load(dir);
}

describe("a toolable session left open", () => {
  it("killed by a library host: its end is not an unhandled rejection", async () => {
    const tools = await load();
    try {
      const s = await tools.openSession("py", "repl", { greeting: "lib-host-open" });
      expect((await s.next())?.["type"]).toBe("session_start");
      s.kill();
      await s.done.catch(() => {});
      await settled();
      expect(unhandled).toEqual([]);
    } finally {
      await tools.close();
    }
  });

  it("left open by guest code: the run's end kills it, and no rejection reaches the host", async () => {
    const tools = await load();
    const dir = dirs[dirs.length - 1] ?? tmpdir();
    const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "store") }), executor: new InProcessExecutor({ tools, defaultTimeoutMs: 20_000 }) });
    await session.start();
    try {
      const r = await session.run(`const s = await tools.py.repl.session({ greeting: "guest-open" }); (await s.next()).type`);
      expect(r.error ?? null).toBeNull();
      expect(r.value).toBe("session_start");
      await waitFor(() => processesWith("guest-open").length === 0, "the session's process to die with its run");
      // The process is gone; its pipes close right after: the adapter forgets the session once it saw the end.
      await waitFor(() => liveSessions(tools) === 0, "the adapter to see the session end");
      await settled();
      expect(unhandled).toEqual([]);
    } finally {
      await session.close();
    }
  });
});
