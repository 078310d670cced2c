/**
 * The signature of a Python workflow saved from outside a Python session (a TypeScript session, the
 * CLI, MCP) or edited by hand: the same `ast` reading the Python guest does (one file,
 * execution/python/guest/workflow_signature.py), run by python3 as a small bounded program. The
 * source goes in on stdin (never argv), `-I` keeps the user's site and environment out, the program
 * caps its own memory, and the argv runner's timeout kills its whole process group. The code itself
 * is only parsed, never run.
 */
import { z } from "zod";
import { lazy } from "../lazy.js";
import { ToolError, ValidationError } from "../errors.js";
import { pythonGuestFile } from "../execution/python/guest-files.js";
import { paramSchema } from "../storage/workflow-record.js";
import { runCommand } from "../tools/adapters/cli/run.js";
import type { WorkflowSignature } from "./signature.js";

/** Parsing 1 MiB of Python takes well under a second; past this the source is hostile or the machine stuck. */
export const PYTHON_SIGNATURE_TIMEOUT_MS = 10_000;
/** The answer is params and a docstring of a source of at most 1 MiB. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

const answerSchema = lazy(() => z.union([
  z.object({ error: z.string().max(10_000) }),
  z.object({
    hasRun: z.boolean(),
    description: z.string().nullable(),
    params: z.array(paramSchema).max(200),
    syntaxError: z.object({ message: z.string().max(10_000), line: z.number().int(), column: z.number().int() }).nullable(),
  }),
]));

/**
 * The source could not be read. `sourceFault`: the source itself is the cause (a timeout, a refused
 * size or encoding), so trying the same source again would only cost the same work again; false
 * when the interpreter is missing or broken, which the operator can fix.
 */
export class PythonSignatureError extends ValidationError {
  constructor(
    message: string,
    readonly sourceFault: boolean,
  ) {
    super(message);
  }
}

export interface PythonSignatureOptions {
  /** The interpreter (a command on PATH or a path). Default `python3`. */
  python?: string;
  timeoutMs?: number;
}

/**
 * What `source` offers as a Python workflow. Throws ValidationError when it cannot be read at all
 * (no python3, a timeout, a source the program refuses), saying what to do.
 */
export async function pythonWorkflowSignature(source: string, options: PythonSignatureOptions = {}): Promise<WorkflowSignature> {
  const python = options.python ?? "python3";
  let stdout: string;
  try {
    stdout = await runCommand([python, "-I", "-X", "utf8", pythonGuestFile("workflow_signature.py")], {
      tool: "workflows",
      callable: "create",
      label: "reading the Python workflow's signature",
      timeoutMs: options.timeoutMs ?? PYTHON_SIGNATURE_TIMEOUT_MS,
      maxStdoutBytes: MAX_ANSWER_BYTES,
      input: source,
    });
  } catch (err) {
    if (err instanceof ToolError && err.code === "DEPENDENCY") {
      throw new PythonSignatureError(
        `A Python workflow is checked (and its parameters read) with ${python}, which was not found; install Python 3 (python3 on PATH) or save the workflow from a Python session.`,
        false,
      );
    }
    const timedOut = err instanceof ToolError && err.code === "TIMEOUT";
    throw new PythonSignatureError(`Could not read the Python workflow's signature: ${err instanceof Error ? err.message : String(err)}`, timedOut);
  }
  let parsed: z.infer<typeof answerSchema>;
  try {
    parsed = answerSchema.parse(JSON.parse(stdout));
  } catch {
    throw new PythonSignatureError(`Could not read the Python workflow's signature: ${python} gave an answer that is not one (${JSON.stringify(stdout.slice(0, 200))})`, false);
  }
  if ("error" in parsed) throw new PythonSignatureError(`Could not read the Python workflow's signature: ${parsed.error}`, true);
  // Python's run() may take **kwargs: the interpreter itself refuses an unknown keyword.
  return { description: parsed.description, params: parsed.params, hasRun: parsed.hasRun, closedParams: false, syntaxError: parsed.syntaxError };
}
