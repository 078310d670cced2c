/**
 * Metering of QuickJS's WebAssembly: the hard stop of watchdog.ts, without a thread.
 *
 * The module is rewritten once per process, before it is compiled, so that no path through its
 * code can run long without spending fuel:
 *   - every loop iteration counts down a local counter; every LOOP_BATCH iterations (and on the
 *     first iteration of each call) the batch is charged to a global fuel counter;
 *   - every function on a cycle of the call graph (recursion, counting a call through the function
 *     table or out to the host as reaching every function that can be called that way) charges
 *     one unit on entry;
 *   - `memory.copy` and `memory.fill`, single instructions whose time is their size, are charged a
 *     unit per 64 bytes before they run.
 * Any other path is a bounded sequence of instructions and calls to loop-free, non-recursive
 * functions, so the fuel runs out within a bounded time of any long computation. When the global
 * fuel goes below 1 the code calls the import `tscm.tick` (watchdog.ts), which refills it and
 * compares the clock with the entry's hard deadline; past it, tick throws and the exception
 * unwinds the WebAssembly wherever it is.
 *
 * The rewrite: the tick import is added after the last function import (so the functions defined
 * in the module move up by one, and every reference to them — calls, exports, element segments —
 * is renumbered), a mutable i32 global holds the fuel (exported as `tscm_fuel`, so the host can
 * refill it), and each function gets two i32 locals (its loop counter and a scratch for a bulk
 * operation's size). The QuickJS build's names section, if it had one, would be dropped.
 */
import {
  BLOCK_TYPE,
  BR_TABLE,
  EIGHT_BYTES,
  FOUR_BYTES,
  IMMEDIATES,
  MEMARG,
  NONE,
  ONE_BYTE,
  ONE_LEB,
  PREFIX_FC,
  Reader,
  readSections,
  SectionId,
  SELECT_TYPES,
  skipImmediates,
  skipImportDescription,
  skipMisc,
  skipValueTypes,
  TWO_LEBS,
  WasmMeterError,
  Writer,
  IntList,
  lebSize,
  writePaddedLeb,
  type SectionSpan,
} from "./wasm-binary.js";

export { WasmMeterError } from "./wasm-binary.js";

/** Where the host's check is imported from. */
export const METER_IMPORT = { module: "tscm", name: "tick" } as const;
/** The exported fuel global. */
export const METER_FUEL_EXPORT = "tscm_fuel";
/** Loop iterations charged at once (a local counter is cheaper than the global on every iteration). */
const LOOP_BATCH = 64;
/** `memory.copy` / `memory.fill` are charged a unit per 2^6 bytes. */
const BYTES_PER_FUEL_SHIFT = 6;

interface ModuleFacts {
  /** Parameter count of each type. */
  params: number[];
  /** Type index of each function defined in the module. */
  functionTypes: number[];
  importedFunctions: number;
  importedGlobals: number;
  definedGlobals: number;
}

/** What one function's rewrite needs, found by scanning its body. */
interface Scan {
  /** Per defined function: where its body starts, its instructions start, and it ends. */
  bodyStart: Int32Array;
  codeStart: Int32Array;
  bodyEnd: Int32Array;
  /** Per defined function: parameters + declared locals (the index of the first added local). */
  locals: Int32Array;
  /** Insertions and rewrites in body order: [kind, position, end, value] per event; per function, a range. */
  events: IntList;
  eventStart: Int32Array;
  /** Direct calls to defined functions; per function, a range. */
  callees: IntList;
  calleeStart: Int32Array;
  /** The input with calls renumbered in place where the new index has the same encoded length. */
  patched: Uint8Array;
}

// Event kinds.
const LOOP = 0; // after a loop's block type: the loop check
const BULK = 1; // before memory.copy / memory.fill: the charge
const WIDE_CALL = 2; // a function index whose renumbered encoding is longer: rewritten
const CALL_SITE = 3; // before a call through the table or to an import: the entry check

/** The metered module's bytes. Throws WasmMeterError for a module it cannot meter. */
export function meterWasm(bytes: Uint8Array): Uint8Array {
  const sections = readSections(bytes);
  const find = (id: number) => sections.find((s) => s.id === id);
  const facts = readFacts(bytes, find);
  const code = find(SectionId.Code);
  if (!code) throw new WasmMeterError("no code section");
  const scan = scanCode(bytes, code, facts);
  const onCycle = functionsOnCycles(scan);
  const fuel = facts.importedGlobals + facts.definedGlobals;
  const tick = facts.importedFunctions;
  const tickType = facts.params.length;

  const out = new Writer(bytes.length + (bytes.length >> 2));
  out.bytes(bytes, 0, 8);
  const body = new Writer(bytes.length + (bytes.length >> 2));
  for (const s of sections) {
    body.length = 0;
    const r = new Reader(bytes, s.start, s.end);
    switch (s.id) {
      case SectionId.Type:
        body.u32(r.u32() + 1);
        body.bytes(bytes, r.pos, s.end);
        body.bytes(Uint8Array.of(0x60, 0x00, 0x00)); // () -> ()
        break;
      case SectionId.Import:
        writeImports(r, body, facts.importedFunctions, tickType);
        break;
      case SectionId.Global:
        writeGlobals(r, body, facts);
        break;
      case SectionId.Export:
        writeExports(r, body, facts, fuel);
        break;
      case SectionId.Start:
        body.u32(renumber(r.u32(), facts));
        break;
      case SectionId.Element:
        writeElements(r, body, facts);
        break;
      case SectionId.Code:
        writeCode(body, scan, onCycle, fuel, tick);
        break;
      case SectionId.Custom: {
        // A names section names functions by their old indices.
        const nameLength = r.u32();
        if (new TextDecoder().decode(bytes.subarray(r.pos, r.pos + nameLength)) === "name") continue;
        body.bytes(bytes, s.start, s.end);
        break;
      }
      default:
        body.bytes(bytes, s.start, s.end);
    }
    out.section(s.id, body);
    if (s.id === SectionId.Type && !find(SectionId.Import)) {
      // No imports: a section of the tick alone.
      body.length = 0;
      writeImports(new Reader(Uint8Array.of(0)), body, 0, tickType);
      out.section(SectionId.Import, body);
    }
  }
  return out.result().slice();
}

// ---- reading ----------------------------------------------------------------------------------

function readFacts(bytes: Uint8Array, find: (id: number) => SectionSpan | undefined): ModuleFacts {
  const facts: ModuleFacts = { params: [], functionTypes: [], importedFunctions: 0, importedGlobals: 0, definedGlobals: 0 };
  const types = find(SectionId.Type);
  if (!types) throw new WasmMeterError("no type section");
  let r = new Reader(bytes, types.start, types.end);
  for (let n = r.u32(); n > 0; n--) {
    if (r.byte() !== 0x60) throw new WasmMeterError("a type that is not a function type");
    const params = r.u32();
    skipValueTypes(r, params);
    skipValueTypes(r, r.u32());
    facts.params.push(params);
  }
  const imports = find(SectionId.Import);
  if (imports) {
    r = new Reader(bytes, imports.start, imports.end);
    for (let n = r.u32(); n > 0; n--) {
      r.name();
      r.name();
      const kind = r.byte();
      if (kind === 0) facts.importedFunctions++;
      if (kind === 3) facts.importedGlobals++;
      skipImportDescription(r, kind);
    }
  }
  const functions = find(SectionId.Function);
  if (functions) {
    r = new Reader(bytes, functions.start, functions.end);
    for (let n = r.u32(); n > 0; n--) facts.functionTypes.push(r.u32());
  }
  const globals = find(SectionId.Global);
  if (!globals) throw new WasmMeterError("no global section");
  facts.definedGlobals = new Reader(bytes, globals.start, globals.end).u32();
  return facts;
}

/**
 * One pass over every function body: where the checks go, which calls must be renumbered, and
 * the call graph. A single loop over the whole code section (it reads half a megabyte when the
 * first sandbox of the process starts, so it is written to be fast even before it is optimized).
 */
function scanCode(bytes: Uint8Array, section: SectionSpan, facts: ModuleFacts): Scan {
  const header = new Reader(bytes, section.start, section.end);
  const count = header.u32();
  if (count !== facts.functionTypes.length) throw new WasmMeterError("function and code sections disagree");
  const scan: Scan = {
    bodyStart: new Int32Array(count),
    codeStart: new Int32Array(count),
    bodyEnd: new Int32Array(count),
    locals: new Int32Array(count),
    events: new IntList(),
    eventStart: new Int32Array(count + 1),
    callees: new IntList(),
    calleeStart: new Int32Array(count + 1),
    patched: new Uint8Array(bytes), // a copy (a Buffer's slice() would share the input)
  };
  const { events, callees, patched } = scan;
  const imported = facts.importedFunctions;
  let p = header.pos;
  for (let fn = 0; fn < count; fn++) {
    const r = new Reader(bytes, p, section.end);
    const size = r.u32();
    const end = r.pos + size;
    if (end > section.end) throw new WasmMeterError("a function body runs past its section");
    scan.bodyStart[fn] = r.pos;
    scan.bodyEnd[fn] = end;
    scan.eventStart[fn] = events.length;
    scan.calleeStart[fn] = callees.length;
    let locals = facts.params[facts.functionTypes[fn] as number] ?? 0;
    for (let groups = r.u32(); groups > 0; groups--) {
      locals += r.u32();
      r.byte();
    }
    scan.locals[fn] = locals;
    scan.codeStart[fn] = r.pos;
    p = r.pos;
    while (p < end) {
      const start = p;
      const op = bytes[p++] as number;
      const kind = IMMEDIATES[op] as number;
      if (kind === NONE) continue;
      if (kind === ONE_LEB) {
        if (op !== 0x10 && op !== 0x12 && op !== 0xd2) {
          while ((bytes[p++] as number) & 0x80);
          continue;
        }
        // call, return_call, ref.func: a function index
        let index = 0;
        let shift = 0;
        let b: number;
        do {
          if (shift > 21) throw new WasmMeterError("a function index beyond 2^28");
          b = bytes[p++] as number;
          index |= (b & 0x7f) << shift;
          shift += 7;
        } while (b & 0x80);
        if (index < imported) {
          // A call out to the host, which may call back in: metered where it leaves.
          if (op !== 0xd2) pushEvent(events, CALL_SITE, start, start, 0);
          continue;
        }
        if (op !== 0xd2) callees.push(index - imported);
        const width = p - start - 1;
        if (lebSize(index + 1) <= width) writePaddedLeb(patched, start + 1, width, index + 1);
        else pushEvent(events, WIDE_CALL, start + 1, p, index + 1);
        continue;
      }
      switch (kind) {
        case MEMARG:
          if ((bytes[p] as number) & 0x40) throw new WasmMeterError("multiple memories");
          while ((bytes[p++] as number) & 0x80);
          while ((bytes[p++] as number) & 0x80);
          break;
        case BLOCK_TYPE: {
          const b = bytes[p] as number;
          if (b === 0x40 || (b >= 0x6f && b <= 0x7f)) p++;
          else while ((bytes[p++] as number) & 0x80);
          if (op === 0x03) pushEvent(events, LOOP, p, p, 0);
          break;
        }
        case TWO_LEBS:
          // call_indirect: it may reach any function in the table, so cycles through the table are metered here.
          if (op === 0x11 || op === 0x13) pushEvent(events, CALL_SITE, start, start, 0);
          while ((bytes[p++] as number) & 0x80);
          while ((bytes[p++] as number) & 0x80);
          break;
        case FOUR_BYTES:
          p += 4;
          break;
        case EIGHT_BYTES:
          p += 8;
          break;
        case ONE_BYTE:
          p += 1;
          break;
        case BR_TABLE:
        case SELECT_TYPES: {
          const rest = new Reader(bytes, start + 1, end);
          skipImmediates(rest, op);
          p = rest.pos;
          break;
        }
        case PREFIX_FC: {
          const rest = new Reader(bytes, p, end);
          const sub = rest.u32();
          skipMisc(rest, sub);
          p = rest.pos;
          if (sub === 10 || sub === 11) pushEvent(events, BULK, start, start, 0);
          break;
        }
        default:
          throw new WasmMeterError(`unknown opcode 0x${op.toString(16)} at byte ${start}`);
      }
    }
    if (p !== end) throw new WasmMeterError(`a function body ends inside an instruction at byte ${end}`);
  }
  scan.eventStart[count] = events.length;
  scan.calleeStart[count] = callees.length;
  return scan;
}

function pushEvent(events: IntList, kind: number, at: number, end: number, value: number): void {
  events.push(kind);
  events.push(at);
  events.push(end);
  events.push(value);
}

/**
 * Defined functions on a cycle of direct calls (Tarjan's strongly connected components, iterative:
 * QuickJS's call graph is deep enough to overflow a recursive walk). Cycles through the function
 * table or the host are metered where they leave a function (see CALL_SITE), not here.
 */
function functionsOnCycles(scan: Scan): Uint8Array {
  const n = scan.bodyStart.length;
  const callees = scan.callees.data;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const onCycle = new Uint8Array(n);
  let next = 0;
  const work: { v: number; i: number }[] = [];
  const open = (v: number) => {
    index[v] = low[v] = next++;
    stack.push(v);
    onStack[v] = 1;
    work.push({ v, i: scan.calleeStart[v] as number });
  };
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    open(root);
    while (work.length) {
      const frame = work[work.length - 1] as { v: number; i: number };
      const v = frame.v;
      if (frame.i < (scan.calleeStart[v + 1] as number)) {
        const w = callees[frame.i++] as number;
        if (w === v) onCycle[v] = 1; // direct recursion
        if (index[w] === -1) open(w);
        else if (onStack[w]) low[v] = Math.min(low[v] as number, index[w] as number);
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low[parent.v] = Math.min(low[parent.v] as number, low[v] as number);
      if (low[v] !== index[v]) continue;
      const component: number[] = [];
      let member: number;
      do {
        member = stack.pop() as number;
        onStack[member] = 0;
        component.push(member);
      } while (member !== v);
      if (component.length > 1) for (const f of component) onCycle[f] = 1;
    }
  }
  return onCycle;
}

// ---- writing ----------------------------------------------------------------------------------

function renumber(index: number, facts: ModuleFacts): number {
  return index >= facts.importedFunctions ? index + 1 : index;
}

/** The imports, with the tick after the last function import (so imported functions keep their indices). */
function writeImports(r: Reader, w: Writer, importedFunctions: number, tickType: number): void {
  const count = r.u32();
  w.u32(count + 1);
  let functionsSeen = 0;
  const writeTick = () => {
    w.name(METER_IMPORT.module);
    w.name(METER_IMPORT.name);
    w.byte(0);
    w.u32(tickType);
  };
  if (importedFunctions === 0) writeTick();
  for (let i = 0; i < count; i++) {
    const start = r.pos;
    r.name();
    r.name();
    const kind = r.byte();
    skipImportDescription(r, kind);
    w.bytes(r.bytes, start, r.pos);
    if (kind === 0 && ++functionsSeen === importedFunctions) writeTick();
  }
}

function writeGlobals(r: Reader, w: Writer, facts: ModuleFacts): void {
  const count = r.u32();
  w.u32(count + 1);
  for (let i = 0; i < count; i++) {
    w.byte(r.byte()); // value type
    w.byte(r.byte()); // mutability
    copyConstExpr(r, w, facts);
  }
  // The fuel: (mut i32) = 0, so the first check calls tick, which fills it.
  w.bytes(Uint8Array.of(0x7f, 0x01, 0x41, 0x00, 0x0b));
}

function writeExports(r: Reader, w: Writer, facts: ModuleFacts, fuel: number): void {
  const count = r.u32();
  w.u32(count + 1);
  for (let i = 0; i < count; i++) {
    const start = r.pos;
    r.name();
    w.bytes(r.bytes, start, r.pos);
    const kind = r.byte();
    w.byte(kind);
    const index = r.u32();
    w.u32(kind === 0 ? renumber(index, facts) : index);
  }
  w.name(METER_FUEL_EXPORT);
  w.byte(3); // global
  w.u32(fuel);
}

/** A constant expression, with `ref.func` renumbered. */
function copyConstExpr(r: Reader, w: Writer, facts: ModuleFacts): void {
  for (;;) {
    const start = r.pos;
    const op = r.byte();
    if (op === 0x0b) {
      w.byte(op);
      return;
    }
    if (op === 0xd2) {
      w.op(op, renumber(r.u32(), facts));
      continue;
    }
    skipImmediates(r, op);
    w.bytes(r.bytes, start, r.pos);
  }
}

/** Element segments, renumbered. */
function writeElements(r: Reader, w: Writer, facts: ModuleFacts): void {
  const count = r.u32();
  w.u32(count);
  for (let i = 0; i < count; i++) {
    const flags = r.u32();
    w.u32(flags);
    if (flags > 7) throw new WasmMeterError(`unknown element segment form ${flags}`);
    if ((flags & 1) === 0) {
      // active: a table index (form 2 and 6), then the offset expression
      if (flags & 2) w.u32(r.u32());
      copyConstExpr(r, w, facts);
    }
    // The element kind (0x00: funcref) or reference type, absent in forms 0 and 4.
    if (flags & 3) w.byte(r.byte());
    const n = r.u32();
    w.u32(n);
    for (let j = 0; j < n; j++) {
      if (flags & 4) {
        copyConstExpr(r, w, facts);
        continue;
      }
      w.u32(renumber(r.u32(), facts));
    }
  }
}

/** The check after a function entry: `fuel -= 1; if (fuel < 1) tick()`. */
function entryCheck(fuel: number, tick: number): Uint8Array {
  const w = new Writer();
  w.op(0x23, fuel); // global.get fuel
  w.bytes(Uint8Array.of(0x41, 0x01, 0x6b)); // i32.const 1; i32.sub
  w.op(0x24, fuel); // global.set fuel
  w.bytes(fuelTest(fuel, tick));
  return w.result().slice();
}

/** `if (fuel < 1) tick()`. */
function fuelTest(fuel: number, tick: number): Uint8Array {
  const w = new Writer();
  w.op(0x23, fuel); // global.get fuel
  w.bytes(Uint8Array.of(0x41, 0x01, 0x48)); // i32.const 1; i32.lt_s
  w.bytes(Uint8Array.of(0x04, 0x40)); // if
  w.op(0x10, tick); // call tick
  w.byte(0x0b); // end
  return w.result().slice();
}

/**
 * The check at the top of a loop body: `if (--counter < 0) { counter = LOOP_BATCH; fuel -=
 * LOOP_BATCH; if (fuel < 1) tick() }`. The counter starts at 0 in each call, so the first
 * iteration charges a batch.
 */
function loopCheck(counter: number, fuel: number, tick: number): Uint8Array {
  const w = new Writer();
  w.op(0x20, counter); // local.get counter
  w.bytes(Uint8Array.of(0x41, 0x01, 0x6b)); // i32.const 1; i32.sub
  w.op(0x22, counter); // local.tee counter
  w.bytes(Uint8Array.of(0x41, 0x00, 0x48)); // i32.const 0; i32.lt_s
  w.bytes(Uint8Array.of(0x04, 0x40)); // if
  w.byte(0x41); // i32.const LOOP_BATCH
  w.s32(LOOP_BATCH);
  w.op(0x21, counter); // local.set counter
  w.op(0x23, fuel); // global.get fuel
  w.byte(0x41); // i32.const LOOP_BATCH
  w.s32(LOOP_BATCH);
  w.byte(0x6b); // i32.sub
  w.op(0x24, fuel); // global.set fuel
  w.bytes(fuelTest(fuel, tick));
  w.byte(0x0b); // end
  return w.result().slice();
}

/** Before `memory.copy` / `memory.fill` (operand stack: ..., size): charge the size, kept in `scratch`. */
function bulkCharge(scratch: number, fuel: number, tick: number): Uint8Array {
  const w = new Writer();
  w.op(0x22, scratch); // local.tee scratch
  w.op(0x23, fuel); // global.get fuel
  w.op(0x20, scratch); // local.get scratch
  w.bytes(Uint8Array.of(0x41, BYTES_PER_FUEL_SHIFT, 0x76, 0x6b)); // i32.const shift; i32.shr_u; i32.sub
  w.op(0x24, fuel); // global.set fuel
  w.bytes(fuelTest(fuel, tick));
  return w.result().slice();
}

function writeCode(w: Writer, scan: Scan, onCycle: Uint8Array, fuel: number, tick: number): void {
  const count = onCycle.length;
  w.u32(count);
  const entry = entryCheck(fuel, tick);
  const src = scan.patched;
  const events = scan.events.data;
  const body = new Writer(1 << 16);
  for (let fn = 0; fn < count; fn++) {
    body.length = 0;
    const localsStart = scan.bodyStart[fn] as number;
    const r = new Reader(src, localsStart);
    const groups = r.u32();
    // The declared locals, then two i32: the loop counter and the bulk scratch.
    body.u32(groups + 1);
    body.bytes(src, r.pos, scan.codeStart[fn]);
    body.bytes(Uint8Array.of(0x02, 0x7f));
    const counter = scan.locals[fn] as number;
    if (onCycle[fn]) body.bytes(entry);
    let copied = scan.codeStart[fn] as number;
    let loop: Uint8Array | null = null;
    let bulk: Uint8Array | null = null;
    for (let e = scan.eventStart[fn] as number; e < (scan.eventStart[fn + 1] as number); e += 4) {
      const kind = events[e];
      const at = events[e + 1] as number;
      body.bytes(src, copied, at);
      copied = events[e + 2] as number;
      if (kind === LOOP) body.bytes((loop ??= loopCheck(counter, fuel, tick)));
      else if (kind === BULK) body.bytes((bulk ??= bulkCharge(counter + 1, fuel, tick)));
      else if (kind === CALL_SITE) body.bytes(entry);
      else body.u32(events[e + 3] as number);
    }
    body.bytes(src, copied, scan.bodyEnd[fn]);
    w.u32(body.length);
    w.bytes(body.result());
  }
}
