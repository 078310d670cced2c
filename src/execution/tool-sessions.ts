/**
 * Sessions with toolable session tools, opened by guest code through the RPC
 * (`const s = await tools.x.repl.session(input); await s.send(msg); for await (const ev of s) …;
 * await s.close()`). The host keeps the live process under a random id the guest holds; every
 * operation is bounded by the run's budget (time left, abort signal), at most MAX_OPEN sessions live
 * at once, and `endRun(runId)` (called by each executor when a run ends) kills what the run left.
 */
import { randomUUID } from "node:crypto";
import { ToolError, ValidationError } from "../errors.js";
import type { ToolableSession } from "../tools/adapters/toolable/session.js";
import type { CallContext } from "../tools/protocol.js";
import type { ToolRegistry } from "../tools/registry.js";

/** Live sessions per host (executor); a guest opening sessions in a loop is refused past it. */
export const MAX_OPEN_SESSIONS = 16;

interface Entry {
  session: ToolableSession;
  runId: string;
  label: string;
}

export class ToolSessions {
  private readonly open = new Map<string, Entry>();

  constructor(private readonly tools: ToolRegistry) {}

  async start(tool: string, callable: string, args: unknown, ctx: CallContext): Promise<{ id: string }> {
    if (this.open.size >= MAX_OPEN_SESSIONS) {
      throw new ToolError({ tool, callable, code: "PRECONDITION", message: `tools.${tool}.${callable}.session: ${MAX_OPEN_SESSIONS} sessions are open already; close one first (await s.close())` });
    }
    const session = await this.tools.openSession(tool, callable, args, ctx);
    const id = randomUUID();
    const runId = ctx.runId ?? "host";
    this.open.set(id, { session, runId, label: `tools.${tool}.${callable}` });
    // The run was stopped (timeout, cancel, executor closed): its sessions die with it.
    ctx.signal?.addEventListener("abort", () => session.kill(), { once: true });
    return { id };
  }

  send(id: string, message: unknown): Promise<null> {
    this.entry(id).session.send(message);
    return Promise.resolve(null);
  }

  /** The next event, or null when the session ended; bounded by the run's time left and signal. */
  async next(id: string, ctx: CallContext): Promise<Record<string, unknown> | null> {
    const { session, label } = this.entry(id);
    if (ctx.timeoutMs === undefined && !ctx.signal) return session.next();
    return new Promise((resolve, reject) => {
      const timer =
        ctx.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              session.kill();
              reject(new ToolError({ tool: "tools", callable: null, code: "TIMEOUT", message: `${label}.session: no event before the run's deadline; the session was killed` }));
            }, Math.min(ctx.timeoutMs, 2_147_483_647));
      const onAbort = () => {
        session.kill();
        resolve(null);
      };
      ctx.signal?.addEventListener("abort", onAbort, { once: true });
      session.next().then((e) => {
        clearTimeout(timer);
        ctx.signal?.removeEventListener("abort", onAbort);
        resolve(e);
      }, reject);
    });
  }

  /** Ends the session (EOF on its stdin, then a kill after a grace period); its final envelope. */
  async close(id: string): Promise<Record<string, unknown> | null> {
    const entry = this.open.get(id);
    if (!entry) return null;
    this.open.delete(id);
    return entry.session.close();
  }

  /** Kill every session `runId` left open. */
  endRun(runId: string): void {
    for (const [id, e] of this.open) {
      if (e.runId !== runId) continue;
      e.session.kill();
      this.open.delete(id);
    }
  }

  closeAll(): void {
    for (const e of this.open.values()) e.session.kill();
    this.open.clear();
  }

  private entry(id: string): Entry {
    const e = this.open.get(id);
    if (!e) throw new ValidationError("this session is closed (or belongs to a run that ended)");
    return e;
  }
}
