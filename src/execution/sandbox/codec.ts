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
const getPrototypeOf = Object.getPrototypeOf;
const ObjectProto = Object.prototype;
const objectToString = Object.prototype.toString;
const functionToString = Function.prototype.toString;
const hasOwn = Object.prototype.hasOwnProperty;
const isArray = Array.isArray;
const isView = ArrayBuffer.isView;
const reflectApply = Reflect.apply;
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

/**
 * A Map whose get/set/clear are its own class's, captured at load: agent code replacing
 * Map.prototype.get later cannot reach it, and calling them needs no Reflect.apply (which
 * allocates an argument array per call — in QuickJS that, closures per call and path strings per
 * element made encoding a tool call's arguments ~10x slower than JSON.stringify).
 */
class SafeMap extends MapCtor<object, number> {}
for (const [name, fn] of [
  ["get", mapGet],
  ["set", mapSet],
  ["clear", mapClear],
] as const) {
  defineProperty(SafeMap.prototype, name, { value: fn, writable: false, enumerable: false, configurable: false });
}

/** How a path segment is shown: `[i]`, `.key`, `.<key i>`, `.<value i>`, `.<item i>`. */
const SEG_INDEX = 0;
const SEG_KEY = 1;
const SEG_MAP_KEY = 2;
const SEG_MAP_VALUE = 3;
const SEG_SET_ITEM = 4;
type Seg = typeof SEG_INDEX | typeof SEG_KEY | typeof SEG_MAP_KEY | typeof SEG_MAP_VALUE | typeof SEG_SET_ITEM;

/** One encode's state (no closures: creating them per call is slow in QuickJS, and encode re-enters through getters). */
interface EncodeState {
  readonly options: EncodeOptions;
  readonly root: string;
  readonly buffers: ArrayBuffer[];
  readonly seen: SafeMap;
  size: number;
  refs: number;
  /** The path to the value being walked, built into text only for an error message. */
  readonly segKinds: Seg[];
  readonly segKeys: (string | number)[];
}

/** The `seen` map of the last encode, emptied, for the next one (an encode inside a getter makes its own). */
let spareSeen: SafeMap | null = null;

/** `root` names the value in error messages (`arguments[2].callback`). */
export function encode(value: unknown, options: EncodeOptions, root = "value"): Encoded {
  const seen = spareSeen ?? new SafeMap();
  spareSeen = null;
  const state: EncodeState = { options, root, buffers: [], seen, size: 0, refs: 0, segKinds: [], segKeys: [] };
  try {
    const tree = encodeWalk(state, value, 0);
    return { json: jsonStringify(tree) as string, buffers: state.buffers };
  } finally {
    // Emptied here, `seen` does not keep the encoded value (a 1 MiB console line, say) alive until
    // QuickJS's cycle collector runs: 200 such lines grew the sandbox to its memory limit.
    seen.clear();
    spareSeen = seen;
  }
}

function pathOf(state: EncodeState, depth: number): string {
  let path = state.root;
  for (let i = 0; i < depth; i++) {
    const key = state.segKeys[i];
    switch (state.segKinds[i]) {
      case SEG_INDEX:
        path += `[${key as number}]`;
        break;
      case SEG_KEY:
        path += `.${key as string}`;
        break;
      case SEG_MAP_KEY:
        path += `.<key ${key as number}>`;
        break;
      case SEG_MAP_VALUE:
        path += `.<value ${key as number}>`;
        break;
      default:
        path += `.<item ${key as number}>`;
    }
  }
  return path;
}

function grow(state: EncodeState, n: number): void {
  state.size += n;
  if (state.size > state.options.maxBytes) {
    throw new BoundaryError(`the value is larger than ${Math.round(state.options.maxBytes / 1_048_576)} MB, the most that can cross the sandbox boundary`);
  }
}

function opaque(state: EncodeState, v: unknown, what: string, depth: number): Wire {
  if (state.options.mode === "display") return ["f", describeOpaque(v)];
  throw new BoundaryError(
    `${what} cannot be copied across the sandbox boundary (at ${pathOf(state, depth)}); pass plain data: objects, arrays, strings, numbers, booleans, null, Map, Set, Date, RegExp, BigInt, Uint8Array`,
  );
}

/** Walk the child `v` of the container at `depth`, reached through segment (kind, key). */
function encodeChild(state: EncodeState, v: unknown, depth: number, kind: Seg, key: string | number): Wire {
  state.segKinds[depth] = kind;
  state.segKeys[depth] = key;
  return encodeWalk(state, v, depth + 1);
}

function encodeWalk(state: EncodeState, v: unknown, depth: number): Wire {
  switch (typeof v) {
    case "string":
      grow(state, v.length + 2);
      return v;
    case "boolean":
      grow(state, 5);
      return v;
    case "number":
      grow(state, 8);
      if (v !== v) return ["n", "NaN"];
      if (v === Infinity) return ["n", "Infinity"];
      if (v === -Infinity) return ["n", "-Infinity"];
      if (v === 0 && 1 / v < 0) return ["n", "-0"];
      return v;
    case "bigint":
      grow(state, 16);
      return ["i", StringFn(v)];
    case "undefined":
      grow(state, 5);
      return ["u"];
    case "symbol":
      return opaque(state, v, "a symbol", depth);
    case "function":
      return opaque(state, v, "a function", depth);
  }
  if (v === null) {
    grow(state, 4);
    return null;
  }
  const obj = v as object;
  const ref = state.seen.get(obj);
  if (ref !== undefined) return ["@", ref];
  const { options } = state;
  if (depth >= options.maxDepth) {
    throw new BoundaryError(`the value is nested more than ${options.maxDepth} levels deep (at ${pathOf(state, depth)}), the most that can cross the sandbox boundary`);
  }
  grow(state, 8);

  // Plain objects and arrays (nearly every value) first: the instanceof tests below cost more than
  // encoding them. An object whose prototype is Object.prototype or null is none of those types.
  const proto = getPrototypeOf(obj);
  if (proto === ObjectProto || proto === null) {
    state.seen.set(obj, state.refs++);
    return encodeObject(state, obj, depth);
  }
  if (isArray(obj)) {
    state.seen.set(obj, state.refs++);
    return encodeArray(state, obj as unknown[], depth);
  }
  if (obj instanceof PromiseCtor) return opaque(state, obj, "a Promise (await it first)", depth);
  if (obj instanceof WeakMapCtor || obj instanceof WeakSetCtor) return opaque(state, obj, "a WeakMap or WeakSet", depth);
  state.seen.set(obj, state.refs++);
  if (isView(obj)) {
    const view = obj as ArrayBufferView;
    const tag = reflectApply(objectToString, view, []) as string;
    const name = reflectApply(stringSlice, tag, [8, -1]) as string;
    grow(state, view.byteLength);
    const copy = reflectApply(bufferSlice, view.buffer, [view.byteOffset, view.byteOffset + view.byteLength]) as ArrayBuffer;
    const { buffers } = state;
    buffers[buffers.length] = copy;
    return ["b", name === "DataView" || hasOwnKey(TYPED_ARRAYS, name) ? name : "Uint8Array", buffers.length - 1];
  }
  if (obj instanceof ArrayBufferCtor) {
    const buffer = obj as ArrayBuffer;
    grow(state, buffer.byteLength);
    const { buffers } = state;
    buffers[buffers.length] = reflectApply(bufferSlice, buffer, [0]) as ArrayBuffer;
    return ["B", buffers.length - 1];
  }
  if (obj instanceof MapCtor) {
    const out: Wire[] = ["m"];
    let i = 0;
    reflectApply(mapForEach, obj, [
      (val: unknown, key: unknown) => {
        out[out.length] = encodeChild(state, key, depth, SEG_MAP_KEY, i);
        out[out.length] = encodeChild(state, val, depth, SEG_MAP_VALUE, i);
        i++;
      },
    ]);
    return out;
  }
  if (obj instanceof SetCtor) {
    const out: Wire[] = ["s"];
    let i = 0;
    reflectApply(setForEach, obj, [(val: unknown) => void (out[out.length] = encodeChild(state, val, depth, SEG_SET_ITEM, i++))]);
    return out;
  }
  if (obj instanceof DateCtor) {
    const time = reflectApply(dateGetTime, obj, []) as number;
    return ["d", time === time ? time : null];
  }
  if (obj instanceof RegExpCtor) {
    const re = obj as RegExp;
    grow(state, re.source.length);
    return ["r", StringFn(re.source), StringFn(re.flags)];
  }
  if (obj instanceof ErrorCtor) {
    const e = obj as Error;
    const name = safeString(e.name, "Error");
    const message = safeString(e.message, "");
    const stack = safeString(e.stack, "");
    grow(state, name.length + message.length + stack.length);
    return ["e", name, message, stack];
  }
  return encodeObject(state, obj, depth);
}

function encodeArray(state: EncodeState, list: unknown[], depth: number): Wire {
  const out: Wire[] = ["a"];
  for (let i = 0; i < list.length; i++) out[i + 1] = encodeChild(state, list[i], depth, SEG_INDEX, i);
  return out;
}

/** Own enumerable string keys, as structuredClone copies an object. */
function encodeObject(state: EncodeState, obj: object, depth: number): Wire {
  const out: Wire[] = ["o"];
  const keys = objectKeys(obj);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    grow(state, key.length + 2);
    out[2 * i + 1] = key;
    out[2 * i + 2] = encodeChild(state, (obj as Record<string, unknown>)[key], depth, SEG_KEY, key);
  }
  return out;
}

/** One decode's state (module functions, not closures per call: see encode). */
interface DecodeState {
  readonly options: DecodeOptions;
  buffers: readonly ArrayBuffer[];
  readonly refs: unknown[];
  sawOpaque: boolean;
  /**
   * The descriptor of every property defined, its `value` replaced each time: null-prototype, so
   * accessors agent code puts on Object.prototype (`get`, `set`) cannot turn it into another kind.
   */
  readonly field: { value: unknown; writable: true; enumerable: true; configurable: true };
}

export function decode(json: string, inputBuffers: readonly ArrayBuffer[], options: DecodeOptions): Decoded {
  let tree: Wire;
  try {
    tree = jsonParse(json) as Wire;
  } catch {
    return bad("not JSON");
  }
  const field = { __proto__: null, value: undefined as unknown, writable: true, enumerable: true, configurable: true } as DecodeState["field"];
  const state: DecodeState = { options, buffers: inputBuffers, refs: [], sawOpaque: false, field };
  try {
    const value = decodeWalk(state, tree, 0);
    return { value, opaque: state.sawOpaque };
  } finally {
    state.refs.length = 0;
    state.buffers = [];
    field.value = undefined;
  }
}

function bad(why: string): never {
  throw new BoundaryError(`malformed value from the other side of the sandbox boundary: ${why}`);
}

function bufferAt(state: DecodeState, index: Wire | undefined): ArrayBuffer {
  if (typeof index !== "number" || !numberIsInteger(index) || index < 0 || index >= state.buffers.length) return bad("bad buffer index");
  return state.buffers[index] as ArrayBuffer;
}

function str(v: Wire | undefined): string {
  return typeof v === "string" ? v : bad("expected a string");
}

/** Remember container `out` for "@" references (numbered in the order they are met, as in encode). */
function ref<T>(state: DecodeState, out: T): T {
  const { refs } = state;
  refs[refs.length] = out;
  return out;
}

function decodeWalk(state: DecodeState, w: Wire, depth: number): unknown {
  if (w === null || typeof w !== "object") return w;
  if (!isArray(w) || w.length === 0) return bad("expected a tagged array");
  const { options } = state;
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
      if (typeof index !== "number" || !numberIsInteger(index) || index < 0 || index >= state.refs.length) return bad("bad reference");
      return state.refs[index];
    }
    case "f":
      state.sawOpaque = true;
      if (!options.opaque) return bad("a placeholder where data was expected");
      return options.opaque(str(w[1]));
    case "a": {
      const out: unknown[] = ref(state, []);
      for (let i = 1; i < w.length; i++) out[i - 1] = decodeWalk(state, w[i] as Wire, depth + 1);
      return out;
    }
    case "o": {
      const out: Record<string, unknown> = ref(state, {});
      if (w.length % 2 !== 1) return bad("odd object entries");
      const { field } = state;
      for (let i = 1; i < w.length; i += 2) {
        const key = str(w[i]);
        const raw = w[i + 1] as Wire;
        if (options.strictKeys && (key === "__proto__" || (key === "constructor" && raw !== null && typeof raw === "object" && !isScalarTag(raw)))) {
          throw new BoundaryError(`the key ${jsonStringify(key) as string} is not allowed in data crossing the sandbox boundary (it could change prototypes on the host)`);
        }
        // Defined, not assigned: a key named __proto__ cannot change the prototype, and no setter runs.
        field.value = decodeWalk(state, raw, depth + 1);
        defineProperty(out, key, field);
      }
      field.value = undefined;
      return out;
    }
    case "m": {
      const out = ref(state, new MapCtor<unknown, unknown>());
      if (w.length % 2 !== 1) return bad("odd map entries");
      for (let i = 1; i < w.length; i += 2) {
        const key = decodeWalk(state, w[i] as Wire, depth + 1);
        reflectApply(mapSet, out, [key, decodeWalk(state, w[i + 1] as Wire, depth + 1)]);
      }
      return out;
    }
    case "s": {
      const out = ref(state, new SetCtor<unknown>());
      for (let i = 1; i < w.length; i++) reflectApply(setAdd, out, [decodeWalk(state, w[i] as Wire, depth + 1)]);
      return out;
    }
    case "d": {
      const t = w[1];
      return ref(state, new DateCtor(typeof t === "number" ? t : NaN));
    }
    case "r":
      return ref(state, new RegExpCtor(str(w[1]), str(w[2])));
    case "e": {
      const name = str(w[1]);
      const message = str(w[2]);
      const stack = str(w[3]);
      const Ctor = hasOwnKey(ERROR_CTORS, name) ? (ERROR_CTORS[name] as ErrorConstructor) : ErrorCtor;
      const out = new Ctor(message);
      defineProperty(out, "name", { value: name, writable: true, enumerable: false, configurable: true });
      // V8-style: the stack starts with "Name: message", as errorFromThrown / cleanStack expect.
      defineProperty(out, "stack", { value: `${name}: ${message}${stack ? `\n${stack.replace(/\n$/, "")}` : ""}`, writable: true, enumerable: false, configurable: true });
      return ref(state, out);
    }
    case "b": {
      const name = str(w[1]);
      const bytes = reflectApply(bufferSlice, bufferAt(state, w[2]), [0]) as ArrayBuffer;
      let out: unknown;
      if (name === "DataView") out = new DataViewCtor(bytes);
      else {
        const Ctor = hasOwnKey(TYPED_ARRAYS, name) ? TYPED_ARRAYS[name] : undefined;
        if (!Ctor) return bad(`unknown typed array ${name}`);
        out = new Ctor(bytes);
      }
      return ref(state, out);
    }
    case "B":
      return ref(state, reflectApply(bufferSlice, bufferAt(state, w[1]), [0]) as ArrayBuffer);
    default:
      return bad(`unknown tag ${StringFn(tag)}`);
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

