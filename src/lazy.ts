/**
 * `lazy(() => build())`: an object that is built on first use, not at module load (issue 24: a
 * fresh process importing the package pays for every schema the modules it reaches build at top
 * level, and for loading zod itself). Module-level zod schemas are written
 * `export const fooSchema = lazy(() => z.object({...}))` and used exactly like the schema: the
 * returned proxy forwards every operation to the built value, so callers, `z.infer<typeof fooSchema>`
 * and schemas nesting it need no change. The bundled build loads zod itself on first use too
 * (scripts/bundle.mjs, src/zod-on-first-use.ts), so importing the package evaluates no zod at all.
 */
export function lazy<T extends object>(build: () => T): T {
  let value: T | undefined;
  const real = (): T => (value ??= build());
  // The target is a plain stand-in; every trap answers from the real value. Descriptors are reported
  // configurable because the stand-in does not own them (a proxy invariant).
  return new Proxy({} as T, {
    get: (_target, key) => {
      const target = real();
      return Reflect.get(target, key, target) as unknown;
    },
    set: (_target, key, v) => Reflect.set(real(), key, v),
    has: (_target, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_target, key) => {
      const d = Reflect.getOwnPropertyDescriptor(real(), key);
      return d && { ...d, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
    defineProperty: (_target, key, d) => Reflect.defineProperty(real(), key, d),
    deleteProperty: (_target, key) => Reflect.deleteProperty(real(), key),
  });
}
