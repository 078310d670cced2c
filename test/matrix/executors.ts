/**
 * The executors of the matrix, each built the way a library user builds it, with the per-session
 * host options (tool folder, skills, middleware, toolable sampler and events, memory cap). The
 * remote one talks to a real `serve` (built CLI, subprocess executor, --client-storage) that has
 * the same tools and skills, answers sampling with --sampler (a fake OpenAI API on 127.0.0.1) and
 * refuses uname.* with --deny.
 */
import { ContainerExecutor } from "../../src/execution/container/executor.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { PythonExecutor } from "../../src/execution/python/executor.js";
import { RemoteExecutor } from "../../src/execution/remote/executor.js";
import { SandboxExecutor } from "../../src/execution/sandbox/executor.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { SharedChildren } from "../../src/execution/subprocess/shared-children.js";
import { startFakeOpenAI, type FakeOpenAI } from "../agents/fake-openai.js";
import { ensurePythonTestImage } from "../helpers/container.js";
import { ensureBuilt, startServe, TOKEN, type ServeProcess } from "../server/harness.js";
import type { ExecutorId } from "./cells.js";
import type { ExecutorOptions, MatrixExecutor } from "./harness.js";
import { fileURLToPath } from "node:url";
import * as codeTools from "../fixtures/code-tools/tools.js";

/** The options every local executor takes, as a user passes them. */
function common(o: ExecutorOptions) {
  return { toolsPath: o.toolsPath, skillRoots: o.skillRoots, defaultTimeoutMs: o.defaultTimeoutMs, middleware: o.middleware, toolable: o.toolable, tools: CODE_TOOLS, agents: o.agents };
}

/** The tools defined in code (the `tools` option); the remote server loads the same module with --tools-module. */
const CODE_TOOLS_MODULE = fileURLToPath(new URL("../fixtures/code-tools/tools.ts", import.meta.url));
const CODE_TOOLS = { weather: codeTools.weather, add: codeTools.add };

/** One SharedChildren per memory cap (undefined: uncapped), 4 sessions to a child. */
const sharedChildren = new Map<number | undefined, SharedChildren>();
function sharedChildrenFor(memoryMb: number | undefined): SharedChildren {
  let shared = sharedChildren.get(memoryMb);
  if (!shared) sharedChildren.set(memoryMb, (shared = new SharedChildren({ sessionsPerChild: 4, ...(memoryMb !== undefined ? { maxMemoryMb: memoryMb } : {}) })));
  return shared;
}

let server: ServeProcess | null = null;
let fake: FakeOpenAI | null = null;
let image = "";

export const MATRIX_EXECUTORS: Record<ExecutorId, MatrixExecutor> = {
  // The in-process executor has no memory cap: the option is passed as a user would try it.
  "in-process": { id: "in-process", language: "typescript", make: (o) => new InProcessExecutor({ ...common(o), ...(o.memoryMb !== undefined ? ({ maxMemoryMb: o.memoryMb } as object) : {}) }) },
  subprocess: { id: "subprocess", language: "typescript", make: (o) => new SubprocessExecutor({ ...common(o), ...(o.memoryMb !== undefined ? { maxMemoryMb: o.memoryMb } : {}) }) },
  // The matrix's sessions of this executor share children, as a server's do; the capped one gets children of its own cap.
  "subprocess-shared": {
    id: "subprocess-shared",
    language: "typescript",
    teardown: async () => {
      for (const shared of sharedChildren.values()) await shared.close();
      sharedChildren.clear();
    },
    make: (o) => new SubprocessExecutor({ ...common(o), sharedChild: sharedChildrenFor(o.memoryMb) }),
  },
  "sandbox-quickjs": { id: "sandbox-quickjs", language: "typescript", make: (o) => new SandboxExecutor({ ...common(o), ...(o.memoryMb !== undefined ? { memoryMb: o.memoryMb } : {}) }) },
  "sandbox-deno": { id: "sandbox-deno", language: "typescript", make: (o) => new SandboxExecutor({ engine: "deno", ...common(o), ...(o.memoryMb !== undefined ? { memoryMb: o.memoryMb } : {}) }) },
  container: {
    id: "container",
    language: "typescript",
    setup: async () => {
      // Toolable tools run inside the container, and the matrix's fixture is in Python.
      image = await ensurePythonTestImage();
    },
    make: (o) => new ContainerExecutor({ ...common(o), image, ...(o.memoryMb !== undefined ? { memoryMb: o.memoryMb } : {}) }),
  },
  remote: {
    id: "remote",
    language: "typescript",
    setup: async (fx) => {
      await ensureBuilt();
      fake = await startFakeOpenAI((req) => ({ text: `four (${JSON.stringify(req.body).includes("2+2?") ? "2+2?" : "?"})` }));
      server = await startServe(["--token", TOKEN, "--client-storage", "--tools", fx.toolsPath, "--skills", fx.skillsPath, "--deny", "uname.*", "--sampler", "openai:fake-model", "--max-sessions", "100", "--tools-module", CODE_TOOLS_MODULE], {
        env: { ...process.env, OPENAI_API_KEY: "sk-matrix", OPENAI_BASE_URL: fake.url },
      });
    },
    teardown: async () => {
      await server?.stop();
      await fake?.close();
    },
    // serve prints toolable events on its stderr; its --sampler asks the fake model.
    sawProgressEvent: () => /\[tools\.py\.count\] progress/.test(server?.stderr() ?? ""),
    samplesAnswered: () => fake?.requests.length ?? 0,
    // The server's options hold (tools, skills, middleware, sampler); a memory cap is the server's too.
    make: (o) =>
      new RemoteExecutor({ url: server!.url, token: TOKEN, defaultTimeoutMs: o.defaultTimeoutMs, shareStorage: true, ...(o.memoryMb !== undefined ? ({ memoryMb: o.memoryMb } as object) : {}) }),
  },
  python: { id: "python", language: "python", make: (o) => new PythonExecutor({ ...common(o), ...(o.memoryMb !== undefined ? { maxMemoryMb: o.memoryMb } : {}) }) },
  "python-sandbox": { id: "python-sandbox", language: "python", make: (o) => new SandboxExecutor({ language: "python", ...common(o), ...(o.memoryMb !== undefined ? { memoryMb: o.memoryMb } : {}) }) },
};
