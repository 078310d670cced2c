/**
 * The one way values cross the sandbox boundary: copied as data, never as live objects. The same
 * module runs on both sides — on the host, and (bundled, see guest-bundle.ts) inside QuickJS — so
 * the format is symmetric by construction. It imports nothing and touches no Node API.
 *
 * A value becomes a JSON string plus a list of ArrayBuffers (bytes travel beside the JSON, not
 * inside it). In the JSON, null, booleans, strings and finite numbers stand for themselves; every
 * other value is an array whose first element is a tag:
 *
 *   ["u"] undefined            ["n", "NaN" | "Infinity" | "-Infinity" | "-0"]     ["i", "123"] BigInt
 *   ["a", ...items] Array       ["o", key, value, key, value, ...] plain object
 *   ["m", key, value, ...] Map  ["s", ...items] Set      ["d", ms | null] Date     ["r", source, flags] RegExp
 *   ["e", name, message, stack] Error                    ["b", "Uint8Array" | ... | "DataView", buffer#]
 *   ["B", buffer#] ArrayBuffer  ["@", ref#] the ref#-th container seen before (shared references and cycles)
 *   ["f", text] (display mode only) something that cannot be copied: a function, symbol, promise, ...
 *
 * Containers are numbered in the order they are first met (before their children), on both sides,
 * so "@" references keep shared references and cycles exactly as structuredClone does.
 *
 * Objects are read through their own enumerable string keys (what structuredClone copies); the
 * decoder defines properties instead of assigning them, so a key named `__proto__` can never change
 * a prototype. The host additionally refuses `__proto__` keys and `constructor` keys holding objects
 * (`strictKeys`), so no data from the guest can feed a prototype-polluting merge on the host.
 */

export interface EncodeOptions {
  /**
   * "data": anything that cannot be copied (function, symbol, promise, WeakMap, ...) is an error —
   * arguments of namespace calls and host results. "display": such values become a ["f", text]
   * placeholder — console output, run results and thrown values.
   */
  mode: "data" | "display";
  /** Deepest nesting of containers; deeper is an error. */
  maxDepth: number;
  /** Rough upper bound on the encoded size (JSON characters + bytes); larger is an error. */
  maxBytes: number;
}

export interface Encoded {
  json: string;
  buffers: ArrayBuffer[];
}

export interface DecodeOptions {
  maxDepth: number;
  /** Refuse `__proto__` keys, and `constructor` keys whose value is an object (host side). */
  strictKeys: boolean;
  /** Builds the stand-in for a ["f", text] placeholder; absent: placeholders are an error. */
  opaque?: (text: string) => unknown;
}

export interface Decoded {
  value: unknown;
  /** True when some part of the value was a placeholder (so it is not a faithful copy). */
  opaque: boolean;
}

/** Raised for values that cannot cross; `name` is stable so both sides can recognise it. */
export class BoundaryError extends Error {
  constructor(message: string) {
    super(message);
    // Assigned, not a class field: the guest bundle is compiled without class-field transforms.
    this.name = "DataCloneError";
  }
}

// Captured once, when this module is evaluated: inside the sandbox that is before any agent code
// runs, so replacing a global later (Map, JSON, Object.defineProperty) cannot change the codec.
const MapCtor = Map;
const SetCtor = Set;
const DateCtor = Date;
const RegExpCtor = RegExp;
const ErrorCtor = Error;
/** Standard error types keep their constructor across the boundary (as with structuredClone). */
const ERROR_CTORS: Record<string, ErrorConstructor> = {
  Error,
  EvalError,
  RangeError,
  ReferenceError,
  SyntaxError,
  TypeError,
  URIError,
};
const ArrayBufferCtor = ArrayBuffer;
const DataViewCtor = DataView;
const PromiseCtor = Promise;
const WeakMapCtor = WeakMap;
const WeakSetCtor = WeakSet;
const BigIntFn = BigInt;
const StringFn = String;
const defineProperty = Object.defineProperty;
const objectKeys = Object.keys;
const objectToString = Object.prototype.toString;
const functionToString = Function.prototype.toString;
const hasOwn = Object.prototype.hasOwnProperty;
const isArray = Array.isArray;
const isView = ArrayBuffer.isView;
const reflectApply = Reflect.apply;
const arrayPush = Array.prototype.push;
const mapForEach = Map.prototype.forEach;
const mapSet = Map.prototype.set;
const mapGet = Map.prototype.get;
const mapClear = Map.prototype.clear;
const setAdd = Set.prototype.add;
const stringSlice = String.prototype.slice;
const setForEach = Set.prototype.forEach;
const dateGetTime = Date.prototype.getTime;
const bufferSlice = ArrayBuffer.prototype.slice;
const jsonStringify = JSON.stringify;
const jsonParse = JSON.parse;
const numberIsInteger = Number.isInteger;
const objectIs = Object.is;

const TYPED_ARRAYS: Record<string, new (buffer: ArrayBuffer) => ArrayBufferView> = {};
for (const name of [
  "Int8Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int16Array",
  "Uint16Array",
  "Int32Array",
  "Uint32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
]) {
  const ctor = (globalThis as unknown as Record<string, unknown>)[name];
  if (typeof ctor === "function") TYPED_ARRAYS[name] = ctor as new (buffer: ArrayBuffer) => ArrayBufferView;
}

type Wire = null | boolean | number | string | Wire[];

/** `root` names the value in error messages (`arguments[2].callback`). */
export function encode(value: unknown, options: EncodeOptions, root = "value"): Encoded {
  const buffers: ArrayBuffer[] = [];
  const seen = new MapCtor<object, number>();
  let size = 0;
  let refs = 0;

  const grow = (n: number): void => {
    size += n;
    if (size > options.maxBytes) {
      throw new BoundaryError(`the value is larger than ${Math.round(options.maxBytes / 1_048_576)} MB, the most that can cross the sandbox boundary`);
    }
  };

  const opaque = (v: unknown, what: string, path: string): Wire => {
    if (options.mode === "display") return ["f", describeOpaque(v)];
    throw new BoundaryError(`${what} cannot be copied across the sandbox boundary (at ${path}); pass plain data: objects, arrays, strings, numbers, booleans, null, Map, Set, Date, RegExp, BigInt, Uint8Array`);
  };

  const walk = (v: unknown, depth: number, path: string): Wire => {
    switch (typeof v) {
      case "string":
        grow(v.length + 2);
        return v;
      case "boolean":
        grow(5);
        return v;
      case "number":
        grow(8);
        if (v !== v) return ["n", "NaN"];
        if (v === Infinity) return ["n", "Infinity"];
        if (v === -Infinity) return ["n", "-Infinity"];
        if (objectIs(v, -0)) return ["n", "-0"];
        return v;
      case "bigint":
        grow(16);
        return ["i", StringFn(v)];
      case "undefined":
        grow(5);
        return ["u"];
      case "symbol":
        return opaque(v, "a symbol", path);
      case "function":
        return opaque(v, "a function", path);
    }
    if (v === null) {
      grow(4);
      return null;
    }
    const obj = v as object;
    const ref = reflectApply(mapGet, seen, [obj]) as number | undefined;
    if (ref !== undefined) return ["@", ref];
    if (depth >= options.maxDepth) {
      throw new BoundaryError(`the value is nested more than ${options.maxDepth} levels deep (at ${path}), the most that can cross the sandbox boundary`);
    }
    grow(8);

    if (obj instanceof PromiseCtor) return opaque(obj, "a Promise (await it first)", path);
    if (obj instanceof WeakMapCtor || obj instanceof WeakSetCtor) return opaque(obj, "a WeakMap or WeakSet", path);
    reflectApply(mapSet, seen, [obj, refs++]);
    if (isArray(obj)) {
      const out: Wire[] = ["a"];
      const list = obj as unknown[];
      for (let i = 0; i < list.length; i++) push(out, walk(list[i], depth + 1, `${path}[${i}]`));
      return out;
    }
    if (isView(obj)) {
      const view = obj as ArrayBufferView;
      const tag = reflectApply(objectToString, view, []) as string;
      const name = reflectApply(stringSlice, tag, [8, -1]) as string;
      grow(view.byteLength);
      const copy = reflectApply(bufferSlice, view.buffer, [view.byteOffset, view.byteOffset + view.byteLength]) as ArrayBuffer;
      push(buffers, copy);
      return ["b", name === "DataView" || hasOwnKey(TYPED_ARRAYS, name) ? name : "Uint8Array", buffers.length - 1];
    }
    if (obj instanceof ArrayBufferCtor) {
      const buffer = obj as ArrayBuffer;
      grow(buffer.byteLength);
      push(buffers, reflectApply(bufferSlice, buffer, [0]) as ArrayBuffer);
      return ["B", buffers.length - 1];
    }
    if (obj instanceof MapCtor) {
      const out: Wire[] = ["m"];
      let i = 0;
      reflectApply(mapForEach, obj, [
        (val: unknown, key: unknown) => {
          push(out, walk(key, depth + 1, `${path}.<key ${i}>`), walk(val, depth + 1, `${path}.<value ${i}>`));
          i++;
        },
      ]);
      return out;
    }
    if (obj instanceof SetCtor) {
      const out: Wire[] = ["s"];
      let i = 0;
      reflectApply(setForEach, obj, [(val: unknown) => void push(out, walk(val, depth + 1, `${path}.<item ${i++}>`))]);
      return out;
    }
    if (obj instanceof DateCtor) {
      const time = reflectApply(dateGetTime, obj, []) as number;
      return ["d", time === time ? time : null];
    }
    if (obj instanceof RegExpCtor) {
      const re = obj as RegExp;
      grow(re.source.length);
      return ["r", StringFn(re.source), StringFn(re.flags)];
    }
    if (obj instanceof ErrorCtor) {
      const e = obj as Error;
      const name = safeString(e.name, "Error");
      const message = safeString(e.message, "");
      const stack = safeString(e.stack, "");
      grow(name.length + message.length + stack.length);
      return ["e", name, message, stack];
    }
    const out: Wire[] = ["o"];
    for (const key of objectKeys(obj)) {
      grow(key.length + 2);
      push(out, key, walk((obj as Record<string, unknown>)[key], depth + 1, `${path}.${key}`));
    }
    return out;
  };

  try {
    const tree = walk(value, 0, root);
    return { json: jsonStringify(tree) as string, buffers };
  } finally {
    // `walk` refers to itself, so its closure is a reference cycle that only QuickJS's cycle
    // collector frees — which may not run for a long time. Emptied here, `seen` does not keep the
    // encoded value (a 1 MiB console line, say) alive meanwhile: 200 such lines grew the sandbox
    // to its memory limit.
    reflectApply(mapClear, seen, []);
  }
}

export function decode(json: string, inputBuffers: readonly ArrayBuffer[], options: DecodeOptions): Decoded {
  let sawOpaque = false;
  const refs: unknown[] = [];
  // Dropped when done (see encode: the closures below form a cycle that would keep them alive).
  let buffers: readonly ArrayBuffer[] = inputBuffers;
  const bad = (why: string): never => {
    throw new BoundaryError(`malformed value from the other side of the sandbox boundary: ${why}`);
  };
  const buffer = (index: Wire | undefined): ArrayBuffer => {
    if (typeof index !== "number" || !numberIsInteger(index) || index < 0 || index >= buffers.length) return bad("bad buffer index");
    return buffers[index] as ArrayBuffer;
  };
  const str = (v: Wire | undefined): string => (typeof v === "string" ? v : bad("expected a string"));
  const define = (target: object, key: string, val: unknown): void => {
    defineProperty(target, key, { value: val, writable: true, enumerable: true, configurable: true });
  };

  const walk = (w: Wire, depth: number): unknown => {
    if (w === null || typeof w !== "object") return w;
    if (!isArray(w) || w.length === 0) return bad("expected a tagged array");
    if (depth > options.maxDepth) return bad(`nested more than ${options.maxDepth} levels deep`);
    const tag = w[0];
    switch (tag) {
      case "u":
        return undefined;
      case "n": {
        const n = w[1];
        if (n === "NaN") return NaN;
        if (n === "Infinity") return Infinity;
        if (n === "-Infinity") return -Infinity;
        if (n === "-0") return -0;
        return bad("bad number");
      }
      case "i":
        return BigIntFn(str(w[1]));
      case "@": {
        const index = w[1];
        if (typeof index !== "number" || !numberIsInteger(index) || index < 0 || index >= refs.length) return bad("bad reference");
        return refs[index];
      }
      case "f":
        sawOpaque = true;
        if (!options.opaque) return bad("a placeholder where data was expected");
        return options.opaque(str(w[1]));
      case "a": {
        const out: unknown[] = [];
        push(refs, out);
        for (let i = 1; i < w.length; i++) push(out, walk(w[i] as Wire, depth + 1));
        return out;
      }
      case "o": {
        const out: Record<string, unknown> = {};
        push(refs, out);
        if (w.length % 2 !== 1) return bad("odd object entries");
        for (let i = 1; i < w.length; i += 2) {
          const key = str(w[i]);
          const raw = w[i + 1] as Wire;
          if (options.strictKeys && (key === "__proto__" || (key === "constructor" && raw !== null && typeof raw === "object" && !isScalarTag(raw)))) {
            throw new BoundaryError(`the key ${jsonStringify(key) as string} is not allowed in data crossing the sandbox boundary (it could change prototypes on the host)`);
          }
          define(out, key, walk(raw, depth + 1));
        }
        return out;
      }
      case "m": {
        const out = new MapCtor<unknown, unknown>();
        push(refs, out);
        if (w.length % 2 !== 1) return bad("odd map entries");
        for (let i = 1; i < w.length; i += 2) {
          const key = walk(w[i] as Wire, depth + 1);
          reflectApply(mapSet, out, [key, walk(w[i + 1] as Wire, depth + 1)]);
        }
        return out;
      }
      case "s": {
        const out = new SetCtor<unknown>();
        push(refs, out);
        for (let i = 1; i < w.length; i++) reflectApply(setAdd, out, [walk(w[i] as Wire, depth + 1)]);
        return out;
      }
      case "d": {
        const t = w[1];
        const out = new DateCtor(typeof t === "number" ? t : NaN);
        push(refs, out);
        return out;
      }
      case "r": {
        const out = new RegExpCtor(str(w[1]), str(w[2]));
        push(refs, out);
        return out;
      }
      case "e": {
        const name = str(w[1]);
        const message = str(w[2]);
        const stack = str(w[3]);
        const Ctor = hasOwnKey(ERROR_CTORS, name) ? (ERROR_CTORS[name] as ErrorConstructor) : ErrorCtor;
        const out = new Ctor(message);
        defineProperty(out, "name", { value: name, writable: true, enumerable: false, configurable: true });
        // V8-style: the stack starts with "Name: message", as errorFromThrown / cleanStack expect.
        defineProperty(out, "stack", { value: `${name}: ${message}${stack ? `\n${stack.replace(/\n$/, "")}` : ""}`, writable: true, enumerable: false, configurable: true });
        push(refs, out);
        return out;
      }
      case "b": {
        const name = str(w[1]);
        const bytes = reflectApply(bufferSlice, buffer(w[2]), [0]) as ArrayBuffer;
        let out: unknown;
        if (name === "DataView") out = new DataViewCtor(bytes);
        else {
          const Ctor = hasOwnKey(TYPED_ARRAYS, name) ? TYPED_ARRAYS[name] : undefined;
          if (!Ctor) return bad(`unknown typed array ${name}`);
          out = new Ctor(bytes);
        }
        push(refs, out);
        return out;
      }
      case "B": {
        const out = reflectApply(bufferSlice, buffer(w[1]), [0]) as ArrayBuffer;
        push(refs, out);
        return out;
      }
      default:
        return bad(`unknown tag ${StringFn(tag)}`);
    }
  };

  let tree: Wire;
  try {
    tree = jsonParse(json) as Wire;
  } catch {
    return bad("not JSON");
  }
  try {
    const value = walk(tree, 0);
    return { value, opaque: sawOpaque };
  } finally {
    refs.length = 0;
    buffers = [];
  }
}

/** A readable stand-in for a value that cannot be copied, in the style of Node's util.inspect. */
export function describeOpaque(v: unknown): string {
  try {
    if (typeof v === "function") {
      const name = typeof v.name === "string" && v.name ? v.name : "";
      let source = "";
      try {
        source = reflectApply(functionToString, v, []) as string;
      } catch {
        // A revoked proxy or similar: no source to look at.
      }
      if (/^class\b/.test(source)) return `[class ${name || "(anonymous)"}]`;
      return name ? `[Function: ${name}]` : "[Function (anonymous)]";
    }
    if (typeof v === "symbol") return StringFn(v);
    if (v instanceof PromiseCtor) return "Promise { <unknown> }";
    if (v instanceof WeakMapCtor) return "WeakMap { <items unknown> }";
    if (v instanceof WeakSetCtor) return "WeakSet { <items unknown> }";
    return reflectApply(objectToString, v, []) as string;
  } catch {
    return "[value]";
  }
}

/** Array.prototype.push as it was when the codec loaded (agent code may replace it). */
function push(list: unknown[], ...items: unknown[]): void {
  reflectApply(arrayPush, list, items);
}

function safeString(v: unknown, fallback: string): string {
  try {
    return typeof v === "string" ? v : v === undefined ? fallback : StringFn(v);
  } catch {
    return fallback;
  }
}

function hasOwnKey(obj: object, key: string): boolean {
  return reflectApply(hasOwn, obj, [key]) as boolean;
}

/** Tagged encodings of non-container values (a `constructor` key holding one of these is harmless). */
function isScalarTag(w: Wire[]): boolean {
  const tag = w[0];
  return tag === "u" || tag === "n" || tag === "i" || tag === "d" || tag === "r";
}

