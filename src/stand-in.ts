/**
 * Stand-ins for the main entry's exports that live in chunks loaded on first use (issue 42, cold
 * start). `import "ts-code-mode"` used to read and compile every area the package exports — the tool
 * adapters, the agents, Redis storage, the sandbox, containers, durable runs — though a `run` uses
 * none of them. scripts/bundle.mjs writes dist/index.js with the areas' classes and functions as
 * stand-ins made here: the first use (a call, `new`, a static member, `instanceof`, `extends`) loads
 * the area's chunk synchronously (`require` of an ES module, Node ≥ 20.19) and forwards to the real
 * class or function from then on.
 *
 * What a stand-in keeps: calls and `new` (with `new.target`, so a subclass's `super()` builds a
 * subclass instance), static members, `instanceof` (through the real `prototype`), `extends`, `name`.
 * What it does not: identity — the stand-in is not `===` the real class another entry exports — and
 * reflection on its own keys (`Object.keys(X)` lists the stand-in's). The types are the real ones
 * (dist/index.d.ts comes from tsc).
 */

/** Anything a stand-in can stand for: a class or a function. */
type Callable = (...args: never[]) => unknown;
type Constructor = abstract new (...args: never[]) => unknown;

export function standIn<T extends Callable | Constructor>(name: string, load: () => T): T {
  let real: T | undefined;
  const resolve = (): T => {
    if (real !== undefined) return real;
    const loaded = load();
    if (typeof loaded !== "function") throw new TypeError(`ts-code-mode: the export ${name} did not load as a class or function`);
    return (real = loaded);
  };
  // A plain function as the target: callable and constructible, and its `prototype` is writable, so
  // the `get` trap may answer with the real class's (a class's own is not, and Proxy invariants would
  // then forbid any other answer).
  const target = { [name]: function () {} }[name]!;
  const proxy: T = new Proxy(target as unknown as T, {
    apply: (_t, thisArg, args) => Reflect.apply(resolve() as Callable, thisArg, args),
    construct: (_t, args, newTarget) => {
      const cls = resolve() as unknown as new (...a: unknown[]) => object;
      return Reflect.construct(cls, args, newTarget === proxy ? cls : newTarget);
    },
    get: (_t, key, receiver) => Reflect.get(resolve(), key, receiver === proxy ? resolve() : receiver),
    set: (_t, key, value, receiver) => Reflect.set(resolve(), key, value, receiver === proxy ? resolve() : receiver),
    has: (_t, key) => Reflect.has(resolve(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(resolve()),
  });
  return proxy;
}
