/**
 * Environment variables set by a test file and put back afterwards. Most test files share their
 * worker process with the files after them (vitest.config.ts, `isolate: false`), so a variable a
 * file leaves behind would reach those files. Putting back means deleting a variable that was
 * unset: assigning `undefined` to process.env stores the string "undefined".
 */
export function setEnv(vars: Readonly<Record<string, string>>): () => void {
  const saved = Object.keys(vars).map((name) => [name, process.env[name]] as const);
  Object.assign(process.env, vars);
  return () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}
