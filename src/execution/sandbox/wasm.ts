/**
 * QuickJS WebAssembly modules, one per sandbox instance.
 *
 * Why not the shared `getQuickJS()` singleton: every runtime in one module shares one linear
 * memory. Then (1) a memory cap cannot be real — this QuickJS build counts only 8 bytes per
 * allocation against `setMemoryLimit` (malloc_usable_size is unavailable under Emscripten), so
 * strings and ArrayBuffers are not limited at all — and the memory never shrinks; and (2) a fault
 * (the host's native stack running out inside WebAssembly, a hard stop of runaway code) leaves the
 * module unusable for every sandbox in the process. So each instance gets its own module with its
 * own `WebAssembly.Memory` whose `maximum` IS the sandbox's memory limit: an allocation beyond it
 * fails inside QuickJS as an ordinary "out of memory" error, whatever allocated it.
 *
 * The WebAssembly code is metered (wasm-meter.ts: the hard stop of watchdog.ts) and compiled once
 * per process, and instantiated per instance (~1 ms) with that instance's own watchdog.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { QuickJSSyncVariant, QuickJSWASMModule } from "quickjs-emscripten-core";
import { METER_FUEL_EXPORT, METER_IMPORT, meterWasm } from "./wasm-meter.js";
import { Watchdog, type FuelGlobal } from "./watchdog.js";
import { MAX_MEMORY_MB } from "./memory-limits.js";

export { MAX_MEMORY_MB, MIN_MEMORY_MB } from "./memory-limits.js";

/** The slice of the WebAssembly API used here (this project's TypeScript lib has no WebAssembly types). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmInstance {
  exports: Record<string, unknown>;
}
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>;
  instantiate(module: object, imports: Record<string, Record<string, unknown>>): Promise<WasmInstance>;
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const WASM_PAGE = 65_536;
const INITIAL_PAGES = 256;

let compiled: Promise<object> | null = null;

const ignoreOutput = (): void => undefined;

/** The compiled (metered) QuickJS WebAssembly code, shared by every instance in the process. */
function compiledModule(): Promise<object> {
  compiled ??= (async () => {
    const file = resolveWasmFile();
    return wasmApi.compile(meterWasm(await readFile(file)));
  })();
  // A failed compile (file missing) must not stick: the next start tries again.
  compiled.catch(() => {
    compiled = null;
  });
  return compiled;
}

function resolveWasmFile(): string {
  return createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm");
}

export interface SandboxModule {
  module: QuickJSWASMModule;
  memory: WasmMemory;
  /** Bytes the memory may grow to: the sandbox's memory limit. */
  maxBytes: number;
  /**
   * True when the memory's last attempt to grow was refused (the limit): an allocation failed. Then
   * QuickJS may fail in ways that do not say "out of memory" — it throws `null` when it cannot even
   * allocate the error — while the memory is still a megabyte or two short of the limit.
   */
  growRefused(): boolean;
  /** The hard stop of every entry into this module. */
  watchdog: Watchdog;
}

/** A fresh QuickJS module whose whole memory (heap, stack, everything) is capped at `memoryMb`. */
export async function newSandboxModule(memoryMb: number): Promise<SandboxModule> {
  const wasmModule = await compiledModule();
  const maxPages = Math.max(INITIAL_PAGES, Math.min(MAX_MEMORY_MB, memoryMb) * (1_048_576 / WASM_PAGE));
  const memory = new wasmApi.Memory({ initial: INITIAL_PAGES, maximum: maxPages });
  // Loaded on first use: importing ts-code-mode must not pay for the QuickJS bindings. The core
  // package and the one variant used, not the `quickjs-emscripten` wrapper: it depends on four
  // variants (debug and asyncify builds, 5 MB of a core install) that are never loaded.
  const [{ newQuickJSWASMModuleFromVariant, newVariant }, variantModule] = await Promise.all([import("quickjs-emscripten-core"), import("@jitl/quickjs-wasmfile-release-sync")]);
  // Its declarations are CommonJS-shaped; loaded as ESM, `default` is the variant itself.
  const RELEASE_SYNC = variantModule.default as unknown as QuickJSSyncVariant;
  // Emscripten's allocator grows the memory through this method (trying smaller steps after a refusal).
  let refused = false;
  const grow = memory.grow.bind(memory);
  memory.grow = (pages: number) => {
    try {
      const before = grow(pages);
      refused = false;
      return before;
    } catch (err) {
      refused = true;
      throw err;
    }
  };
  const watchdog = new Watchdog();
  // Emscripten's own imports, plus the meter's `tick` bound to this instance's watchdog.
  const instantiateWasm = (imports: Record<string, Record<string, unknown>>, onSuccess: (instance: WasmInstance) => void) =>
    wasmApi.instantiate(wasmModule, { ...imports, [METER_IMPORT.module]: { [METER_IMPORT.name]: watchdog.tick } }).then((instance) => {
      watchdog.attach(instance.exports[METER_FUEL_EXPORT] as FuelGlobal);
      onSuccess(instance);
      return instance.exports;
    });
  const module = await newQuickJSWASMModuleFromVariant(
    newVariant(RELEASE_SYNC, {
      wasmMemory: memory,
      // Emscripten writes an abort's message to the host's stderr before throwing it as a
      // RuntimeError with the same text; the executor reports that error (SandboxCrashError), so
      // the library prints nothing of its own.
      emscriptenModule: { instantiateWasm, printErr: ignoreOutput, print: ignoreOutput } as unknown as Parameters<typeof newVariant>[1]["emscriptenModule"],
    }),
  );
  return { module, memory, maxBytes: maxPages * WASM_PAGE, growRefused: () => refused, watchdog };
}
