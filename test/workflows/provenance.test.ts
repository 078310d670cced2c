/**
 * The provenance rules at the library level (src/workflows/provenance.ts), the fail-closed default
 * for an executor that declares no trust, and how provenance is rendered for people and models.
 * The end-to-end behaviour across real executors is in test/security/workflow-provenance.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { HostServices } from "../../src/execution/host.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import type { Executor } from "../../src/execution/protocol.js";
import { formatWorkflow, formatWorkflowList } from "../../src/mcp/format.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { WorkflowLibrary } from "../../src/workflows/library.js";
import { MemoryWorkflowStore } from "./memory-store.js";

const SOURCE = "/** Say hi. */\nexport async function run() { return 'hi'; }\n";

function libraries() {
  const store = new MemoryWorkflowStore();
  return {
    store,
    host: new WorkflowLibrary(store),
    trusted: new WorkflowLibrary(store, { principal: { trust: "trusted", executor: "subprocess" } }),
    untrusted: new WorkflowLibrary(store, { principal: { trust: "untrusted", executor: "sandbox" } }),
  };
}

describe("WorkflowLibrary trust rules", () => {
  test("saves record the principal; the bare (host) library records none", async () => {
    const { store, host, trusted, untrusted } = libraries();
    await host.create({ name: "h", source: SOURCE });
    await trusted.create({ name: "t", source: SOURCE });
    await untrusted.create({ name: "u", source: SOURCE });
    expect(store.saved.map((r) => [r.name, r.provenance?.trust, r.provenance?.executor])).toEqual([
      ["h", undefined, undefined],
      ["t", "trusted", "subprocess"],
      ["u", "untrusted", "sandbox"],
    ]);
    expect(store.saved[2]?.provenance?.savedAt).toBe(store.saved[2]?.updatedAt);
    expect((await host.list()).map((w) => w.provenance?.trust ?? "none")).toEqual(["none", "trusted", "untrusted"]);
  });

  test("only a trusted library refuses to hand out an untrusted workflow for running", async () => {
    const { host, trusted, untrusted } = libraries();
    await untrusted.create({ name: "u", source: SOURCE });
    expect((await untrusted.requireRunnable("u")).name).toBe("u");
    await expect(trusted.requireRunnable("u")).rejects.toMatchObject({ name: "UntrustedWorkflowError" });
    await expect(host.requireRunnable("u")).rejects.toMatchObject({ name: "UntrustedWorkflowError" });
    await expect(trusted.requireRunnable("nope")).rejects.toMatchObject({ name: "NotFoundError" });
  });

  test("a throwing approval callback refuses (the error reaches the caller) and approves nothing", async () => {
    const { store, untrusted } = libraries();
    await untrusted.create({ name: "u", source: SOURCE });
    const asking = new WorkflowLibrary(store, {
      principal: { trust: "trusted", executor: "in-process" },
      untrustedWorkflows: () => {
        throw new Error("no UI");
      },
    });
    await expect(asking.requireRunnable("u")).rejects.toThrow("no UI");
    expect((await store.get("u"))?.provenance?.trust).toBe("untrusted");
    expect(() => asking.setUntrustedWorkflowPolicy("yes" as never)).toThrow(TypeError);
  });

  test("parallel invocations of one untrusted workflow ask the host once", async () => {
    const { store, untrusted } = libraries();
    await untrusted.create({ name: "u", source: SOURCE });
    let asked = 0;
    const asking = new WorkflowLibrary(store, {
      principal: { trust: "trusted", executor: "in-process" },
      untrustedWorkflows: async () => {
        asked++;
        await new Promise((r) => setImmediate(r));
        return true;
      },
    });
    const all = await Promise.all(Array.from({ length: 10 }, () => asking.requireRunnable("u")));
    expect(asked).toBe(1);
    expect(all.every((w) => w.provenance?.trust === "trusted")).toBe(true);
  });

  test("approve keeps source, timestamps and who saved it; already trusted is a no-op", async () => {
    const { store, host, untrusted } = libraries();
    const saved = await untrusted.create({ name: "u", source: SOURCE });
    const approved = await host.approve("u");
    expect(approved).toEqual({ ...saved, provenance: { ...saved.provenance, trust: "trusted" } });
    const writes = store.saved.length;
    await host.approve("u");
    expect(store.saved.length).toBe(writes);
    await expect(host.approve("missing")).rejects.toMatchObject({ name: "NotFoundError" });
  });
});

describe("executors declare trust; undeclared counts as untrusted", () => {
  test("built-in executors and a Session report their level; HostServices without an origin is untrusted", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-trust-"));
    const storage = new FileStorage({ basePath: dir });
    try {
      expect(new InProcessExecutor().trust).toBe("trusted");
      const inner = new InProcessExecutor();
      const undeclared: Executor = {
        kind: "custom",
        capabilities: () => inner.capabilities(),
        start: (s) => inner.start(s),
        run: (c, o) => inner.run(c, o),
        reset: () => inner.reset(),
        close: () => inner.close(),
        get host() {
          return inner.host;
        },
      };
      expect(new Session({ storage, executor: undeclared }).trust).toBe("untrusted");
      const host = await HostServices.create({ storage } as never);
      expect(host.workflows.trust).toBe("untrusted");
      await host.workflows.create({ name: "x", source: SOURCE });
      expect((await host.workflows.get("x"))?.provenance).toMatchObject({ trust: "untrusted", executor: "unknown" });
      await host.close();
    } finally {
      await storage.close();
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  });
});

describe("MCP rendering", () => {
  test("get_workflow says who saved it; list_workflows marks untrusted ones", async () => {
    const { host, untrusted } = libraries();
    await host.create({ name: "h", source: SOURCE });
    await untrusted.create({ name: "u", source: SOURCE });
    const u = (await host.get("u"))!;
    expect(formatWorkflow(u)).toMatch(/^created \S+, updated \S+; untrusted \(saved by a sandbox session at \S+\)$/m);
    expect(formatWorkflow((await host.get("h"))!)).toMatch(/; trusted \(hand-written: no provenance recorded\)$/m);
    const list = formatWorkflowList(await host.list(), "none").split("\n");
    expect(list[1]).toBe("h() — Say hi.");
    expect(list[2]).toBe("u() — Say hi. [untrusted]");
  });
});
