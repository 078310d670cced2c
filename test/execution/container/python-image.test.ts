/**
 * `image build --with python3` gives a working interpreter (issue 32.1): the real binary behind
 * PATH's python3 (pyenv's is a bash shim) and its standard library, so Python skill scripts and
 * Python toolable executables run inside the container. One session for the file.
 */
import { copyFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContainerExecutor } from "../../../src/execution/container/executor.js";
import { PYTOOL } from "../../tools/toolable/fixture.js";
import { ensurePythonTestImage, openContainerSession, type ContainerSessionFixture } from "../../helpers/container.js";

let fx: ContainerSessionFixture;
let ex: ContainerExecutor;

const value = (code: string): Promise<unknown> => fx.value(code);

beforeAll(async () => {
  fx = await openContainerSession("tcm-python-image-", await ensurePythonTestImage(), async (tools) => {
    await copyFile(PYTOOL, path.join(tools, "pytool.py"));
    await writeFile(path.join(tools, "py.yaml"), "type: toolable\nname: py\ncommand: [python3, ./pytool.py]\ndiscover_timeout: 60\n");
  }, { defaultTimeoutMs: 60_000 });
  ({ executor: ex } = fx);
}, 600_000);

afterAll(async () => {
  await fx?.close();
});

describe("image build --with python3", { timeout: 120_000 }, () => {
  it("the interpreter inside has its standard library", async () => {
    const r = await ex.exec(["python3", "-c", "import json, hashlib, re, subprocess, sys; print(json.dumps([sys.version_info[0], hashlib.sha256(b'x').hexdigest()[:8]]))"]);
    expect(r.output.trim()).toBe('[3, "2d711642"]');
    expect(r.exitCode).toBe(0);
  });

  it("a Python skill script runs inside the container", async () => {
    const script = "import json, os, sys\nprint(json.dumps({'args': sys.argv[1:], 'uid': os.getuid(), 'cwd': os.getcwd()}))\n";
    await value(`await skills.create({ name: "pyskill", description: "Python script. Use in tests.", body: "x", files: { "scripts/who.py": ${JSON.stringify(script)} } })`);
    const out = JSON.parse(String(await value('await skills.run("pyskill", "scripts/who.py", ["a b"])'))) as Record<string, unknown>;
    expect(out).toEqual({ args: ["a b"], uid: 65534, cwd: "/workspace" });
  });

  it("a Python toolable executable runs inside the container", async () => {
    expect(await value("await tools.py.add({ a: 2, b: 3 })")).toEqual({ sum: 5 });
    expect(await value('(await tools.py.paint({ color: "red", at: { x: 1, y: 2 } })).cwd')).toBe("/workspace");
  });
});
