/**
 * Errors a toolable tool raises, with the reference's codes and default recoverability. Thrown from
 * `run`, one becomes the error envelope `{"status": "error", "error": {code, message, recoverable,
 * suggestion?, context?}}`; anything else thrown becomes INTERNAL with its text.
 */
import { ToolError as HostToolError, type ToolErrorCode } from "../errors.js";

export type ErrorCode = ToolErrorCode;

export const ERROR_CODES: readonly ErrorCode[] = ["INVALID_INPUT", "MISSING_PARAM", "INVALID_PATH", "NOT_FOUND", "CONFLICT", "PRECONDITION", "TIMEOUT", "PERMISSION", "INTERNAL", "DEPENDENCY"];

export interface ToolErrorOptions {
  /** Default: true for INVALID_INPUT, MISSING_PARAM, INVALID_PATH, NOT_FOUND, CONFLICT, PRECONDITION. */
  recoverable?: boolean;
  suggestion?: string;
  context?: Record<string, unknown>;
}

export class ToolError extends Error {
  override readonly name = "ToolError";
  readonly recoverable: boolean;
  readonly suggestion?: string;
  readonly context?: Record<string, unknown>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: ToolErrorOptions = {},
  ) {
    super(message);
    this.recoverable = options.recoverable ?? HostToolError.isRecoverable(code);
    if (options.suggestion !== undefined) this.suggestion = options.suggestion;
    if (options.context !== undefined) this.context = options.context;
  }

  /** The `error` object of the envelope, keys in the reference's order. */
  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      recoverable: this.recoverable,
      ...(this.suggestion !== undefined ? { suggestion: this.suggestion } : {}),
      ...(this.context !== undefined ? { context: this.context } : {}),
    };
  }
}
