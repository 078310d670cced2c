/**
 * Reading and writing the WebAssembly binary format, as much as wasm-meter.ts needs: LEB128
 * numbers, sections, and the length of every instruction's immediates (so a function body can be
 * walked instruction by instruction). An instruction this reader does not know throws
 * WasmMeterError: a module using it must not be rewritten by guesswork.
 */

/** Thrown for a binary this reader does not understand. */
export class WasmMeterError extends Error {
  constructor(message: string) {
    super(`cannot meter the QuickJS WebAssembly: ${message}`);
    this.name = "WasmMeterError";
  }
}

export const enum SectionId {
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
}

export interface SectionSpan {
  id: number;
  /** First byte of the section's contents (after its size). */
  start: number;
  end: number;
}

export class Reader {
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
  /** Skips a signed or unsigned LEB128 of any width. */
  skipLeb(): void {
    while (this.byte() & 0x80);
  }
  skip(n: number): void {
    this.pos += n;
    if (this.pos > this.end) throw new WasmMeterError("unexpected end");
  }
  /** Skips a name (a length and UTF-8 bytes). */
  name(): void {
    this.skip(this.u32());
  }
}

export class Writer {
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
    if (n < 32) {
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
  /** A signed LEB128 (for i32.const). */
  s32(value: number): void {
    let v = value | 0;
    for (;;) {
      const b = v & 0x7f;
      v >>= 7;
      const done = (v === 0 && (b & 0x40) === 0) || (v === -1 && (b & 0x40) !== 0);
      this.byte(done ? b : b | 0x80);
      if (done) return;
    }
  }
  name(text: string): void {
    const encoded = new TextEncoder().encode(text);
    this.u32(encoded.length);
    this.bytes(encoded);
  }
  /** An instruction whose one immediate is an index (`global.get 3`, `local.set 7`, `call 12`). */
  op(opcode: number, index: number): void {
    this.byte(opcode);
    this.u32(index);
  }
  /** A section: its id, its size and the bytes `body` holds. */
  section(id: number, body: Writer): void {
    this.byte(id);
    this.u32(body.length);
    this.bytes(body.result());
  }
  /** Bytes written so far (a view: copy it before writing more). */
  result(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

/** A growable list of int32 (a plain array of numbers is several times slower to fill before V8 optimizes the filling code). */
export class IntList {
  data = new Int32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = value;
  }
}

/** Bytes of the unsigned LEB128 encoding of `value`. */
export function lebSize(value: number): number {
  let size = 1;
  for (let v = value >>> 7; v !== 0; v >>>= 7) size++;
  return size;
}

/** Writes `value` as an unsigned LEB128 of exactly `width` bytes (padded with continuation bytes), in place. */
export function writePaddedLeb(into: Uint8Array, at: number, width: number, value: number): void {
  let v = value;
  for (let i = 0; i < width - 1; i++) {
    into[at + i] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  into[at + width - 1] = v & 0x7f;
}

/** The sections of a module, checking its header. */
export function readSections(bytes: Uint8Array): SectionSpan[] {
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d || bytes[4] !== 1) {
    throw new WasmMeterError("not a WebAssembly (version 1) module");
  }
  const r = new Reader(bytes, 8);
  const sections: SectionSpan[] = [];
  while (!r.done) {
    const id = r.byte();
    const size = r.u32();
    sections.push({ id, start: r.pos, end: r.pos + size });
    r.skip(size);
  }
  return sections;
}

/** Skips an import's description (after its names and kind byte). */
export function skipImportDescription(r: Reader, kind: number): void {
  switch (kind) {
    case 0: // function: type index
      r.u32();
      return;
    case 1: // table: reftype, limits
      r.byte();
      skipLimits(r);
      return;
    case 2: // memory: limits
      skipLimits(r);
      return;
    case 3: // global: valtype, mutability
      r.byte();
      r.byte();
      return;
    case 4: // tag: attribute, type
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

/** Skips `n` value types (one byte each: numbers, v128 and the two reference types; typed references are refused). */
export function skipValueTypes(r: Reader, n: number): void {
  for (let i = 0; i < n; i++) {
    const t = r.byte();
    if (t < 0x6f || t > 0x7f) throw new WasmMeterError(`unknown value type 0x${t.toString(16)}`);
  }
}

// What follows an opcode: the kinds of immediates (see skipImmediates for the instructions by name).
export const NONE = 0;
export const ONE_LEB = 1;
export const TWO_LEBS = 2;
export const MEMARG = 3;
export const BLOCK_TYPE = 4;
export const BR_TABLE = 5;
export const FOUR_BYTES = 6;
export const EIGHT_BYTES = 7;
export const SELECT_TYPES = 8;
export const PREFIX_FC = 9;
export const ONE_BYTE = 10;
export const UNKNOWN = 255;

/** Immediates of each one-byte opcode: the MVP, sign extension, reference types, tail calls, exceptions, and the 0xFC prefix. */
export const IMMEDIATES = (() => {
  const t = new Uint8Array(256).fill(UNKNOWN);
  for (let op = 0x45; op <= 0xc4; op++) t[op] = NONE; // numeric instructions
  for (let op = 0x28; op <= 0x3e; op++) t[op] = MEMARG; // loads and stores
  // unreachable, nop, else, end, return, catch_all, drop, select, ref.is_null
  for (const op of [0x00, 0x01, 0x05, 0x0b, 0x0f, 0x19, 0x1a, 0x1b, 0xd1]) t[op] = NONE;
  // block, loop, if, try
  for (const op of [0x02, 0x03, 0x04, 0x06]) t[op] = BLOCK_TYPE;
  // catch, throw, rethrow, br, br_if, call, return_call, delegate, local.*, global.*, table.get/set,
  // ref.func, memory.size, memory.grow, i32.const, i64.const
  for (const op of [0x07, 0x08, 0x09, 0x0c, 0x0d, 0x10, 0x12, 0x18, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0xd2, 0x3f, 0x40, 0x41, 0x42]) t[op] = ONE_LEB;
  t[0x11] = TWO_LEBS; // call_indirect: type, table
  t[0x13] = TWO_LEBS; // return_call_indirect
  t[0x0e] = BR_TABLE;
  t[0x1c] = SELECT_TYPES;
  t[0x43] = FOUR_BYTES; // f32.const
  t[0x44] = EIGHT_BYTES; // f64.const
  t[0xd0] = ONE_BYTE; // ref.null
  t[0xfc] = PREFIX_FC;
  return t;
})();

/** Skips the immediates of a 0xFC-prefixed instruction (its sub-opcode already read). */
export function skipMisc(r: Reader, sub: number): void {
  if (sub <= 7) return; // saturating float-to-int conversions
  switch (sub) {
    case 8: // memory.init: data, memory
    case 10: // memory.copy: memory, memory
    case 12: // table.init: element, table
    case 14: // table.copy: table, table
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
    default:
      throw new WasmMeterError(`unknown opcode 0xfc ${sub}`);
  }
}

/** Skips the immediates of instruction `op` (its opcode byte already read). */
export function skipImmediates(r: Reader, op: number): void {
  switch (IMMEDIATES[op]) {
    case NONE:
      return;
    case ONE_LEB:
      r.skipLeb();
      return;
    case TWO_LEBS:
      r.skipLeb();
      r.skipLeb();
      return;
    case MEMARG:
      // alignment (bit 6: a memory index follows), offset
      if (r.u32() & 0x40) r.skipLeb();
      r.skipLeb();
      return;
    case BLOCK_TYPE: {
      const b = r.bytes[r.pos] as number;
      if (b === 0x40 || (b >= 0x6f && b <= 0x7f)) r.pos++;
      else r.skipLeb(); // a type index (s33)
      return;
    }
    case BR_TABLE: {
      const n = r.u32();
      for (let i = 0; i <= n; i++) r.skipLeb();
      return;
    }
    case FOUR_BYTES:
      r.skip(4);
      return;
    case EIGHT_BYTES:
      r.skip(8);
      return;
    case SELECT_TYPES:
      skipValueTypes(r, r.u32());
      return;
    case ONE_BYTE:
      r.skip(1);
      return;
    case PREFIX_FC:
      skipMisc(r, r.u32());
      return;
    default:
      throw new WasmMeterError(`unknown opcode 0x${op.toString(16)} at byte ${r.pos - 1}`);
  }
}
