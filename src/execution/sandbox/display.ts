/**
 * Bounded display of values decoded from the sandbox. util.inspect walks a value as a TREE: a DAG
 * of 40 shared arrays has 2^40 paths, and 7 levels of 60 keys 60^6 nodes within inspect's depth —
 * either freezes the host. So before anything is rendered (a run's value, a thrown value, console
 * arguments) the value is copied as a tree with a budget on the parts visited (a shared part counts
 * each time it appears), entries per container, and depth; what is left out is replaced by a marker
 * saying so, and the caller adds a note with the count. The copy is at most `maxParts` parts, so
 * rendering it is bounded too. The value itself is not changed.
 */
import { Opaque } from "./opaque.js";

export interface PruneLimits {
  /** Entries shown in all (each appearance of a shared part counts again). */
  maxParts: number;
  /** Entries kept per array, object, Map or Set. */
  maxEntries: number;
  /** Containers deeper than this become a marker (above inspect's own depth, which then applies). */
  maxDepth: number;
}

export const DISPLAY_LIMITS: PruneLimits = { maxParts: 10_000, maxEntries: 1_000, maxDepth: 8 };

export interface Pruned {
  value: unknown;
  /** Parts and entries left out (0: the copy shows the whole value, up to inspect's own limits). */
  cut: number;
}

export function pruneForDisplay(value: unknown, limits: PruneLimits = DISPLAY_LIMITS): Pruned {
  let parts = 0;
  let cut = 0;
  const path = new Set<object>();

  /** Whether the budget still has room; each entry shown is one part. */
  const room = (): boolean => parts < limits.maxParts;

  const copy = (v: unknown, depth: number): unknown => {
    parts++;
    if (v === null || typeof v !== "object") return v;
    if (isLeaf(v)) return v;
    if (path.has(v)) return new Opaque("[Circular]");
    if (depth >= limits.maxDepth) return new Opaque(Array.isArray(v) ? "[Array]" : "[Object]");
    path.add(v);
    try {
      if (Array.isArray(v)) {
        const out: unknown[] = [];
        let i = 0;
        for (const n = Math.min(v.length, limits.maxEntries); i < n && room(); i++) out.push(copy(v[i], depth + 1));
        if (v.length > i) out.push(more(v.length - i, "items"));
        return out;
      }
      if (v instanceof Map) {
        const out = new Map<unknown, unknown>();
        let i = 0;
        for (const [k, val] of v) {
          if (i >= limits.maxEntries || !room()) break;
          out.set(copy(k, depth + 1), copy(val, depth + 1));
          i++;
        }
        if (v.size > i) out.set(more(v.size - i, "entries"), "");
        return out;
      }
      if (v instanceof Set) {
        const out = new Set<unknown>();
        let i = 0;
        for (const item of v) {
          if (i >= limits.maxEntries || !room()) break;
          out.add(copy(item, depth + 1));
          i++;
        }
        if (v.size > i) out.add(more(v.size - i, "items"));
        return out;
      }
      const out: Record<string, unknown> = {};
      const keys = Object.keys(v);
      let i = 0;
      for (const n = Math.min(keys.length, limits.maxEntries); i < n && room(); i++) {
        const key = keys[i] as string;
        Object.defineProperty(out, key, { value: copy((v as Record<string, unknown>)[key], depth + 1), enumerable: true, writable: true, configurable: true });
      }
      if (keys.length > i) Object.defineProperty(out, "…", { value: more(keys.length - i, "keys"), enumerable: true });
      return out;
    } finally {
      path.delete(v);
    }
  };

  const more = (n: number, what: string): Opaque => {
    cut += n;
    return new Opaque(`[… ${n} more ${what} not shown]`);
  };

  return { value: copy(value, 0), cut };
}

/** The note appended to a display when parts of the value were left out. */
export function cutNote(cut: number): string {
  return `… [display limit: ${cut} entr${cut === 1 ? "y" : "ies"} of the value (with everything inside them) not shown; at most ${DISPLAY_LIMITS.maxParts} entries are shown, ${DISPLAY_LIMITS.maxEntries} per container, a shared part counting each time it appears]`;
}

/** Values the decoder makes that inspect shows in bounded size on their own. */
function isLeaf(v: object): boolean {
  return v instanceof Opaque || v instanceof Date || v instanceof RegExp || v instanceof Error || ArrayBuffer.isView(v) || v instanceof ArrayBuffer;
}
