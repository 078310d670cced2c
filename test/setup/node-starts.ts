/**
 * The suite starts node thousands of times (the CLI, subprocess executors' children, toolable tools,
 * MCP servers). Where the machine's environment sets NODE_EXTRA_CA_CERTS, Node 20 reads and parses
 * that bundle at every start before any of our code runs (~90 ms of CPU each on this project's CI
 * machine, ~8% of the suite's CPU). No test reaches a TLS server through node with a CA from it: the
 * servers the tests start are plain HTTP on loopback, and npm (the package tests' installs) takes its
 * CA file from its own configuration (`npm config get cafile`). So the processes the tests start do
 * not inherit it. A vitest setup file: it runs in every worker, before each file.
 *
 * bench/cold.mjs and bench/peers.mjs measure node's start both ways where it is set.
 */
delete process.env.NODE_EXTRA_CA_CERTS;
