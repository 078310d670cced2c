/**
 * The front-end half of the matrix: every executor through `run`, the MCP server over stdio and
 * over HTTP (the built CLI, as users start it) and the agent runtime (project.json code_mode,
 * scripted model). Each cell runs one composite probe in a fresh base folder: a CLI tool call, a
 * workflow created and called, an artifact saved and loaded; the value proves all three happened
 * where the front end says. The framework adapters are the cells test/adapters/* run. Each executor
 * goes through `mcp` once: over HTTP where that differs from stdio by more than the transport
 * (spares, remote), else over stdio (cells.ts says which cell stands for which).
 */
import { cp, mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime } from "../../src/index.js";
import { EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";
import { ensureTestImage } from "../helpers/container.js";
import { connectHttp, connectStdio, runCli, startHttpServer, textOf } from "../mcp/harness.js";
import { removeProject, writeProject } from "../agents/project.js";
import { scripted, toolResults } from "../agents/scripted.js";
import { cleanup, ensureBuilt, startServe, tempDir, TOKEN, type ServeProcess } from "../server/harness.js";
import { EXECUTORS, expectedFrontEnd, type ExecutorId, type FrontEndId } from "./cells.js";

/** The probe in each language; `w` names the workflow (cells that share a storage use their own). */
const PROBE = {
  typescript: (w: string) =>
    `await workflows.create({ name: '${w}', source: 'export async function run({ n }: { n: number }) { return n * 2; }', description: 'Double' }); await artifacts.save('fe.txt', (await tools.echo.say({ text: ['fe'] })).trim()); \`\${await artifacts.load('fe.txt')}:\${await workflows.${w}({ n: 21 })}\``,
  python: (w: string) =>
    `workflows.create('${w}', 'def run(n: int) -> int:\\n    return n * 2\\n', 'Double', language='python')\nartifacts.save('fe.txt', tools.echo.say(text=['fe']).strip())\nf"{artifacts.load('fe.txt')}:{workflows.${w}(n=21)}"`,
};
function probeCode(executor: ExecutorId, frontEnd: FrontEndId): string {
  return PROBE[language(executor)](`fe_${frontEnd.replace(/-/g, "_")}`);
}
const EXPECTED_VALUE = "fe:42";

let dir: string;
let image: string;
let server: ServeProcess;

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  image = await ensureTestImage();
  server = await startServe(["--token", TOKEN, "--base", path.join(dir, "served"), "--tools", EXAMPLE_TOOLS_PATH]);
}, 240_000);
afterAll(async () => {
  await server?.stop();
  await cleanup(dir);
});

function language(executor: ExecutorId): "typescript" | "python" {
  return executor.startsWith("python") ? "python" : "typescript";
}

/** The executor flags of `run` and `mcp` for each executor (`mcp` names the remote token --remote-token). */
function flags(executor: ExecutorId, command: "run" | "mcp"): string[] {
  switch (executor) {
    case "in-process":
      return ["--executor", "in-process"];
    case "subprocess":
      return [];
    case "subprocess-shared":
      return ["--sessions-per-child", "4"];
    case "sandbox-quickjs":
      return ["--executor", "sandbox"];
    case "sandbox-deno":
      return ["--executor", "sandbox", "--engine", "deno"];
    case "container":
      return ["--executor", "container", "--image", image];
    case "remote":
      return ["--remote", server.url, command === "run" ? "--token" : "--remote-token", TOKEN];
    case "python":
      return ["--language", "python"];
    case "python-sandbox":
      return ["--language", "python", "--executor", "sandbox"];
  }
}

/** A fresh base folder with the example tools, per cell. */
async function base(executor: ExecutorId, frontEnd: FrontEndId): Promise<string> {
  // A remote session uses the server's storage: the client names the same folder (or the server runs --client-storage).
  if (executor === "remote") return path.join(dir, "served");
  const b = path.join(dir, `${executor}-${frontEnd}`);
  await mkdir(b, { recursive: true });
  await cp(EXAMPLE_TOOLS_PATH, path.join(b, "tools"), { recursive: true });
  return b;
}

const FRONT_ENDS: Partial<Record<FrontEndId, (executor: ExecutorId) => Promise<string>>> = {
  "cli-run": async (executor) => {
    const b = await base(executor, "cli-run");
    const r = await runCli(["run", "--base", b, ...flags(executor, "run"), probeCode(executor, "cli-run")], { cwd: dir, timeoutMs: 120_000 });
    if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}${r.stdout}`);
    return r.stdout.trim();
  },
  "mcp-stdio": async (executor) => {
    const b = await base(executor, "mcp-stdio");
    const conn = await connectStdio(["--base", b, ...flags(executor, "mcp")], { cwd: dir });
    try {
      const result = await conn.client.callTool({ name: "run_code", arguments: { code: probeCode(executor, "mcp-stdio") } }, undefined, { timeout: 120_000 });
      return textOf(result);
    } finally {
      await conn.close();
    }
  },
  "mcp-http": async (executor) => {
    const b = await base(executor, "mcp-http");
    const http = await startHttpServer(["--http", "0", "--token", TOKEN, "--base", b, ...flags(executor, "mcp")], { cwd: dir });
    try {
      const client = await connectHttp(http.url, TOKEN);
      try {
        return textOf(await client.callTool({ name: "run_code", arguments: { code: probeCode(executor, "mcp-http") } }, undefined, { timeout: 120_000 }));
      } finally {
        await client.close();
      }
    } finally {
      await http.stop();
    }
  },
  agents: async (executor) => {
    const codeMode: Record<string, unknown> =
      executor === "remote"
        ? { executor: "remote", remote: { url: server.url, token_env: "MATRIX_TOKEN" } }
        : executor === "sandbox-deno"
          ? { executor: "sandbox", engine: "deno" }
          : executor === "sandbox-quickjs"
            ? { executor: "sandbox" }
            : executor === "python"
              ? { executor: "subprocess", language: "python" }
              : executor === "python-sandbox"
                ? { executor: "sandbox", language: "python" }
                : executor === "container"
                  ? { executor: "container", image }
                  : executor === "subprocess-shared"
                    ? { executor: "subprocess", sessions_per_child: 4 }
                    : { executor };
    const project = await writeProject([{ name: "main", tools: ["code"] }], { code_mode: { base: ".code-mode", ...codeMode } });
    try {
      await cp(EXAMPLE_TOOLS_PATH, path.join(project, ".code-mode", "tools"), { recursive: true });
      const model = scripted([{ tool: "run_code", args: { code: probeCode(executor, "agents") } }, { text: "done" }]);
      const runtime = await createRuntime(project, { model, env: { ...process.env, MATRIX_TOKEN: TOKEN } });
      await runtime.run("go");
      return toolResults(model.prompts[1]).join("\n");
    } finally {
      await removeProject(project);
    }
  },
};

describe.each(EXECUTORS.map((e) => [e]))("matrix: %s × front ends", (executor) => {
  for (const [frontEnd, probe] of Object.entries(FRONT_ENDS) as Array<[FrontEndId, (e: ExecutorId) => Promise<string>]>) {
    const outcome = expectedFrontEnd(executor, frontEnd);
    // A cell on the same code path as another (said in docs/matrix.md) is run there, not twice.
    if (outcome.kind === "same-as") continue;
    it(`${frontEnd}: ${outcome.kind}`, async () => {
      if (outcome.kind !== "works") throw new Error(`front-end cells are expected to work; ${frontEnd} × ${executor} says ${outcome.kind}`);
      expect(await probe(executor)).toContain(EXPECTED_VALUE);
    }, 240_000);
  }
});
