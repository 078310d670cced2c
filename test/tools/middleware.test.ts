/**
 * Tool middleware: each built-in alone, then the chain end to end through real sessions on both
 * executors, where a deny rule and an approval callback must stop a call before the tool runs.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { approval, auditLog, callsPerRun, compose, globToRegExp, policy, retry, type AuditEvent, type ToolCallContext, type ToolMiddleware } from "../../src/tools/middleware/index.js";
import type { CallContext, ToolAdapter, ToolInfo } from "../../src/tools/protocol.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ProbeAdapter } from "../helpers/adapters.js";

const ctx = (over: Partial<ToolCallContext> = {}): ToolCallContext => ({
  tool: "git",
  callable: "push",
  args: {},
  executor: "test",
  requestId: "r1",
  runId: "run1",
  timeoutMs: undefined,
  signal: undefined,
  ...over,
});

/** Fails with `code` the first `failures` calls, then answers "ok". */
class FlakyAdapter implements ToolAdapter {
  readonly name = "flaky";
  calls = 0;
  constructor(
    private readonly failures: number,
    private readonly code: "TIMEOUT" | "INVALID_INPUT",
  ) {}
  async info(): Promise<ToolInfo> {
    return { name: "flaky", type: "toolable", description: "", tags: [], direct: null, callables: [{ name: "go", description: "", params: [], returns: "string" }] };
  }
  async call(_c: string | null, _a: Record<string, unknown>, _ctx: CallContext): Promise<unknown> {
    this.calls++;
    if (this.calls <= this.failures) throw new ToolError({ tool: "flaky", callable: "go", code: this.code, message: `failure ${this.calls}` });
    return "ok";
  }
  async close(): Promise<void> {}
}

describe("globs", () => {
  it("match within a part with *, across parts with **", () => {
    expect(globToRegExp("git.*").test("git.push")).toBe(true);
    expect(globToRegExp("git.*").test("git")).toBe(false);
    expect(globToRegExp("*.delete").test("files.delete")).toBe(true);
    expect(globToRegExp("*").test("files.delete")).toBe(false);
    expect(globToRegExp("**").test("files.delete")).toBe(true);
    expect(globToRegExp("a+b.c").test("a+b.c")).toBe(true);
  });
});

describe("built-in middleware", () => {
  const reached = () => async (): Promise<unknown> => "ran";

  it("compose runs first middleware outermost", async () => {
    const order: string[] = [];
    const mw = (n: string): ToolMiddleware => async (_c, next) => {
      order.push(`${n}>`);
      const r = await next();
      order.push(`<${n}`);
      return r;
    };
    await compose([mw("a"), mw("b")], async () => order.push("tool"))(ctx());
    expect(order).toEqual(["a>", "b>", "tool", "<b", "<a"]);
  });

  it("policy: deny wins, allow limits, refusals are PERMISSION ToolErrors", async () => {
    const p = policy({ allow: ["git.*"], deny: ["git.push"] });
    await expect(p(ctx(), reached())).rejects.toMatchObject({ name: "ToolError", code: "PERMISSION", recoverable: false });
    await expect(p(ctx({ callable: "status" }), reached())).resolves.toBe("ran");
    await expect(p(ctx({ tool: "rm", callable: null }), reached())).rejects.toThrow(/rm is not allowed by policy/);
  });

  it("approval: approve, refuse with a reason, edit the arguments", async () => {
    await expect(approval(() => true)(ctx(), reached())).resolves.toBe("ran");
    await expect(approval(() => ({ approve: false, reason: "not on Fridays" }))(ctx(), reached())).rejects.toThrow(/git.push was not approved: not on Fridays/);
    const c = ctx({ args: { force: true } });
    await approval(() => ({ approve: true, args: { force: false } }))(c, reached());
    expect(c.args).toEqual({ force: false });
    // `only` limits which calls ask.
    let asked = 0;
    await approval(() => (asked++, false), { only: ["rm.*"] })(ctx(), reached());
    expect(asked).toBe(0);
  });

  it("retry: repeats transient failures with backoff, not input errors", async () => {
    const flaky = new FlakyAdapter(2, "TIMEOUT");
    const r = retry({ attempts: 3, baseDelayMs: 1 });
    await expect(r(ctx(), () => flaky.call(null, {}, {}))).resolves.toBe("ok");
    expect(flaky.calls).toBe(3);
    const bad = new FlakyAdapter(5, "INVALID_INPUT");
    await expect(r(ctx(), () => bad.call(null, {}, {}))).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(bad.calls).toBe(1);
    const tooFlaky = new FlakyAdapter(5, "TIMEOUT");
    await expect(r(ctx(), () => tooFlaky.call(null, {}, {}))).rejects.toThrow(/failure 3/);
  });

  it("callsPerRun counts per run", async () => {
    const limit = callsPerRun(2);
    await limit(ctx(), reached());
    await limit(ctx(), reached());
    await expect(limit(ctx(), reached())).rejects.toThrow(/more than 2 tool calls in one run/);
    await expect(limit(ctx({ runId: "run2" }), reached())).resolves.toBe("ran");
  });

  it("auditLog needs a destination", () => {
    expect(() => auditLog({})).toThrow(/file or an onEvent/);
  });
});

for (const [kind, make] of [
  ["InProcessExecutor", (tools: ToolRegistry, middleware: ToolMiddleware[]) => new InProcessExecutor({ tools, middleware })],
  ["SubprocessExecutor", (tools: ToolRegistry, middleware: ToolMiddleware[]) => new SubprocessExecutor({ tools, middleware })],
] as const) {
  describe(`middleware through a session (${kind})`, () => {
    let dir: string;
    let session: Session;
    let probe: ProbeAdapter;
    const events: AuditEvent[] = [];
    const approvals: string[] = [];

    beforeEach(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), "tcm-mw-"));
      probe = new ProbeAdapter();
      events.length = 0;
      approvals.length = 0;
      const tools = new ToolRegistry();
      tools.register(probe);
      const middleware = [
        auditLog({ file: path.join(dir, "logs", "audit.jsonl"), onEvent: (e) => events.push(e) }),
        policy({ deny: ["probe.sleep"] }),
        approval(({ args }) => {
          approvals.push(JSON.stringify(args));
          if ((args["value"] as string) === "forbidden") return { approve: false, reason: "value is forbidden" };
          if ((args["value"] as string) === "edit me") return { approve: true, args: { value: "edited" } };
          return true;
        }),
      ];
      session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "s") }), executor: make(tools, middleware) });
      await session.start();
    });

    afterEach(async () => {
      await session.close();
      await rm(dir, { recursive: true, force: true });
    });

    it("a deny rule stops the call before the tool runs; the agent sees a PERMISSION ToolError", async () => {
      const r = await session.run("let out; try { await tools.probe.sleep({ ms: 1 }) } catch (e) { out = [e.name, e.code, e.message] }; out");
      expect(r.value).toEqual(["ToolError", "PERMISSION", expect.stringMatching(/^tools\.probe\.sleep: probe\.sleep is denied by policy/)]);
      expect(probe.contexts).toHaveLength(0);
      expect(approvals).toHaveLength(0);
    });

    it("an approval callback refuses (tool never runs) or edits the arguments", async () => {
      const refused = await session.run("await tools.probe.echo({ value: 'forbidden' })");
      expect(refused.error?.name).toBe("ToolError");
      expect(refused.error?.message).toMatch(/not approved: value is forbidden/);
      expect(probe.contexts).toHaveLength(0);
      const edited = await session.run("await tools.probe.echo({ value: 'edit me' })");
      expect(edited.value).toBe("edited");
      expect(probe.contexts).toHaveLength(1);
    });

    it("the audit log records every call with executor, run and outcome, as JSON lines", async () => {
      await session.run("await tools.probe.echo({ value: 1 }); await tools.probe.echo({ value: 2 })");
      await session.run("await tools.probe.sleep({ ms: 1 })");
      const lines = (await readFile(path.join(dir, "logs", "audit.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l) as AuditEvent);
      expect(lines.map((l) => [l.call, l.ok])).toEqual([["probe.echo", true], ["probe.echo", true], ["probe.sleep", false]]);
      expect(lines[0]!.executor).toBe(kind === "InProcessExecutor" ? "in-process" : "subprocess");
      expect(lines[0]!.runId).toBe(lines[1]!.runId);
      expect(lines[2]!.runId).not.toBe(lines[0]!.runId);
      expect(lines[2]!.error).toMatchObject({ name: "ToolError", code: "PERMISSION" });
      expect(events).toHaveLength(3);
    });
  });
}
