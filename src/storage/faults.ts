/**
 * Named points between the steps of a write, where a test can stop the process (SIGKILL) or fail
 * the step, to prove that a crash or an error at exactly that point leaves no mixed record and no
 * leftovers. Production code never sets a hook, so each point costs one undefined check.
 *
 *   temp-partial   half of the temp file written           (file stores)
 *   temp-written   temp file complete, not yet renamed     (file stores)
 *   committed      renamed into place, cleanup not yet done (file stores)
 *   read           a file about to be read (file stores): lets a test count what a step reads
 */
export type FaultPoint = "temp-partial" | "temp-written" | "committed" | "read";

let hook: ((point: FaultPoint, target: string) => void) | undefined;

/** Test-only: called at every fault point with the file being written. Pass undefined to clear. */
export function setFaultHook(fn: ((point: FaultPoint, target: string) => void) | undefined): void {
  hook = fn;
}

export function faultPoint(point: FaultPoint, target: string): void {
  hook?.(point, target);
}

export function hasFaultHook(): boolean {
  return hook !== undefined;
}
