/**
 * Tool middleware: each built-in alone, then the chain end to end through real sessions on both
 * executors, where a deny rule and an approval callback must stop a call before the tool runs.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { approval, auditLog, callsPerRun, compose, globToRegExp, policy, retry, type AuditEvent, type ToolCallContext, type ToolMiddleware } from "../../src/tools/middleware/index.js";
import type { CallContext, CommandPlace, ToolAdapter, ToolInfo } from "../../src/tools/protocol.js";
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
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
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

/** One callable taking a whole number `n`; records the arguments each call reached it with. */
class CountAdapter implements ToolAdapter {
  readonly name = "count";
  received: Array<Record<string, unknown>> = [];
  async info(): Promise<ToolInfo> {
    return { name: "count", type: "toolable", description: "", tags: [], direct: null, callables: [{ name: "to", description: "", params: [{ name: "n", type: "integer", required: true }], returns: "number" }] };
  }
  async call(_c: string | null, args: Record<string, unknown>): Promise<unknown> {
    this.received.push(args);
    return args["n"];
  }
  async close(): Promise<void> {}
}

describe("arguments after the middleware chain", () => {
  const registryWith = (...middleware: ToolMiddleware[]) => {
    const adapter = new CountAdapter();
    const registry = new ToolRegistry({ middleware });
    registry.register(adapter);
    return { adapter, registry };
  };

  it("a middleware's edits are validated again before the adapter runs, also behind callsPerRun", async () => {
    const replace: ToolMiddleware = async (c, next) => {
      c.args = { n: "three" };
      return next();
    };
    const editInPlace: ToolMiddleware = async (c, next) => {
      c.args["n"] = 2.5;
      return next();
    };
    for (const edit of [replace, editInPlace]) {
      const { adapter, registry } = registryWith(callsPerRun(10), edit);
      await expect(registry.call("count", "to", { n: 3 }, { runId: "r" })).rejects.toMatchObject({ name: "ToolError", code: "INVALID_INPUT" });
      expect(adapter.received).toEqual([]);
    }
  });

  it("behind callsPerRun alone (which keeps them), the adapter gets the arguments validated at the boundary", async () => {
    const { adapter, registry } = registryWith(callsPerRun(2));
    await expect(registry.call("count", "to", { n: 3 }, { runId: "r" })).resolves.toBe(3);
    expect(adapter.received).toEqual([{ n: 3 }]);
    await expect(registry.call("count", "to", { n: "x" }, { runId: "r" })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(registry.call("count", "to", { n: 4 }, { runId: "r" })).resolves.toBe(4);
    await expect(registry.call("count", "to", { n: 5 }, { runId: "r" })).rejects.toMatchObject({ code: "PERMISSION" });
    expect(adapter.received).toEqual([{ n: 3 }, { n: 4 }]);
  });
});

describe("a rule on a recipe covers every call running the same command", () => {
  // The tool: recipe `epoch` runs `date -- +%s`; the escape hatch and tools.call can build that argv too.
  const DATE_YAML = [
    "name: date",
    "description: Print the date",
    "command: date",
    "end_of_options: true",
    "schema:",
    "  options:",
    "    utc: { type: boolean, short: u }",
    "    date: { type: string, short: d }",
    "  positional:",
    "    - { name: format, type: string }",
    "recipes:",
    "  epoch:",
    "    description: Seconds since 1970",
    '    preset: { format: "+%s" }',
    "    params:",
    "      date: {}",
    "  format:",
    "    description: A custom format",
    "    params:",
    "      format: { required: true }",
    "      date: {}",
    "",
  ].join("\n");
  let dir: string;
  const sessions: Session[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-same-"));
    await writeFile(path.join(dir, "date.yaml"), DATE_YAML);
  });
  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  async function sessionWith(middleware: ToolMiddleware[]): Promise<Session> {
    const tools = await ToolRegistry.load(dir);
    const session = new Session({ storage: new FileStorage({ basePath: path.join(dir, "s") }), executor: new InProcessExecutor({ tools, middleware }) });
    sessions.push(session);
    await session.start();
    return session;
  }
  const attempt = (code: string) => `let out; try { out = await ${code} } catch (e) { out = [e.name, e.code, e.message] }; out`;

  it("deny: ['date.epoch'] refuses tools.date({ format: '+%s' }) and tools.call('date', null, …); other formats still run", async () => {
    const session = await sessionWith([policy({ deny: ["date.epoch"] })]);
    for (const code of ['tools.date({ format: "+%s" })', 'tools.call("date", null, { format: "+%s" })', 'tools.call("date", null, { format: "+%s", date: "@5" })', 'tools.date.format({ format: "+%s" })', "tools.date.epoch()"]) {
      const r = await session.run(attempt(code));
      expect(r.value, code).toEqual(["ToolError", "PERMISSION", expect.stringMatching(/denied by policy \(deny: date\.epoch\)/)]);
    }
    expect((await session.run(attempt('tools.date({ format: "+%s", utc: true, date: "@5" })'))).value).toBe("5\n");
    expect((await session.run(attempt('tools.call("date", null, { format: "+%Y", utc: true, date: "@0" })'))).value).toBe("1970\n");
  });

  it("deny wins over a glob allow; an explicit allow of the escape hatch reopens it", async () => {
    const globbed = await sessionWith([policy({ allow: ["**"], deny: ["date.epoch"] })]);
    expect((await globbed.run(attempt('tools.date({ format: "+%s" })'))).value).toEqual(["ToolError", "PERMISSION", expect.stringContaining("runs the same command as date.epoch")]);
    const reopened = await sessionWith([policy({ allow: ["date", "date.format"], deny: ["date.epoch"] })]);
    expect((await reopened.run(attempt('tools.date({ format: "+%s", date: "@7" })'))).value).toBe("7\n");
    expect((await reopened.run(attempt('tools.call("date", null, { format: "+%s", date: "@7" })'))).value).toBe("7\n");
    // The recipe itself stays denied.
    expect((await reopened.run(attempt("tools.date.epoch()"))).value).toEqual(["ToolError", "PERMISSION", expect.stringContaining("date.epoch is denied by policy")]);
  });

  it("with middleware set, a CLI tool still runs where the session's code runs (a container session's runner), not on the host", async () => {
    const tools = await ToolRegistry.load(dir, { middleware: [policy({ deny: ["other.*"] })] });
    const ran: string[][] = [];
    const place: CommandPlace = {
      where: "a test place",
      run: async (argv: readonly string[]) => (ran.push([...argv]), "ran in the container\n"),
      spawn: () => {
        throw new Error("not used");
      },
      fixFor: () => "",
    };
    expect(await tools.call("date", "epoch", {}, { place })).toBe("ran in the container\n");
    expect(ran).toEqual([["date", "--", "+%s"]]);
    await tools.close();
  });

  it("an approval rule on the recipe asks for the escape hatch and tools.call running the same command", async () => {
    const asked: string[] = [];
    const session = await sessionWith([approval(({ tool, callable }) => (asked.push(`${tool}.${callable ?? ""}`), false), { only: ["date.epoch"] })]);
    for (const code of ['tools.date({ format: "+%s" })', 'tools.call("date", null, { format: "+%s" })']) {
      expect((await session.run(attempt(code))).value, code).toEqual(["ToolError", "PERMISSION", expect.stringContaining("was not approved")]);
    }
    expect(asked).toEqual(["date.", "date."]);
    expect((await session.run(attempt('tools.date({ format: "+%Y", utc: true, date: "@0" })'))).value).toBe("1970\n");
    expect(asked).toHaveLength(2);
  });
});
