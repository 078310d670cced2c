/**
 * RemoteExecutor passes the one executor conformance suite against a real `serve` (the built CLI,
 * on loopback, subprocess executor, the example tools). The server is started with
 * --client-storage so each test's temp FileStorage is the one the remote session uses.
 */
import { afterAll, beforeAll } from "vitest";
import { RemoteExecutor } from "../../src/execution/remote/executor.js";
import { EXAMPLE_TOOLS_PATH, executorConformance } from "../conformance/executor.js";
import { ensureBuilt, startServe, TOKEN, type ServeProcess } from "./harness.js";

let server: ServeProcess | undefined;

beforeAll(async () => {
  await ensureBuilt();
  server = await startServe(["--token", TOKEN, "--client-storage", "--tools", EXAMPLE_TOOLS_PATH, "--max-sessions", "1000"]);
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

executorConformance("RemoteExecutor (serve, subprocess)", (opts) => {
  if (!server) throw new Error("serve did not start");
  return new RemoteExecutor({ url: server.url, token: TOKEN, defaultTimeoutMs: opts.defaultTimeoutMs, shareStorage: true });
});
