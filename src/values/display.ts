/**
 * A run's `display`: util.inspect's rendering, bounded whatever the value's shape. The value is
 * measured first (walk.ts, counting what inspect would visit); when that is within DISPLAY_LIMITS
 * inspect renders the value itself, so ordinary values look exactly as Node shows them. Otherwise
 * inspect renders a small preview built breadth-first within the same node budget (so every level
 * gets its share), and a closing line says what was cut and why, e.g. for 40 objects nested as
 * `[a, a]`: "… [display cut: more than 10,000 values (2^40 paths through shared references …)]".
 */
import { inspect, types } from "node:util";
import { describeCut } from "./explain.js";
import { bigintDigits, MAX_BIGINT_DIGITS, walk, type WalkLimits } from "./walk.js";

/** What a display may cost: values inspect visits, and characters of strings and keys it prints. */
export const DISPLAY_LIMITS: WalkLimits = { maxNodes: 10_000, maxDepth: 1_000, maxBytes: 1_000_000 };
/** Levels and list items shown, as util.inspect's `depth` and `maxArrayLength`. */
const DISPLAY_DEPTH = 6;
const DISPLAY_ITEMS = 200;
/** Longest key, class or function name shown in a cut preview. */
const MAX_NAME = 200;

/**
 * util.inspect of `value`, bounded in time and size: strings are cut to `maxChars` characters, and
 * when the value had to be cut the text is at most `maxChars` long and ends with a line saying why.
 */
export function renderValue(value: unknown, maxChars: number): string {
  const options = { depth: DISPLAY_DEPTH, maxArrayLength: DISPLAY_ITEMS, maxStringLength: maxChars, breakLength: 120, sorted: false, getters: false };
  const report = walk(value, DISPLAY_LIMITS, { mode: "display", displayDepth: DISPLAY_DEPTH, displayItems: DISPLAY_ITEMS, displayString: maxChars });
  if (!report.cut && !report.exotic) return inspect(value, options);
  const text = inspect(preview(value, DISPLAY_LIMITS.maxNodes, maxChars), options);
  if (!report.cut) return text;
  const note = `\n… [display cut: the value is ${describeCut(value, report, DISPLAY_LIMITS)}; return less, or save it with artifacts.save]`;
  const room = Math.max(0, maxChars - note.length);
  return `${text.length > room ? text.slice(0, room) : text}${note}`;
}

/** Renders as its text in util.inspect: stands in for what a preview leaves out. */
class Shown {
  constructor(readonly text: string) {}
  [inspect.custom](): string {
    return this.text;
  }
}

interface Pending {
  source: object;
  depth: number;
  ancestors: readonly object[];
  assign: (v: unknown) => void;
}

/**
 * A copy of `root` that util.inspect renders like the original as far as `maxNodes` values go,
 * filled breadth-first; what does not fit shows as `[… cut]`. A shared object is copied once per
 * path (as inspect would show it), which the budget bounds.
 */
function preview(root: unknown, maxNodes: number, maxString: number): unknown {
  let budget = maxNodes;
  const queue: Pending[] = [];
  const classes = new Map<string, new () => object>();
  let result: unknown;

  const place = (v: unknown, depth: number, ancestors: readonly object[], assign: (v: unknown) => void): void => {
    budget--;
    if (v === null || (typeof v !== "object" && typeof v !== "function")) return assign(previewLeaf(v, maxString));
    const obj = v as object;
    if (types.isProxy(obj)) return assign(new Shown("[Proxy]"));
    if (ancestors.includes(obj)) return assign(new Shown("[Circular]"));
    if (depth > DISPLAY_DEPTH) return assign(new Shown(Array.isArray(obj) ? "[Array]" : "[Object]"));
    queue.push({ source: obj, depth, ancestors, assign });
  };

  place(root, 0, [], (v) => (result = v));
  for (let q = 0; q < queue.length; q++) {
    const item = queue[q] as Pending;
    if (budget <= 0) {
      item.assign(new Shown("[… cut]"));
      continue;
    }
    try {
      expand(item);
    } catch {
      item.assign(new Shown("[value could not be read]"));
    }
  }
  return result;

  function expand({ source, depth, ancestors, assign }: Pending): void {
    const inner = [...ancestors, source];
    const more = (left: number) => new Shown(`… ${left.toLocaleString("en-US")} more (cut)`);
    if (Array.isArray(source)) {
      const out: unknown[] = [];
      assign(out);
      const arr = source as unknown[];
      const shown = Math.min(arr.length, DISPLAY_ITEMS);
      for (let i = 0; i < shown; i++) {
        if (budget <= 0) return void out.push(more(arr.length - i));
        place(arr[i], depth + 1, inner, (v) => (out[i] = v));
      }
      if (arr.length > shown) out.push(more(arr.length - shown));
      return;
    }
    if (ArrayBuffer.isView(source) || types.isAnyArrayBuffer(source)) return assign(source); // inspect shows at most DISPLAY_ITEMS of it
    if (types.isMap(source) || types.isSet(source)) {
      const isMap = types.isMap(source);
      const out: Map<unknown, unknown> | Set<unknown> = isMap ? new Map() : new Set();
      assign(out);
      let i = 0;
      for (const [k, v] of (source as Map<unknown, unknown>).entries()) {
        if (i >= DISPLAY_ITEMS || budget <= 0) {
          const rest = more(source.size - i);
          if (isMap) (out as Map<unknown, unknown>).set(rest, new Shown("…"));
          else (out as Set<unknown>).add(rest);
          return;
        }
        i++;
        if (isMap) {
          const key = k !== null && typeof k === "object" ? new Shown(`[${className(k) || "Object"}]`) : previewLeaf(k, MAX_NAME);
          place(v, depth + 1, inner, (pv) => (out as Map<unknown, unknown>).set(key, pv));
        } else {
          place(v, depth + 1, inner, (pv) => (out as Set<unknown>).add(pv));
        }
      }
      return;
    }
    if (typeof source === "function") return assign(new Shown(`[Function: ${cutName((source as { name?: unknown }).name) || "(anonymous)"}]`));
    if (types.isDate(source)) return assign(new Date((source as Date).getTime()));
    if (types.isRegExp(source)) {
      const re = source as RegExp;
      return assign(re.source.length <= MAX_NAME ? new RegExp(re.source, re.flags) : new Shown(`/${re.source.slice(0, MAX_NAME)}…/${re.flags}`));
    }
    if (types.isNativeError(source) || Object.prototype.toString.call(source) === "[object Error]") {
      const e = source as Error;
      const copy = new Error(String(e.message).slice(0, maxString));
      Object.defineProperty(copy, "name", { value: cutName(e.name) || "Error", configurable: true });
      copy.stack = typeof e.stack === "string" ? e.stack.slice(0, maxString) : `${copy.name}: ${copy.message}`;
      return assign(copy);
    }
    if (types.isPromise(source) || types.isWeakMap(source) || types.isWeakSet(source)) return assign(new Shown(`${className(source)} { … }`));
    const name = className(source);
    const out = name === "Object" || name === "" ? ({} as Record<string, unknown>) : (new (namedClass(name))() as Record<string, unknown>);
    assign(out);
    const keys = Object.keys(source);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const shownKey = key.length > MAX_NAME ? `${key.slice(0, MAX_NAME)}…` : key;
      if (budget <= 0) return void (out["…"] = more(keys.length - i));
      const d = Object.getOwnPropertyDescriptor(source, key);
      if (d && !("value" in d)) {
        budget--;
        out[shownKey] = new Shown(d.get && d.set ? "[Getter/Setter]" : d.get ? "[Getter]" : "[Setter]");
        continue;
      }
      place(d?.value, depth + 1, inner, (v) => (out[shownKey] = v));
    }
  }

  function namedClass(name: string): new () => object {
    let cls = classes.get(name);
    if (!cls) {
      cls = class {};
      Object.defineProperty(cls, "name", { value: name });
      classes.set(name, cls);
    }
    return cls;
  }
}

/** A primitive as inspect may show it without unbounded work. */
function previewLeaf(v: unknown, maxString: number): unknown {
  if (typeof v === "string") return v.length > maxString ? `${v.slice(0, maxString)}… (${(v.length - maxString).toLocaleString("en-US")} more characters)` : v;
  if (typeof v === "bigint" && bigintDigits(v) > MAX_BIGINT_DIGITS) return new Shown(`[BigInt of about ${bigintDigits(v).toLocaleString("en-US")} digits]`);
  if (typeof v === "symbol" && (v.description?.length ?? 0) > MAX_NAME) return new Shown(`Symbol(${v.description?.slice(0, MAX_NAME) ?? ""}…)`);
  return v;
}

function className(obj: object): string {
  try {
    const proto: unknown = Object.getPrototypeOf(obj);
    if (proto === null) return "";
    const ctor = Object.getOwnPropertyDescriptor(proto, "constructor")?.value as { name?: unknown } | undefined;
    return cutName(ctor?.name);
  } catch {
    return "";
  }
}

function cutName(name: unknown): string {
  if (typeof name !== "string") return "";
  return name.length > MAX_NAME ? `${name.slice(0, MAX_NAME)}…` : name;
}
