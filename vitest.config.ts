import os from "node:os";
import path from "node:path";
import { defineConfig } from "vitest/config";
import { DurationSequencer } from "./test/setup/sequencer.js";

/**
 * Test files that run in a process of their own (vitest's default). Every other file shares its
 * worker process with the files that ran before it (`isolate: false`): no new process, no second
 * import of the source tree, which is most of a light file's time on a loaded 2-core machine
 * (31 light files: 196 s → 108 s). A file belongs here when it changes or measures something
 * process-wide that a later file in the same process would see. Setting process.env is not such a
 * change when the file puts it back (test/helpers/env.ts's setEnv deletes what was unset; assigning
 * `undefined` would store the string "undefined"): those files share a process too.
 */
const OWN_PROCESS = [
  // keeps state between files: real-python's module-level cache (it counts it); process.chdir
  "test/execution/real-python.test.ts",
  "test/security/shell-confined.test.ts",
  // its second case reuses a keep-alive connection to the stand-in server seconds after the first;
  // sharing a process, the POST met the server's idle close (ECONNRESET) in 2 of 2 loaded runs
  "test/tools/openapi/code.test.ts",
  // the embedding model and the search notices are process-wide singletons; vi.mock
  "test/search/*.test.ts",
  "test/skills/library.test.ts", // vi.mock
  // OpenTelemetry's global providers (set once per process) and the cached instruments
  "test/telemetry/*.test.ts",
  // which modules are loaded, start order, the install as a consumer sees it
  "test/perf/*.test.ts",
  "test/package/*.test.ts",
  // process.on listeners, sessions deliberately left open
  "test/execution/subprocess.test.ts",
  "test/tools/toolable/session-left-open.test.ts",
  // measure this process's heap
  "test/execution/console-labels.test.ts",
  "test/execution/repl-caches.test.ts",
  "test/execution/subprocess-soak.test.ts",
  // the process's implicit spare children (spare-children.ts): which child a session takes depends
  // on the spares earlier files left (the CI run that first shared processes failed both)
  "test/agents/session-pool.test.ts",
  "test/execution/spare-children.test.ts",
  // install storage fault hooks (src/storage/faults.ts) in this process
  "test/runs/prune.test.ts",
  "test/storage/durability.test.ts",
  "test/storage/file.test.ts",
  "test/storage/replace-races.test.ts",
  "test/tools/openapi/index.test.ts",
  // The Pyodide files share a worker: Pyodide runs inside deno processes, not in this one;
  // sandbox-pyodide puts back the variables it sets (setEnv), and the snapshot caches it checks
  // are folders of its own; sandbox-escape compares this process's globals before and after its own
  // tests only; py-code-mode-compat and matrix/python-sandbox close what they start.
];

export default defineConfig({
  test: {
    // Bounds for a hung test or hook, not speed checks: on a loaded 2-core machine (a clean-clone
    // CI run beside other heavy processes) tests that take 5 s alone took over 30 s.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: "forks",
    // Two test files at a time even on a 2-core machine (vitest would run one): most of a file's
    // time is spent waiting on the processes, containers and servers it starts, and the tests are
    // written for a loaded machine (no timing luck), so the suite takes about half as long.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // Longest files first (durations recorded in test/setup/durations.json), so the run does not
    // end with one worker busy on a long file while the other idles.
    sequence: { sequencer: DurationSequencer },
    // Host code runs with Node's default `--unhandled-rejections=throw` semantics: an unhandled
    // rejection fails the test it happened in (issue 32), in every worker.
    // test/setup/node-starts.ts: the processes the tests start do not parse NODE_EXTRA_CA_CERTS at each start.
    setupFiles: ["test/setup/host-rejections.ts", "test/setup/node-starts.ts"],
    // Sessions rank search lexically unless a test picks an embedder: otherwise every test file
    // that starts a session would load the embedding model in the background (~1.3 s of CPU each).
    // test/search pins the real model where search quality is what is tested.
    // The Pyodide memory snapshot (31 MB) is built once per machine into a cache folder; the tests
    // share one under the temp folder instead of writing into the user's ~/.cache.
    env: { TS_CODE_MODE_SEARCH: "lexical", TCM_PYODIDE_CACHE_DIR: path.join(os.tmpdir(), `tcm-test-pyodide-${os.userInfo().uid}`) },
    projects: [
      { extends: true, test: { name: "own-process", include: OWN_PROCESS } },
      { extends: true, test: { name: "shared-process", include: ["test/**/*.test.ts"], exclude: OWN_PROCESS, isolate: false } },
    ],
  },
});
