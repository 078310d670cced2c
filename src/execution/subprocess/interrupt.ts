/**
 * How the host stops a child's synchronous code at its deadline without costing every run a thread.
 *
 * vm's `timeout` option starts a watchdog thread and joins it on every run: ~0.1 ms, most of a
 * trivial run in the child (profiled: `runInContext` was 48% of the child's CPU, against 2 µs without
 * it). Instead the child is started with `--trace-sigint`, which keeps Node's SIGINT watchdog thread
 * alive for the process's life, and runs each script with `breakOnSigint` (a few µs); the host sends
 * SIGINT at the deadline (SubprocessExecutor's interruptsAtDeadline). The guarantee is the same:
 * synchronous code before the first await is stopped inside the child and its variables are kept.
 * A SIGINT outside a script (asynchronous code still running at the deadline) ends the child as
 * `--trace-sigint` does, which the host reports as the run's timeout.
 *
 * Guest code that adds its own SIGINT listener turns the kept watchdog off (Node's rule) and runs
 * pay the thread again, still stopped correctly. Not on Windows, which has no SIGINT to send.
 */
export const SIGINT_INTERRUPT_FLAG = "--trace-sigint";

/** Whether child.js is started with SIGINT_INTERRUPT_FLAG and interrupted by the host. */
export const SIGINT_INTERRUPTS = process.platform !== "win32";
