/**
 * The agent-facing namespaces (`tools`, `workflows`, `artifacts`, `deps`), built on one function
 * that reaches the host. The same code serves every executor: in-process it calls HostServices
 * directly; in a child process or sandbox it sends an RPC message. It imports nothing from Node so
 * it can run anywhere a guest runs.
 *
 *   tools.curl.get(args)   → call("tools", "call", ["curl", "get", args])
 *   tools.curl(args)       → call("tools", "call", ["curl", null, args])   (escape hatch)
 *   workflows.triple(args) → workflows.invoke("triple", args): load source, compile in the guest, run
 *   agents.analyst(args)   → call("agents", "call", ["analyst", args])     (a child agent call on the host)
 */
import type { WorkflowParam } from "../../storage/protocol.js";

export type HostCall = (ns: string, op: string, args: unknown[]) => Promise<unknown>;

export interface GuestBridge {
  /** Reaches HostServices.dispatch; must reject with an Error of the guest's realm. */
  call: HostCall;
  /**
   * Evaluate a workflow module in the guest so that `tools`, `workflows`, `artifacts` and `deps`
   * are in scope inside it; return its exports. `compiled` is the CommonJS body the host prepared
   * (`prepareModule`), so no guest ever needs a TypeScript compiler.
   */
  compileWorkflow(name: string, compiled: string, namespaces: GuestNamespaces): Record<string, unknown>;
  /** The guest realm's Error constructor, for errors raised on the guest side. */
  ErrorCtor: ErrorConstructor;
}

export interface GuestNamespaces {
  tools: Record<string, unknown>;
  workflows: Record<string, unknown>;
  artifacts: Record<string, unknown>;
  deps: Record<string, unknown>;
  skills: Record<string, unknown>;
  agents: Record<string, unknown>;
}

/**
 * `Symbol.for(BEFORE_CALL_KEY)` on `tools`: how a durable run's prologue (determinism.ts) hands its
 * clock tape to the namespace calls. Symbol.for: the same symbol in every realm of one process.
 */
export const BEFORE_CALL_KEY = "ts-code-mode.before-call";

/** Recursion guard: a workflow that calls itself forever fails with a clear error instead of a hang. */
export const MAX_WORKFLOW_INVOCATIONS_IN_FLIGHT = 1000;
/**
 * Compiled workflow modules kept per guest (until reset()/close() makes a new guest), one per name
 * and checked against the source: at most this many, holding at most MODULE_CACHE_CHARS characters
 * of compiled source together, the oldest forgotten first.
 */
const MODULE_CACHE_SIZE = 200;
const MODULE_CACHE_CHARS = 16 * 1_048_576;
/** `tools.<name>` / `workflows.<name>` members kept per namespace: a loop over fresh names must not grow memory. */
const MEMBER_CACHE_SIZE = 1_000;

/** Properties a Proxy must not answer with a tool or workflow: promise resolution and inspection probe them. */
const NOT_A_MEMBER = new Set(["then", "catch", "finally", "constructor", "prototype", "__proto__", "toJSON", "inspect", "asymmetricMatch", "$$typeof"]);

/** The rejection handler that marks a call's promise handled (one function, not a closure per call). */
const ignore = (): void => undefined;

export function createNamespaces(bridge: GuestBridge): GuestNamespaces {
  // A durable run's clock readings (determinism.ts) reach the host just before the call they precede.
  let takeTape: (() => number[]) | null = null;
  const call = (ns: string, op: string, args: unknown[]): Promise<unknown> => {
    const tape = takeTape?.();
    if (tape && tape.length > 0) bridge.call("runs", "tape", [tape]).catch(() => {});
    const p = bridge.call(ns, op, args);
    // A call the agent forgot to await must not crash the process with an unhandled rejection;
    // awaiting it still throws.
    p.catch(ignore);
    return p;
  };
  const guestError = (name: string, message: string): Error => {
    const err = new bridge.ErrorCtor(message);
    Object.defineProperty(err, "name", { value: name, enumerable: false, configurable: true, writable: true });
    return err;
  };
  const namespaces = {} as GuestNamespaces;

  namespaces.tools = memberProxy(
    {
      list: () => call("tools", "list", []),
      search: (query: unknown, options?: unknown) => call("tools", "search", options === undefined ? [query] : [query, options]),
      describe: (name: unknown) => call("tools", "describe", [name]),
      call: (tool: unknown, callable: unknown, args?: unknown) => call("tools", "call", [tool, callable ?? null, args]),
      // Not a tool: how a durable run's prologue hands its clock tape to `call` above (null: stop).
      [Symbol.for(BEFORE_CALL_KEY)]: (take: unknown) => void (takeTape = typeof take === "function" ? (take as () => number[]) : null),
    },
    (toolName) => {
      const direct = (args?: unknown) => call("tools", "call", [toolName, null, args]);
      // `tools.x.repl.session(args)` opens a session with a toolable session tool (host: ToolSessions).
      const member = (callable: string) => Object.assign((args?: unknown) => call("tools", "call", [toolName, callable, args]), { session: (args?: unknown) => openToolSession(call, toolName, callable, args) });
      return memberProxy({}, member, direct);
    },
  );

  const modules = new Map<string, { compiled: string; exports: Record<string, unknown> }>();
  let moduleChars = 0;
  const forgetModule = (key: string): void => {
    const entry = modules.get(key);
    if (!entry) return;
    modules.delete(key);
    moduleChars -= entry.compiled.length;
  };
  let inFlight = 0;
  const invoke = async (name: unknown, args?: unknown): Promise<unknown> => {
    if (typeof name !== "string") throw guestError("ValidationError", "workflows.invoke: name must be a string");
    if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
      throw guestError("ValidationError", `workflows.invoke: arguments of workflow "${name}" must be an object of named parameters, e.g. workflows.${name}({ n: 1 })`);
    }
    if (inFlight >= MAX_WORKFLOW_INVOCATIONS_IN_FLIGHT) {
      throw guestError("RangeError", `workflows.invoke: more than ${MAX_WORKFLOW_INVOCATIONS_IN_FLIGHT} workflow invocations in flight; does "${name}" call itself without end?`);
    }
    inFlight++;
    try {
      const loaded = (await call("workflows", "load", [name])) as { name: string; compiled: string; params: WorkflowParam[]; closedParams?: boolean };
      const given = (args ?? {}) as Record<string, unknown>;
      // Like a tool, a workflow whose parameters are all known refuses other names: a typo
      // (`{ retry: 5 }` for `retries`) would otherwise run silently with the default.
      if (loaded.closedParams) {
        const known = loaded.params.map((p) => p.name);
        const unknown = Object.keys(given).filter((k) => !known.includes(k));
        if (unknown.length) {
          const accepted = known.length ? `its parameters: ${loaded.params.map((p) => `${p.name}${p.required ? "" : "?"}: ${p.type}`).join(", ")}` : "it takes no parameters";
          throw guestError("ValidationError", `workflows.invoke: workflow "${name}" has no parameter(s) ${unknown.map((k) => JSON.stringify(k)).join(", ")}; ${accepted}`);
        }
      }
      const missing = loaded.params.filter((p) => p.required && given[p.name] === undefined);
      if (missing.length) {
        const list = missing.map((p) => `${p.name}: ${p.type}`).join(", ");
        throw guestError("ValidationError", `workflows.invoke: workflow "${name}" is missing required parameter(s) ${list}`);
      }
      let exports = modules.get(name)?.compiled === loaded.compiled ? modules.get(name)?.exports : undefined;
      if (!exports) {
        exports = bridge.compileWorkflow(name, loaded.compiled, namespaces);
        forgetModule(name);
        while (modules.size > 0 && (modules.size >= MODULE_CACHE_SIZE || moduleChars + loaded.compiled.length > MODULE_CACHE_CHARS)) {
          forgetModule(modules.keys().next().value as string);
        }
        if (loaded.compiled.length <= MODULE_CACHE_CHARS) {
          modules.set(name, { compiled: loaded.compiled, exports });
          moduleChars += loaded.compiled.length;
        }
      }
      const run = exports["run"];
      if (typeof run !== "function") throw guestError("ValidationError", `workflows.invoke: workflow "${name}" does not export a function named run`);
      return await (run as (a: unknown) => unknown)(given);
    } finally {
      inFlight--;
    }
  };

  namespaces.workflows = memberProxy(
    {
      list: () => call("workflows", "list", []),
      search: (query: unknown, options?: unknown) => call("workflows", "search", options === undefined ? [query] : [query, options]),
      get: (name: unknown) => call("workflows", "get", [name]),
      create: (input: unknown) => call("workflows", "create", [input]),
      delete: (name: unknown) => call("workflows", "delete", [name]),
      invoke,
    },
    (name) => (args?: unknown) => invoke(name, args),
  );

  namespaces.artifacts = Object.freeze({
    save: (name: unknown, data: unknown, options?: unknown) => call("artifacts", "save", options === undefined ? [name, data] : [name, data, options]),
    load: (name: unknown) => call("artifacts", "load", [name]),
    get: (name: unknown) => call("artifacts", "get", [name]),
    list: () => call("artifacts", "list", []),
    exists: (name: unknown) => call("artifacts", "exists", [name]),
    delete: (name: unknown) => call("artifacts", "delete", [name]),
  });

  namespaces.deps = Object.freeze({
    list: () => call("deps", "list", []),
    add: (spec: unknown) => call("deps", "add", [spec]),
    remove: (spec: unknown) => call("deps", "remove", [spec]),
    sync: () => call("deps", "sync", []),
  });

  namespaces.skills = Object.freeze({
    list: () => call("skills", "list", []),
    search: (query: unknown, options?: unknown) => call("skills", "search", options === undefined ? [query] : [query, options]),
    load: (name: unknown) => call("skills", "load", [name]),
    read: (name: unknown, path: unknown, options?: unknown) => call("skills", "read", options === undefined ? [name, path] : [name, path, options]),
    create: (input: unknown) => call("skills", "create", [input]),
    delete: (name: unknown) => call("skills", "delete", [name]),
    run: (name: unknown, script: unknown, args?: unknown) => call("skills", "run", args === undefined ? [name, script] : [name, script, args]),
  });

  // An agent named like a method (list, call) is reached with agents.call(name, args).
  namespaces.agents = memberProxy(
    {
      list: () => call("agents", "list", []),
      call: (name: unknown, args?: unknown) => call("agents", "call", [name, args]),
    },
    (name) => (args?: unknown) => call("agents", "call", [name, args]),
  );

  return namespaces;
}

/**
 * An object whose own methods come first and whose any other string property is `member(name)`
 * (cached). When `self` is given the proxy is also callable as `self(...)`.
 */
function memberProxy(
  methods: Record<string, unknown>,
  member: (name: string) => unknown,
  self?: (...args: unknown[]) => unknown,
): Record<string, unknown> {
  const cache = new Map<string, unknown>();
  const target = (self ? Object.assign(function member() {}, methods) : { ...methods }) as Record<string, unknown>;
  return new Proxy(target, {
    get(t, prop) {
      if (typeof prop !== "string") return Reflect.get(t, prop);
      if (Object.hasOwn(methods, prop)) return methods[prop];
      if (NOT_A_MEMBER.has(prop)) return undefined;
      let m = cache.get(prop);
      if (m === undefined) {
        m = member(prop);
        if (cache.size >= MEMBER_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        cache.set(prop, m);
      }
      return m;
    },
    apply(_t, _this, args) {
      if (!self) throw new TypeError("not a function");
      return self(...args);
    },
    set() {
      return false;
    },
    has(_t, prop) {
      return typeof prop === "string" && Object.hasOwn(methods, prop);
    },
  });
}

/**
 * The guest's handle of a toolable session: `send(message)`, `next()` (an event, or null at the
 * end), `for await (const ev of s)`, `close()` (the final envelope). Each is one RPC call.
 */
async function openToolSession(call: (ns: string, op: string, args: unknown[]) => Promise<unknown>, tool: string, callable: string, args: unknown) {
  const { id } = (await call("tools", "session", [tool, callable, args])) as { id: string };
  const next = () => call("tools", "sessionNext", [id]) as Promise<Record<string, unknown> | null>;
  return {
    send: (message: unknown) => call("tools", "sessionSend", [id, message]),
    next,
    close: () => call("tools", "sessionClose", [id]),
    [Symbol.asyncIterator]() {
      return {
        next: async () => {
          const value = await next();
          return value === null ? { done: true as const, value: undefined } : { done: false as const, value };
        },
      };
    },
  };
}
