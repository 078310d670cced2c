/**
 * `run --json` is bounded whatever the run's value: a DAG of 2^40 paths (41 arrays) or a 50 MB
 * string comes back as a result without `value`, with `valueOmitted` saying why, in every
 * executor. Drives the built CLI, as users and agents run it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, tempDir } from "./harness.js";

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  expect((await cli(["init", "--base", "base"], { cwd: dir })).code).toBe(0);
});
afterAll(async () => {
  await cleanup(dir);
});

const DAG = "let a: any = [1]; for (let i = 0; i < 40; i++) a = [a, a]; a";

describe.each(["in-process", "subprocess", "sandbox"])("run --json --executor %s", (executor) => {
  const run = (code: string) => cli(["run", "--base", "base", "--executor", executor, "--json", code], { cwd: dir, timeoutMs: 60_000 });

  it("a DAG of 2^40 paths: ok, no value, valueOmitted says why", async () => {
    const r = await run(DAG);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out["ok"]).toBe(true);
    expect(out).not.toHaveProperty("value");
    // In-process and sandbox values reach the host and the JSON says why it left the value out; an
    // out-of-process child (subprocess) keeps a value this large itself and its display says so.
    if (executor === "subprocess") expect(out["display"]).toMatch(/the run's value was not sent to the host: it is made of more than 2000000 values/);
    else expect(out["valueOmitted"]).toMatch(/^value left out of the JSON: the value is .*2\^40 paths through shared references/);
    expect(out["display"]).toContain("[Array]");
  });

  it("a 50 MB string: the JSON stays within the output cap, valueOmitted says why", async () => {
    const r = await run("'x'.repeat(50_000_000)");
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBeLessThan(1_100_000);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).not.toHaveProperty("value");
    expect(out["valueOmitted"]).toMatch(/larger than 1,000,000 characters/);
  });

  it("a value that is exact JSON within the cap is still given", async () => {
    const r = await run("({ a: [1, 'b', null] })");
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, value: { a: [1, "b", null] } });
    expect(JSON.parse(r.stdout)).not.toHaveProperty("valueOmitted");
  });
});
