/**
 * Packages the operator configured are installed when an executor starts, so the first run can
 * import them. A failure is the operator's to fix, so start() fails with every problem listed.
 */
import type { DepsService } from "../deps/service.js";
import { ValidationError } from "../errors.js";

export async function installConfiguredDeps(deps: DepsService): Promise<void> {
  const wanted = await deps.list();
  if (wanted.every((d) => d.installed)) return;
  const result = await deps.sync();
  if (result.failed.length) {
    throw new ValidationError(
      `Could not install the configured deps:\n${result.failed.map((f) => `  ${f.spec}: ${f.error.split("\n").slice(-3).join(" ")}`).join("\n")}`,
    );
  }
}
