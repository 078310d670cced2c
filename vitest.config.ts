import os from "node:os";
import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two test files at a time even on a 2-core machine (vitest would run one): most of a file's
    // time is spent waiting on the processes, containers and servers it starts, and the tests are
    // written for a loaded machine (no timing luck), so the suite takes about half as long.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // Host code runs with Node's default `--unhandled-rejections=throw` semantics: an unhandled
    // rejection fails the test it happened in (issue 32), in every worker.
    setupFiles: ["test/setup/host-rejections.ts"],
    // Sessions rank search lexically unless a test picks an embedder: otherwise every test file
    // that starts a session would load the embedding model in the background (~1.3 s of CPU each).
    // test/search pins the real model where search quality is what is tested.
    // The Pyodide memory snapshot (31 MB) is built once per machine into a cache folder; the tests
    // share one under the temp folder instead of writing into the user's ~/.cache.
    env: { TS_CODE_MODE_SEARCH: "lexical", TCM_PYODIDE_CACHE_DIR: path.join(os.tmpdir(), `tcm-test-pyodide-${os.userInfo().uid}`) },
  },
});
