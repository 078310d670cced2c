/**
 * Packages the operator configured are installed when an executor starts, so the first run can
 * import them. A failure is the operator's to fix, so start() fails with every problem listed.
 */
import type { DepsService } from "../deps/service.js";
import { ValidationError } from "../errors.js";

export async function installConfiguredDeps(deps: DepsService, onOutput?: (line: string) => void): Promise<void> {
  const wanted = await deps.list();
  const missing = wanted.filter((d) => !d.installed);
  if (missing.length === 0) return;
  onOutput?.(`installing ${missing.length} configured package${missing.length === 1 ? "" : "s"}: ${missing.map((d) => d.spec).join(", ")}`);
  const result = await deps.sync(onOutput);
  if (result.failed.length) {
    throw new ValidationError(
      `Could not install the configured deps:\n${result.failed.map((f) => `  ${f.spec}: ${f.error.split("\n").slice(-3).join(" ")}`).join("\n")}`,
    );
  }
}
