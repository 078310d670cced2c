import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Sessions rank search lexically unless a test picks an embedder: otherwise every test file
    // that starts a session would load the embedding model in the background (~1.3 s of CPU each).
    // test/search pins the real model where search quality is what is tested.
    env: { TS_CODE_MODE_SEARCH: "lexical" },
  },
});
