/**
 * Values from the host (or from the child's IPC channel) belong to another JavaScript realm than
 * the guest's vm context: `value instanceof Uint8Array` or `instanceof Array` would be false there.
 * `adoptSource` is a function, evaluated inside the context, that copies such data into the
 * context's own realm: plain objects, arrays, Map, Set, Date, RegExp, typed arrays, ArrayBuffer,
 * errors. Cycles and shared references are kept.
 */
export const ADOPT_SOURCE = `(function adopt(value, seen) {
  if (value === null || typeof value !== "object") return value;
  seen = seen || new Map();
  if (seen.has(value)) return seen.get(value);
  const tag = Object.prototype.toString.call(value);
  let out;
  if (Array.isArray(value)) {
    out = new Array(value.length);
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) if (i in value) out[i] = adopt(value[i], seen);
    return out;
  }
  if (ArrayBuffer.isView(value)) {
    const name = tag.slice(8, -1);
    const Ctor = name !== "DataView" && typeof globalThis[name] === "function" && globalThis[name].BYTES_PER_ELEMENT ? globalThis[name] : Uint8Array;
    out = Ctor === Uint8Array && name !== "Uint8Array" ? new Uint8Array(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)) : new Ctor(value);
    seen.set(value, out);
    return out;
  }
  switch (tag) {
    case "[object ArrayBuffer]": out = new Uint8Array(new Uint8Array(value)).buffer; break;
    case "[object Date]": out = new Date(value.getTime()); break;
    case "[object RegExp]": out = new RegExp(value.source, value.flags); break;
    case "[object Map]":
      out = new Map();
      seen.set(value, out);
      for (const [k, v] of value) out.set(adopt(k, seen), adopt(v, seen));
      return out;
    case "[object Set]":
      out = new Set();
      seen.set(value, out);
      for (const v of value) out.add(adopt(v, seen));
      return out;
    case "[object Error]":
      out = new Error(value.message);
      Object.defineProperty(out, "name", { value: value.name, configurable: true, writable: true });
      break;
    default:
      out = {};
      seen.set(value, out);
      for (const k of Object.keys(value)) out[k] = adopt(value[k], seen);
      return out;
  }
  seen.set(value, out);
  return out;
})`;
