/**
 * Replies count toward a session's in-flight byte limit as arguments do: parallel artifacts.load
 * calls of a big artifact cannot make the host hold more than the limit (64 parallel loads of a
 * 50 MiB artifact took the host to 3.7 GB). Real HostServices over a real FileStorage, and the
 * real RpcProvider that every out-of-process executor answers calls with; sizes are small and
 * the limit is set per test (HostServicesOptions.maxInFlightBytes).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HostServices } from "../../src/execution/host.js";
import { RpcProvider } from "../../src/execution/rpc/provider.js";
import type { HostToGuest } from "../../src/execution/rpc/protocol.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { ToolRegistry } from "../../src/tools/registry.js";

const KB = 1024;

describe("in-flight bytes: arguments and replies", () => {
  let dir: string;
  let host: HostServices;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-inflight-"));
    host = await HostServices.create({ storage: new FileStorage({ basePath: dir }), tools: new ToolRegistry(), origin: { kind: "test" }, maxInFlightBytes: 1_024 * KB });
    await host.dispatch("artifacts", "save", ["big", "x".repeat(300 * KB)]);
  });
  afterEach(async () => {
    await host.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("parallel loads past the limit fail with a ValidationError; one at a time they all succeed", async () => {
    // Held, as the executors hold a reply until it reaches the guest: none is given back while the
    // others start, so exactly three 300 KB loads fit in 1 MB however the reads interleave.
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => host.dispatchHeld("artifacts", "load", ["big"])));
    const loaded = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(loaded.length).toBe(3);
    expect(refused.length).toBe(5);
    for (const r of loaded) r.value.release();
    for (const r of refused) {
      expect(r.reason).toMatchObject({ name: "ValidationError", message: expect.stringMatching(/^artifacts\.load: the namespace calls in flight already hold .* await some calls before starting more/) });
    }
    for (let i = 0; i < 8; i++) expect(await host.dispatch("artifacts", "load", ["big"])).toHaveLength(300 * KB);
    expect(host.inFlight.held).toBe(0);
  });

  it("an artifact larger than the whole limit is refused by name, and nothing stays held", async () => {
    // Saved through storage directly: as a call's argument it would be over the limit itself.
    await host.artifacts.save("huge", "y".repeat(2_000 * KB));
    await expect(host.dispatch("artifacts", "load", ["huge"])).rejects.toMatchObject({
      name: "ValidationError",
      message: expect.stringMatching(/^artifacts\.load: this call needs 2 MB for artifact "huge", more than the 1 MB a session's calls may hold at once/),
    });
    expect(host.inFlight.held).toBe(0);
  });

  it("arguments count too: a call whose arguments pass the limit is refused", async () => {
    await expect(host.dispatch("artifacts", "save", ["too-big", "z".repeat(2_000 * KB)])).rejects.toMatchObject({
      name: "ValidationError",
      message: expect.stringMatching(/^artifacts\.save: this call needs 2 MB for the arguments, more than the 1 MB/),
    });
    expect(host.inFlight.held).toBe(0);
  });

  it("over RPC, a reply stays counted until it has been sent to the guest", async () => {
    const sent: HostToGuest[] = [];
    let heldWhileSending = -1;
    const provider = new RpcProvider(
      host,
      (m) => {
        heldWhileSending = host.inFlight.held;
        sent.push(m);
      },
      () => ({}),
    );
    await provider.handle({ type: "call", callId: 1, ns: "artifacts", op: "load", args: ["big"] });
    expect(sent).toMatchObject([{ type: "reply", callId: 1, ok: true }]);
    expect(heldWhileSending).toBeGreaterThanOrEqual(300 * KB);
    expect(host.inFlight.held).toBe(0);

    // Eight at once over RPC: the ones past the limit get an error reply, none is lost.
    await Promise.all(Array.from({ length: 8 }, (_, i) => provider.handle({ type: "call", callId: 10 + i, ns: "artifacts", op: "load", args: ["big"] })));
    const replies = sent.slice(1);
    expect(replies).toHaveLength(8);
    expect(replies.filter((r) => r.type === "reply" && !r.ok).length).toBeGreaterThan(0);
    expect(host.inFlight.held).toBe(0);
  });
});
