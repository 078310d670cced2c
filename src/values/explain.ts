/**
 * Words for a cut: what limit a value exceeded, and — when shared references are why it is so big —
 * how many paths it really has ("2^40 paths"), so an agent sees why 41 objects cannot be shown or
 * saved as JSON. Counting paths is itself bounded: it visits each distinct object once (memoised),
 * up to a fixed number of edges.
 */
import { isPlainObject, type CutReason, type WalkLimits, type WalkReport } from "./walk.js";

/** Edges followed when counting paths; beyond it the count is "unknown" and left out. */
const MAX_COUNT_EDGES = 200_000;

/** One phrase for `report.cut`, e.g. "more than 10,000 values (2^40 paths through shared references)". */
export function describeCut(value: unknown, report: WalkReport, limits: WalkLimits): string {
  const cut = report.cut;
  if (!cut) return "";
  return `${reasonText(cut.reason, limits)}${cut.reason !== "depth" && report.shared ? sharedText(value) : ""} at ${cut.path}`;
}

function reasonText(reason: CutReason, limits: WalkLimits): string {
  switch (reason) {
    case "nodes":
      return `more than ${limits.maxNodes.toLocaleString("en-US")} values`;
    case "depth":
      return `nested more than ${limits.maxDepth.toLocaleString("en-US")} levels deep`;
    case "bytes":
      return `larger than ${limits.maxBytes.toLocaleString("en-US")} characters`;
  }
}

function sharedText(value: unknown): string {
  const paths = countPaths(value);
  if (paths === null) return " (shared references: the same objects are reached by many paths, and each path counts)";
  return ` (${formatCount(paths)} paths through shared references: the same objects are reached many ways, and each path counts)`;
}

/** "2^40" for large powers of two ("about 2^40" within 0.1% of one), else "12,345" or "1.2e+15". */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return "infinitely many";
  const log = Math.log2(n);
  if (n >= 1_048_576 && Number.isInteger(log)) return `2^${log}`;
  // A power of two plus a few (a DAG beside a scalar argument) reads best as that power.
  if (n >= 1_048_576 && Math.abs(n / 2 ** Math.round(log) - 1) < 1e-3) return `about 2^${Math.round(log)}`;
  return n < 1e15 ? Math.round(n).toLocaleString("en-US") : n.toExponential(1);
}

/**
 * How many paths lead from `root` to a leaf (a primitive, or an empty container) when shared
 * objects are expanded, following arrays, plain objects, Map and Set: `[a, a]` where `a = [1]` has 2.
 * Infinity for a cycle; null when counting would take more than MAX_COUNT_EDGES steps.
 */
export function countPaths(root: unknown): number | null {
  const memo = new Map<object, number>();
  const onPath = new Set<object>();
  let edges = 0;
  interface Frame {
    obj: object;
    children: unknown[];
    i: number;
    total: number;
  }
  const stack: Frame[] = [];
  const enter = (obj: object): void => {
    onPath.add(obj);
    stack.push({ obj, children: childList(obj), i: 0, total: 0 });
  };
  if (root === null || typeof root !== "object") return 1;
  enter(root);
  let last = 0;
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    if (frame.i >= frame.children.length) {
      stack.pop();
      onPath.delete(frame.obj);
      if (frame.total === 0) frame.total = 1;
      memo.set(frame.obj, frame.total);
      last = frame.total;
      const parent = stack[stack.length - 1];
      if (parent) parent.total += frame.total;
      continue;
    }
    if (++edges > MAX_COUNT_EDGES) return null;
    const child = frame.children[frame.i++];
    if (child === null || typeof child !== "object") {
      frame.total += 1;
      continue;
    }
    if (onPath.has(child)) return Number.POSITIVE_INFINITY;
    const known = memo.get(child);
    if (known !== undefined) frame.total += known;
    else enter(child);
  }
  return last;
}

function childList(obj: object): unknown[] {
  try {
    if (Array.isArray(obj)) return obj.length > MAX_COUNT_EDGES ? new Array<unknown>(MAX_COUNT_EDGES + 1) : Array.from(obj as unknown[]);
    const tag = Object.prototype.toString.call(obj);
    const tooMany = new Array<unknown>(MAX_COUNT_EDGES + 1);
    if (tag === "[object Map]") return (obj as Map<unknown, unknown>).size > MAX_COUNT_EDGES ? tooMany : [...(obj as Map<unknown, unknown>)].flat();
    if (tag === "[object Set]") return (obj as Set<unknown>).size > MAX_COUNT_EDGES ? tooMany : [...(obj as Set<unknown>)];
    if (isPlainObject(obj)) return Object.values(obj);
  } catch {
    // A value that cannot be read counts as one.
  }
  return [];
}
