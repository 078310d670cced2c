/**
 * src/stand-in.ts: what the main entry's stand-ins for its lazy areas keep of the class or function
 * they stand for (scripts/main-entry.mjs), and the built entry on a Node that cannot `require` an ES
 * module (the areas are then imported with the rest).
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { standIn } from "../src/stand-in.js";
import { ensureBuilt, REPO } from "./cli/harness.js";

class Real {
  static made = 0;
  static get label(): string {
    return `label of ${this.name}`;
  }
  static create(value: number): Real {
    return new this(value);
  }
  readonly #value: number;
  constructor(value: number) {
    this.#value = value;
    Real.made++;
  }
  get value(): number {
    return this.#value;
  }
}

function realSum(this: { base?: number } | undefined, a: number, b: number): number {
  return (this?.base ?? 0) + a + b;
}

describe("standIn", () => {
  it("loads once, on first use, and then is the class: new, statics, getters, instanceof", () => {
    let loads = 0;
    const Stand = standIn("Real", () => (loads++, Real));
    expect(loads).toBe(0);
    const made = new Stand(7);
    expect(loads).toBe(1);
    expect(made).toBeInstanceOf(Real);
    expect(made).toBeInstanceOf(Stand);
    expect(made.value).toBe(7); // a private field: the instance is the real class's
    expect(new Real(1)).toBeInstanceOf(Stand);
    expect(Stand.label).toBe("label of Real"); // a static getter sees the real class
    expect(Stand.create(3).value).toBe(3);
    expect(Stand.name).toBe("Real");
    expect(Object.getPrototypeOf(Stand)).toBe(Object.getPrototypeOf(Real));
    expect("made" in Stand).toBe(true);
    Stand.made = 100;
    expect(Real.made).toBe(100);
    expect(loads).toBe(1);
  });

  it("can be extended: super() builds the subclass, statics are inherited", () => {
    const Stand = standIn("Real", () => Real);
    class Sub extends Stand {
      twice(): number {
        return this.value * 2;
      }
    }
    const sub = new Sub(21);
    expect(sub.twice()).toBe(42);
    expect(sub).toBeInstanceOf(Sub);
    expect(sub).toBeInstanceOf(Real);
    expect(Object.getPrototypeOf(Sub.prototype)).toBe(Real.prototype);
    expect(Sub.create(2)).toBeInstanceOf(Sub); // `new this` in a static method builds the subclass
    expect(Sub.label).toBe("label of Sub");
  });

  it("stands for a function: calls with their `this` and arguments", () => {
    const sum = standIn("realSum", () => realSum);
    expect(sum.call(undefined, 1, 2)).toBe(3);
    expect(sum.call({ base: 10 }, 1, 2)).toBe(13);
    expect(sum.name).toBe("realSum");
  });

  it("says which export did not load as a class or function", () => {
    const broken = standIn("Broken", () => undefined as unknown as () => void);
    expect(() => broken()).toThrow(/the export Broken did not load as a class or function/);
  });
});

describe("the built main entry where Node cannot require an ES module", () => {
  it("imports the lazy areas with the rest, and their exports work", async () => {
    await ensureBuilt();
    const main = pathToFileURL(path.join(REPO, "dist", "index.js")).href;
    const script = `const m = await import(${JSON.stringify(main)});
const cli = m.CliToolAdapter.fromDocument({ name: "echo", type: "cli", command: "echo", description: "d" }, "echo.yaml");
console.log(process.features.require_module, cli instanceof m.CliToolAdapter, new m.SandboxExecutor().engine);`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--no-experimental-require-module", "--input-type=module", "-e", script], {
      env: { ...process.env, TS_CODE_MODE_EARLY_CHILD: "0" },
      timeout: 60_000,
    });
    expect(stdout.trim()).toBe("false true quickjs");
  });
});
