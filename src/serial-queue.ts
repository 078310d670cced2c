/**
 * Runs tasks one at a time, in order. A session's runs share one set of variables, so two
 * `run()` calls made at once must not interleave; the second waits for the first.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.tail.then(task, task);
    // The queue continues whatever the task did; the caller still sees its rejection.
    this.tail = next.catch(() => undefined);
    return next;
  }
}
