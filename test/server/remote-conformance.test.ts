/**
 * RemoteExecutor passes the one executor conformance suite against a real `serve` (the built CLI,
 * on loopback, subprocess executor, the example tools). The server is started with
 * --client-storage so each test's temp FileStorage is the one the remote session uses. The
 * code-tools case runs against a second server started with --tools-module (the suite's code
 * tools, test/fixtures/code-tools/tools.ts): a remote session has its server's tools. The REPL
 * tests with plain values are the server's subprocess executor's (test/execution/subprocess.test.ts
 * runs them); the ones whose values, output and errors cross the wire run here.
 */
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { RemoteExecutor } from "../../src/execution/remote/executor.js";
import { EXAMPLE_TOOLS_PATH, executorConformance } from "../conformance/executor.js";
import { ensureBuilt, REPO, startServe, TOKEN, type ServeProcess } from "./harness.js";

let server: ServeProcess | undefined;
let codeToolsServer: ServeProcess | undefined;

beforeAll(async () => {
  await ensureBuilt();
  const common = ["--token", TOKEN, "--client-storage", "--tools", EXAMPLE_TOOLS_PATH, "--max-sessions", "1000"];
  [server, codeToolsServer] = await Promise.all([startServe(common), startServe([...common, "--tools-module", path.join(REPO, "test/fixtures/code-tools/tools.ts")])]);
}, 120_000);

afterAll(async () => {
  await Promise.all([server?.stop(), codeToolsServer?.stop()]);
});

executorConformance("RemoteExecutor (serve, subprocess)", (opts) => {
  const target = opts.tools ? codeToolsServer : server;
  if (!target) throw new Error("serve did not start");
  return new RemoteExecutor({ url: target.url, token: TOKEN, defaultTimeoutMs: opts.defaultTimeoutMs, shareStorage: true });
}, { replCoveredBy: "test/execution/subprocess.test.ts, the server's executor" });
