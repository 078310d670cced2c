/**
 * Apart from instance.ts so that the results code (display.ts) and the deno engine name it without
 * loading the QuickJS engine (issue 42, cold start).
 */
/** Host stand-in for a guest value that could not be copied (shown by util.inspect as its text). */
export class Opaque {
  constructor(readonly text: string) {}
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.text;
  }
  toString(): string {
    return this.text;
  }
}
