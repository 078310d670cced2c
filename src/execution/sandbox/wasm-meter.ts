/**
 * Metering of QuickJS's WebAssembly: a hard stop without a thread.
 *
 * QuickJS's own interrupt handler runs only every 10,000 JavaScript calls or loop iterations, so a
 * loop whose every iteration is a long native operation (a huge `join`, a regex on a long string)
 * can run for seconds between two checks. Stopping such code from outside takes another thread
 * (node:vm's `timeout` starts and joins one per call: ~0.3 ms, more than a whole tool call).
 *
 * Instead, the code itself is metered, once per process when it is compiled: every function entry
 * and every loop iteration of the WebAssembly code — QuickJS's C code, including the native
 * operations — decrements a counter, and when it reaches zero the code calls the host's `tick`
 * import, which resets the counter and compares the clock with the entry's hard deadline. A
 * `tick` that throws unwinds the WebAssembly stack at once. No path through the code runs long
 * without a function entry or a loop iteration (the only unmetered work is a single instruction
 * such as `memory.copy` or `memory.grow`, bounded by the size of the sandbox's memory, and those
 * are charged by the bytes they touch), so the deadline is seen within microseconds.
 *
 * The rewrite is a single pass over the binary: an import `tscm.tick` (type `() -> ()`) is added
 * after the existing function imports (the functions defined in the module move up by one, so
 * every reference to them is renumbered), a mutable i32 global holds the counter (exported as
 * `tscm_fuel`, so the host can reset it), and the check is inserted at the start of every
 * function body and after every `loop`. An opcode this reader does not know makes it throw: a
 * QuickJS build using instructions it cannot meter must not run unmetered.
 */

/** Where the host's check is imported from. */
export const METER_IMPORT = { module: "tscm", name: "tick" } as const;
/** The exported counter global. */
export const METER_FUEL_EXPORT = "tscm_fuel";
/** Bytes of `memory.copy` / `memory.fill` that cost one unit of fuel (a unit is roughly one loop iteration). */
const BYTES_PER_FUEL_SHIFT = 6;

const enum Section {
  Custom = 0,
  Type = 1,
  Import = 2,
  Function = 3,
  Table = 4,
  Memory = 5,
  Global = 6,
  Export = 7,
  Start = 8,
  Element = 9,
  Code = 10,
  Data = 11,
  DataCount = 12,
  Tag = 13,
}

/** Thrown for a binary this reader does not understand. */
export class WasmMeterError extends Error {
  constructor(message: string) {
    super(`cannot meter the QuickJS WebAssembly: ${message}`);
    this.name = "WasmMeterError";
  }
}

class Reader {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    readonly end = bytes.length,
  ) {
    this.pos = start;
  }
  get done(): boolean {
    return this.pos >= this.end;
  }
  byte(): number {
    if (this.pos >= this.end) throw new WasmMeterError("unexpected end");
    return this.bytes[this.pos++] as number;
  }
  u32(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 35) throw new WasmMeterError("bad LEB128");
    }
  }
  /** Skips a signed LEB128 of any width. */
  skipLeb(): void {
    while (this.byte() & 0x80);
  }
  skip(n: number): void {
    this.pos += n;
    if (this.pos > this.end) throw new WasmMeterError("unexpected end");
  }
  name(): void {
    this.skip(this.u32());
  }
}

class Writer {
  private buf: Uint8Array;
  length = 0;
  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
  }
  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }
  byte(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }
  bytes(src: Uint8Array, start = 0, end = src.length): void {
    const n = end - start;
    this.room(n);
    if (n < 64) {
      for (let i = start; i < end; i++) this.buf[this.length++] = src[i] as number;
      return;
    }
    this.buf.set(src.subarray(start, end), this.length);
    this.length += n;
  }
  u32(value: number): void {
    let v = value >>> 0;
    do {
      let b = v & 0x7f;
      v >>>= 7;
      if (v !== 0) b |= 0x80;
      this.byte(b);
    } while (v !== 0);
  }
  name(text: string): void {
    const encoded = new TextEncoder().encode(text);
    this.u32(encoded.length);
    this.bytes(encoded);
  }
  result(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

interface Layout {
  /** Function imports before ours: indices below it are unchanged, the others move up by one. */
  importedFunctions: number;
  importedGlobals: number;
  definedGlobals: number;
  /** Index of the added type `() -> ()`. */
  tickType: number;
  /** Parameter count of each type. */
  params: number[];
  /** Type index of each function defined in the module. */
  functionTypes: number[];
}

/** The metered module's bytes. */
export function meterWasm(bytes: Uint8Array): Uint8Array {
  const input = new Reader(bytes);
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) throw new WasmMeterError("not a WebAssembly module");
  input.skip(8);
  const sections: { id: number; start: number; end: number }[] = [];
  while (!input.done) {
    const id = input.byte();
    const size = input.u32();
    sections.push({ id, start: input.pos, end: input.pos + size });
    input.skip(size);
  }
  const find = (id: number) => sections.find((s) => s.id === id);
  const layout: Layout = { importedFunctions: 0, importedGlobals: 0, definedGlobals: 0, tickType: 0, params: [], functionTypes: [] };
  const types = find(Section.Type);
  if (!types) throw new WasmMeterError("no type section");
  readTypes(new Reader(bytes, types.start, types.end), layout);
  const functions = find(Section.Function);
  if (functions) {
    const r = new Reader(bytes, functions.start, functions.end);
    for (let n = r.u32(); n > 0; n--) layout.functionTypes.push(r.u32());
  }
  const imports = find(Section.Import);
  if (imports) countImports(new Reader(bytes, imports.start, imports.end), layout);
  const globals = find(Section.Global);
  if (!globals) throw new WasmMeterError("no global section");
  layout.definedGlobals = new Reader(bytes, globals.start, globals.end).u32();
  const fuel = layout.importedGlobals + layout.definedGlobals;

  const out = new Writer(bytes.length + (bytes.length >> 2));
  out.bytes(bytes, 0, 8);
  for (const s of sections) {
    const body = new Writer();
    const r = new Reader(bytes, s.start, s.end);
    switch (s.id) {
      case Section.Type:
        body.u32(r.u32() + 1);
        body.bytes(bytes, r.pos, s.end);
        body.bytes(Uint8Array.of(0x60, 0x00, 0x00));
        break;
      case Section.Import:
        writeImports(r, body, layout);
        break;
      case Section.Global:
        writeGlobals(r, body, layout);
        break;
      case Section.Export:
        writeExports(r, body, layout, fuel);
        break;
      case Section.Start:
        body.u32(renumber(r.u32(), layout));
        break;
      case Section.Element:
        writeElements(r, body, layout);
        break;
      case Section.Code:
        writeCode(r, body, layout, fuel);
        break;
      case Section.Custom: {
        // A name section would name functions by their old indices: dropped (this build has none).
        const nameLength = r.u32();
        if (new TextDecoder().decode(bytes.subarray(r.pos, r.pos + nameLength)) === "name") continue;
        body.bytes(bytes, s.start, s.end);
        break;
      }
      default:
        body.bytes(bytes, s.start, s.end);
    }
    out.byte(s.id);
    out.u32(body.length);
    out.bytes(body.result());
  }
  return out.result();
}

function readTypes(r: Reader, layout: Layout): void {
  const count = r.u32();
  layout.tickType = count;
  for (let i = 0; i < count; i++) {
    if (r.byte() !== 0x60) throw new WasmMeterError("a type that is not a function type");
    const params = r.u32();
    skipValueTypes(r, params);
    skipValueTypes(r, r.u32());
    layout.params.push(params);
  }
}

function skipValueTypes(r: Reader, n: number): void {
  for (let i = 0; i < n; i++) {
    const t = r.byte();
    // Number, vector and the two reference types: one byte each (typed references would be more).
    if (t < 0x6f || t > 0x7f) throw new WasmMeterError(`unknown value type 0x${t.toString(16)}`);
  }
}

function renumber(index: number, layout: Layout): number {
  return index >= layout.importedFunctions ? index + 1 : index;
}

function skipImportDescription(r: Reader, kind: number): void {
  switch (kind) {
    case 0: // function
      r.u32();
      return;
    case 1: // table: reftype, limits
      r.byte();
      skipLimits(r);
      return;
    case 2: // memory
      skipLimits(r);
      return;
    case 3: // global: valtype, mutability
      r.byte();
      r.byte();
      return;
    case 4: // tag
      r.byte();
      r.u32();
      return;
    default:
      throw new WasmMeterError(`unknown import kind ${kind}`);
  }
}

function skipLimits(r: Reader): void {
  const flags = r.byte();
  r.u32();
  if (flags & 1) r.u32();
}

function countImports(r: Reader, layout: Layout): void {
  const count = r.u32();
  for (let i = 0; i < count; i++) {
    r.name();
    r.name();
    const kind = r.byte();
    if (kind === 0) layout.importedFunctions++;
    if (kind === 3) layout.importedGlobals++;
    skipImportDescription(r, kind);
  }
}

/** The imports with ours after the last function import (so imported functions keep their indices). */
function writeImports(r: Reader, w: Writer, layout: Layout): void {
  const count = r.u32();
  w.u32(count + 1);
  let functionsSeen = 0;
  const writeTick = () => {
    w.name(METER_IMPORT.module);
    w.name(METER_IMPORT.name);
    w.byte(0);
    w.u32(layout.tickType);
  };
  if (layout.importedFunctions === 0) writeTick();
  for (let i = 0; i < count; i++) {
    const start = r.pos;
    r.name();
    r.name();
    const kind = r.byte();
    skipImportDescription(r, kind);
    w.bytes(r.bytes, start, r.pos);
    if (kind === 0 && ++functionsSeen === layout.importedFunctions) writeTick();
  }
}

function writeGlobals(r: Reader, w: Writer, layout: Layout): void {
  const count = r.u32();
  w.u32(count + 1);
  for (let i = 0; i < count; i++) {
    w.byte(r.byte()); // valtype
    w.byte(r.byte()); // mutability
    copyConstExpr(r, w, layout);
  }
  // (mut i32) = 0: the first check calls tick, which fills it.
  w.bytes(Uint8Array.of(0x7f, 0x01, 0x41, 0x00, 0x0b));
}

function writeExports(r: Reader, w: Writer, layout: Layout, fuel: number): void {
  const count = r.u32();
  w.u32(count + 1);
  for (let i = 0; i < count; i++) {
    const start = r.pos;
    r.name();
    w.bytes(r.bytes, start, r.pos);
    const kind = r.byte();
    w.byte(kind);
    const index = r.u32();
    w.u32(kind === 0 ? renumber(index, layout) : index);
  }
  w.name(METER_FUEL_EXPORT);
  w.byte(3);
  w.u32(fuel);
}

/** A constant expression, with `ref.func` renumbered. */
function copyConstExpr(r: Reader, w: Writer, layout: Layout): void {
  for (;;) {
    const start = r.pos;
    const op = r.byte();
    if (op === 0x0b) {
      w.byte(op);
      return;
    }
    if (op === 0xd2) {
      w.byte(op);
      w.u32(renumber(r.u32(), layout));
      continue;
    }
    skipImmediates(r, op);
    w.bytes(r.bytes, start, r.pos);
  }
}

function writeElements(r: Reader, w: Writer, layout: Layout): void {
  const count = r.u32();
  w.u32(count);
  for (let i = 0; i < count; i++) {
    const flags = r.u32();
    w.u32(flags);
    const passiveOrDeclarative = (flags & 1) !== 0;
    const explicitTable = (flags & 2) !== 0;
    const usesExpressions = (flags & 4) !== 0;
    if (!passiveOrDeclarative) {
      if (explicitTable) w.u32(r.u32());
      copyConstExpr(r, w, layout);
    }
    // elemkind (0x00 = funcref) or reftype, present unless the segment is the legacy form 0 / 4.
    if (flags & 3) w.byte(r.byte());
    const n = r.u32();
    w.u32(n);
    for (let j = 0; j < n; j++) {
      if (usesExpressions) copyConstExpr(r, w, layout);
      else w.u32(renumber(r.u32(), layout));
    }
  }
}

/**
 * The check inserted at each metered point: `fuel -= 1; if (fuel <= 0) tick()`, leaving the
 * operand stack as it was.
 */
function checkBytes(fuel: number, tick: number): Uint8Array {
  const w = new Writer();
  w.byte(0x23); // global.get fuel
  w.u32(fuel);
  w.bytes(Uint8Array.of(0x41, 0x01, 0x6b)); // i32.const 1; i32.sub
  w.byte(0x24); // global.set fuel
  w.u32(fuel);
  w.byte(0x23);
  w.u32(fuel);
  w.bytes(Uint8Array.of(0x41, 0x01, 0x48)); // i32.const 1; i32.lt_s
  w.bytes(Uint8Array.of(0x04, 0x40)); // if (empty block type)
  w.byte(0x10); // call tick
  w.u32(tick);
  w.byte(0x0b); // end
  return w.result().slice();
}

function writeCode(r: Reader, w: Writer, layout: Layout, fuel: number): void {
  const count = r.u32();
  w.u32(count);
  const check = checkBytes(fuel, layout.importedFunctions);
  const body = new Writer(1 << 16);
  for (let i = 0; i < count; i++) {
    const size = r.u32();
    const end = r.pos + size;
    const f = new Reader(r.bytes, r.pos, end);
    body.length = 0;
    // Locals, plus one i32 (the last local) that holds a bulk memory operation's size while it is charged.
    const groups = f.u32();
    const localsStart = f.pos;
    let locals = layout.params[layout.functionTypes[i] as number] as number;
    for (let g = 0; g < groups; g++) {
      locals += f.u32();
      f.byte();
    }
    body.u32(groups + 1);
    body.bytes(r.bytes, localsStart, f.pos);
    body.bytes(Uint8Array.of(0x01, 0x7f));
    body.bytes(check);
    writeInstructions(r.bytes, f.pos, end, body, layout.importedFunctions, check, () => chargeBytes(fuel, locals, check));
    w.u32(body.length);
    w.bytes(body.result());
    r.pos = end;
  }
}

/**
 * Inserted before `memory.copy` / `memory.fill` (operand stack: ..., size): the size is kept in
 * the scratch local, charged to the fuel, and the check runs.
 */
function chargeBytes(fuel: number, scratch: number, check: Uint8Array): Uint8Array {
  const w = new Writer();
  w.byte(0x22); // local.tee scratch
  w.u32(scratch);
  w.byte(0x23); // global.get fuel
  w.u32(fuel);
  w.byte(0x20); // local.get scratch
  w.u32(scratch);
  w.bytes(Uint8Array.of(0x41, BYTES_PER_FUEL_SHIFT, 0x76, 0x6b)); // i32.const shift; i32.shr_u; i32.sub
  w.byte(0x24); // global.set fuel
  w.u32(fuel);
  w.bytes(check);
  return w.result().slice();
}

// What follows an opcode in a function body (see skipImmediates for the instructions by name).
const NONE = 0;
const ONE_LEB = 1;
const TWO_LEBS = 2;
const MEMARG = 3;
const BLOCK_TYPE = 4;
const BR_TABLE = 5;
const FOUR_BYTES = 6;
const EIGHT_BYTES = 7;
const SELECT_TYPES = 8;
const PREFIX_FC = 9;
const ONE_BYTE = 10;
const UNKNOWN = 255;
const IMMEDIATES = (() => {
  const t = new Uint8Array(256).fill(UNKNOWN);
  for (let op = 0x45; op <= 0xc4; op++) t[op] = NONE;
  for (let op = 0x28; op <= 0x3e; op++) t[op] = MEMARG;
  for (const op of [0x00, 0x01, 0x05, 0x0b, 0x0f, 0x19, 0x1a, 0x1b, 0xd1]) t[op] = NONE;
  for (const op of [0x02, 0x03, 0x04, 0x06]) t[op] = BLOCK_TYPE;
  for (const op of [0x07, 0x08, 0x09, 0x0c, 0x0d, 0x10, 0x12, 0x18, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0xd2, 0x3f, 0x40, 0x41, 0x42]) t[op] = ONE_LEB;
  for (const op of [0x11, 0x13]) t[op] = TWO_LEBS;
  t[0x0e] = BR_TABLE;
  t[0x1c] = SELECT_TYPES;
  t[0x43] = FOUR_BYTES;
  t[0x44] = EIGHT_BYTES;
  t[0xd0] = ONE_BYTE;
  t[0xfc] = PREFIX_FC;
  return t;
})();

/**
 * Copies the instructions of one body (`src[pos..end]`) to `w`, renumbering calls and inserting
 * the checks; unchanged runs of bytes are copied in one piece. One tight loop: it reads the whole
 * QuickJS binary when the first sandbox of the process starts.
 */
function writeInstructions(src: Uint8Array, pos: number, end: number, w: Writer, importedFunctions: number, check: Uint8Array, charge: () => Uint8Array): void {
  let p = pos;
  let copied = pos;
  let charged: Uint8Array | null = null;
  while (p < end) {
    const start = p;
    const op = src[p++] as number;
    const kind = IMMEDIATES[op] as number;
    if (kind === NONE) continue;
    if (kind === ONE_LEB) {
      if (op === 0x10 || op === 0x12 || op === 0xd2) {
        // call, return_call, ref.func: a function index, renumbered
        let index = 0;
        let shift = 0;
        let b: number;
        do {
          b = src[p++] as number;
          index += (b & 0x7f) * 2 ** shift;
          shift += 7;
        } while (b & 0x80);
        if (index < importedFunctions) continue;
        w.bytes(src, copied, start);
        w.byte(op);
        w.u32(index + 1);
        copied = p;
        continue;
      }
      while ((src[p++] as number) & 0x80);
      continue;
    }
    switch (kind) {
      case MEMARG: {
        let align = 0;
        let shift = 0;
        let b: number;
        do {
          b = src[p++] as number;
          align |= (b & 0x7f) << shift;
          shift += 7;
        } while (b & 0x80 && shift < 28);
        if (align & 0x40) while ((src[p++] as number) & 0x80);
        while ((src[p++] as number) & 0x80);
        break;
      }
      case BLOCK_TYPE: {
        const b = src[p] as number;
        if (b === 0x40 || (b >= 0x6f && b <= 0x7f)) p++;
        else while ((src[p++] as number) & 0x80);
        if (op === 0x03) {
          // loop: checked on every iteration
          w.bytes(src, copied, p);
          w.bytes(check);
          copied = p;
        }
        break;
      }
      case TWO_LEBS:
        while ((src[p++] as number) & 0x80);
        while ((src[p++] as number) & 0x80);
        break;
      case BR_TABLE: {
        const r = new Reader(src, p, end);
        const n = r.u32();
        for (let i = 0; i <= n; i++) r.u32();
        p = r.pos;
        break;
      }
      case FOUR_BYTES:
        p += 4;
        break;
      case EIGHT_BYTES:
        p += 8;
        break;
      case ONE_BYTE:
        p += 1;
        break;
      case SELECT_TYPES: {
        const r = new Reader(src, p, end);
        r.skip(r.u32());
        p = r.pos;
        break;
      }
      case PREFIX_FC: {
        const r = new Reader(src, p, end);
        const sub = r.u32();
        skipMisc(r, sub);
        p = r.pos;
        // memory.copy, memory.fill: one instruction, as long as its size: charged by the byte.
        if (sub === 10 || sub === 11) {
          w.bytes(src, copied, start);
          w.bytes((charged ??= charge()));
          copied = start;
        }
        break;
      }
      default:
        throw new WasmMeterError(`unknown opcode 0x${op.toString(16)} at byte ${start}`);
    }
  }
  if (p !== end) throw new WasmMeterError(`a function body ends inside an instruction at byte ${end}`);
  w.bytes(src, copied, p);
}

/** Skips the immediates of the instruction `op` (its opcode byte already read). */
function skipImmediates(r: Reader, op: number): void {
  if (op >= 0x45 && op <= 0xc4) return; // numeric, no immediates
  if (op >= 0x28 && op <= 0x3e) {
    // memarg: alignment (bit 6: a memory index follows), offset
    const align = r.u32();
    if (align & 0x40) r.u32();
    r.u32();
    return;
  }
  switch (op) {
    case 0x00: // unreachable
    case 0x01: // nop
    case 0x05: // else
    case 0x0b: // end
    case 0x0f: // return
    case 0x19: // catch_all
    case 0x1a: // drop
    case 0x1b: // select
    case 0xd1: // ref.is_null
      return;
    case 0x02: // block
    case 0x03: // loop
    case 0x04: // if
    case 0x06: // try
      skipBlockType(r);
      return;
    case 0x07: // catch
    case 0x08: // throw
    case 0x09: // rethrow
    case 0x0c: // br
    case 0x0d: // br_if
    case 0x10: // call
    case 0x12: // return_call
    case 0x18: // delegate
    case 0x20: // local.get
    case 0x21: // local.set
    case 0x22: // local.tee
    case 0x23: // global.get
    case 0x24: // global.set
    case 0x25: // table.get
    case 0x26: // table.set
    case 0xd2: // ref.func
      r.u32();
      return;
    case 0x0e: {
      // br_table: a vector of labels and the default
      const n = r.u32();
      for (let i = 0; i <= n; i++) r.u32();
      return;
    }
    case 0x11: // call_indirect: type, table
    case 0x13: // return_call_indirect
      r.u32();
      r.u32();
      return;
    case 0x1c: {
      // select with types
      const n = r.u32();
      r.skip(n);
      return;
    }
    case 0x3f: // memory.size
    case 0x40: // memory.grow
      r.u32();
      return;
    case 0x41: // i32.const
    case 0x42: // i64.const
      r.skipLeb();
      return;
    case 0x43: // f32.const
      r.skip(4);
      return;
    case 0x44: // f64.const
      r.skip(8);
      return;
    case 0xd0: // ref.null
      r.byte();
      return;
    case 0xfc:
      skipMisc(r, r.u32());
      return;
    default:
      throw new WasmMeterError(`unknown opcode 0x${op.toString(16)} at byte ${r.pos - 1}`);
  }
}

function skipMisc(r: Reader, sub: number): void {
  if (sub <= 7) return; // saturating float-to-int conversions
  switch (sub) {
    case 8: // memory.init: data, memory
      r.u32();
      r.u32();
      return;
    case 9: // data.drop
    case 11: // memory.fill: memory
    case 13: // elem.drop
    case 15: // table.grow
    case 16: // table.size
    case 17: // table.fill
      r.u32();
      return;
    case 10: // memory.copy: memory, memory
    case 12: // table.init: elem, table
    case 14: // table.copy
      r.u32();
      r.u32();
      return;
    default:
      throw new WasmMeterError(`unknown opcode 0xfc ${sub}`);
  }
}

function skipBlockType(r: Reader): void {
  const b = r.bytes[r.pos] as number;
  if (b === 0x40 || (b >= 0x6f && b <= 0x7f)) {
    r.pos++;
    return;
  }
  r.skipLeb(); // a type index (s33)
}
