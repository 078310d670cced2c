/**
 * Int8Matrix: the documents' vectors quantised to int8 (symmetric, one scale per row) in
 * WebAssembly memory, scored against a query with a SIMD integer dot product. It exists because
 * the JavaScript float loop over 10,000 × 512 floats is compute-bound in V8 (scalar, ~1 ns per
 * element: 5–9 ms per query on this machine, 4-way unrolled or not); the SIMD int8 pass reads a
 * quarter of the bytes and does 16 elements per step (~0.3 ms at 10,000).
 *
 * The scores are approximations with a known bound: for a query q (quantised to int16 with scale
 * qs) and a row d (int8 with scale sd),
 *
 *   |q·d − approx| ≤ ½·sd·‖q‖₁ + ½·qs·‖d̃‖₁          (d̃ = the dequantised row)
 *
 * so the caller can pick the rows that could be in the top k by the bound and score only those
 * exactly with the float vectors (SemanticRanker does): the results are the float path's, exactly.
 *
 * The module is the WAT below, compiled with wabt's wat2wasm 1.0.32 (239 bytes). Query i16 at $q,
 * rows of `stride` int8 (a multiple of 16) from $m, one int32 per row out at $out:
 *
 *   (func (export "dot") (param $q i32) (param $m i32) (param $rows i32) (param $stride i32) (param $out i32)
 *     for each row r: acc = i32x4(0); for i in 0..stride step 16:
 *       d = v128.load(m + r·stride + i)
 *       acc += i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(d),  v128.load(q + 2i))
 *       acc += i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(d), v128.load(q + 2i + 16))
 *     i32.store(out + 4r, acc[0] + acc[1] + acc[2] + acc[3]))
 *
 * Where WebAssembly SIMD is missing, `Int8Matrix.supported` is false and callers keep the float loop.
 */

const WASM_BASE64 =
  "AGFzbQEAAAABCQFgBX9/f39/AAMCAQAFAwEAAQcQAgZtZW1vcnkCAANkb3QAAAq+AQG7AQQCfwF7AX8BewJAA0AgBSACTw0B/QwAAAAAAAAAAAAAAAAAAAAAIQdBACEGIAEgBSADbGohCAJAA0AgBiADTw0BIAggBmr9AAQAIQkgByAJ/YcBIAAgBkEBdGr9AAQA/boB/a4BIQcgByAJ/YgBIAAgBkEBdGr9AAQQ/boB/a4BIQcgBkEQaiEGDAALCyAEIAVBAnRqIAf9GwAgB/0bAWogB/0bAiAH/RsDamo2AgAgBUEBaiEFDAALCws=";

const PAGE = 65536;
/** Rounding of the float arithmetic around the integer dot product, far above its real size. */
const SLACK = 1e-9;

type Dot = (q: number, m: number, rows: number, stride: number, out: number) => void;

/** The few WebAssembly APIs used (the project's TypeScript lib has no WebAssembly types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const WASM = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

let compiled: object | null | undefined;

function wasmModule(): object | null {
  if (compiled === undefined) {
    try {
      if (!WASM) throw new Error("no WebAssembly");
      compiled = new WASM.Module(Buffer.from(WASM_BASE64, "base64"));
    } catch {
      compiled = null; // no WebAssembly SIMD here
    }
  }
  return compiled;
}

/** Approximate dot products of one query with every row, and the bound on each one's error. */
export interface Int8Scores {
  approx: Float64Array;
  error: Float64Array;
}

export class Int8Matrix {
  /** Whether this runtime can compile the SIMD module. */
  static get supported(): boolean {
    return wasmModule() !== null;
  }

  /** Bytes per row: the dimensions rounded up to 16 (the padding stays zero). */
  readonly stride: number;
  private capacity = 0;
  private memory: WasmMemory | null = null;
  private dot: Dot | null = null;
  /** Row scale sd (value = sd·int8) and ‖d̃‖₁ of the dequantised row. */
  private scales = new Float64Array(0);
  private l1 = new Float64Array(0);
  /** The largest int16 the query may use so that a row's int32 sum cannot overflow. */
  private readonly queryMax: number;

  constructor(readonly dims: number) {
    this.stride = Math.max(16, Math.ceil(dims / 16) * 16);
    this.queryMax = Math.min(32767, Math.floor((2 ** 31 - 1) / (127 * this.stride)));
  }

  /** Bytes held (WebAssembly memory and the per-row scales). */
  get bytes(): number {
    return (this.memory?.buffer.byteLength ?? 0) + this.scales.byteLength + this.l1.byteLength;
  }

  /** Makes room for rows 0..rows-1, keeping the rows written so far. */
  ensure(rows: number): void {
    if (rows <= this.capacity) return;
    const capacity = Math.max(1024, rows, this.capacity * 2);
    const module = wasmModule();
    if (!module) throw new Error("WebAssembly SIMD is not available");
    const instance = new WASM!.Instance(module, {});
    // The module declares its own memory (one page); grow it to the size wanted.
    const own = instance.exports.memory as WasmMemory;
    own.grow(Math.max(0, Math.ceil(this.layout(capacity).end / PAGE) - own.buffer.byteLength / PAGE));
    if (this.memory) {
      const old = this.layout(this.capacity);
      new Int8Array(own.buffer, this.layout(capacity).rows, this.capacity * this.stride).set(new Int8Array(this.memory.buffer, old.rows, this.capacity * this.stride));
    }
    const scales = new Float64Array(capacity);
    scales.set(this.scales);
    const l1 = new Float64Array(capacity);
    l1.set(this.l1);
    this.memory = own;
    this.dot = instance.exports.dot as Dot;
    this.scales = scales;
    this.l1 = l1;
    this.capacity = capacity;
  }

  /** Quantises `v` (dims floats from `offset`) into row `row`. */
  set(row: number, v: Float32Array, offset = 0): void {
    this.ensure(row + 1);
    const out = new Int8Array(this.memory!.buffer, this.layout(this.capacity).rows + row * this.stride, this.stride);
    let max = 0;
    for (let i = 0; i < this.dims; i++) max = Math.max(max, Math.abs(v[offset + i]!));
    const scale = max / 127;
    let l1 = 0;
    for (let i = 0; i < this.dims; i++) {
      const x = scale === 0 ? 0 : Math.round(v[offset + i]! / scale);
      out[i] = x;
      l1 += Math.abs(x);
    }
    this.scales[row] = scale;
    this.l1[row] = l1 * scale;
  }

  /** Approximate q·row for rows 0..rows-1, with each one's error bound (q has `dims` floats). */
  scores(q: Float32Array, rows: number): Int8Scores {
    const approx = new Float64Array(rows);
    const error = new Float64Array(rows);
    if (rows === 0) return { approx, error };
    this.ensure(rows);
    const layout = this.layout(this.capacity);
    const buffer = this.memory!.buffer;
    let max = 0;
    let qL1 = 0;
    for (let i = 0; i < this.dims; i++) {
      const x = Math.abs(q[i]!);
      max = Math.max(max, x);
      qL1 += x;
    }
    const qs = max / this.queryMax;
    const qi = new Int16Array(buffer, layout.query, this.stride);
    qi.fill(0);
    if (qs > 0) for (let i = 0; i < this.dims; i++) qi[i] = Math.round(q[i]! / qs);
    this.dot!(layout.query, layout.rows, rows, this.stride, layout.out);
    const sums = new Int32Array(buffer, layout.out, rows);
    for (let r = 0; r < rows; r++) {
      const sd = this.scales[r]!;
      approx[r] = sums[r]! * sd * qs;
      error[r] = 0.5 * (sd * qL1 + qs * this.l1[r]!) + SLACK;
    }
    return { approx, error };
  }

  /** Where the query (int16), the sums (int32) and the rows (int8) sit in memory for `capacity` rows. */
  private layout(capacity: number): { query: number; out: number; rows: number; end: number } {
    const query = 0;
    const out = this.stride * 2;
    const rows = out + capacity * 4;
    return { query, out, rows, end: rows + capacity * this.stride };
  }
}
