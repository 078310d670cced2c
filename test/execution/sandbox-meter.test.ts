/**
 * The QuickJS hard stop's metering (src/execution/sandbox/wasm-meter.ts): the QuickJS build is
 * metered and still compiles, an endless WebAssembly loop calls the host's tick (which is how the
 * watchdog stops it), and an instruction the reader does not know is refused rather than guessed.
 * The end-to-end guard — a loop of long native operations stopped at its deadline — is in
 * sandbox.test.ts ("stops a long native operation the interrupt handler cannot reach").
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { METER_FUEL_EXPORT, METER_IMPORT, meterWasm, WasmMeterError } from "../../src/execution/sandbox/wasm-meter.js";

interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly: Wasm & { Module: { imports(m: object): { module: string; name: string }[]; exports(m: object): { name: string }[] } } }).WebAssembly;

/** A module exporting `spin`: `loop br 0 end`, which never ends unless something throws. */
function spinModule(body: number[] = [0x03, 0x40, 0x0c, 0x00, 0x0b]): Uint8Array {
  const code = [0x00, ...body, 0x0b]; // no locals, the body, end
  return Uint8Array.of(
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...[0x01, 0x04, 0x01, 0x60, 0x00, 0x00], // type section: () -> ()
    ...[0x03, 0x02, 0x01, 0x00], // function section
    ...[0x06, 0x06, 0x01, 0x7f, 0x01, 0x41, 0x00, 0x0b], // global section: (mut i32) 0
    ...[0x07, 0x08, 0x01, 0x04, ...Buffer.from("spin"), 0x00, 0x00], // export "spin"
    ...[0x0a, code.length + 2, 0x01, code.length, ...code], // code section
  );
}

describe("the QuickJS WebAssembly meter", () => {
  it("meters the QuickJS build: it compiles, imports the tick and exports the fuel", async () => {
    const file = createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm");
    const module = new wasm.Module(meterWasm(await readFile(file)));
    expect(wasm.Module.imports(module)).toContainEqual(expect.objectContaining({ module: METER_IMPORT.module, name: METER_IMPORT.name }));
    expect(wasm.Module.exports(module).map((e) => e.name)).toContain(METER_FUEL_EXPORT);
  });

  it("an endless loop keeps calling the tick, and a tick that throws stops it", () => {
    let ticks = 0;
    const stop = new Error("deadline");
    const fuel: { global?: { value: number } } = {};
    const instance = new wasm.Instance(new wasm.Module(meterWasm(spinModule())), {
      [METER_IMPORT.module]: {
        [METER_IMPORT.name]: () => {
          if (++ticks === 50) throw stop;
          if (fuel.global) fuel.global.value = 1_000;
        },
      },
    });
    fuel.global = instance.exports[METER_FUEL_EXPORT] as { value: number };
    expect(() => (instance.exports.spin as () => void)()).toThrow(stop);
    expect(ticks).toBe(50);
  });

  it("refuses an instruction it does not know (a SIMD one) instead of leaving it unmetered", () => {
    // v128.const 0 (0xfd 0x0c + 16 bytes), drop
    const simd = [0xfd, 0x0c, ...new Array(16).fill(0), 0x1a];
    expect(() => meterWasm(spinModule(simd))).toThrow(WasmMeterError);
  });
});
