/**
 * The agents' fixed vocabularies, in a module of their own: the main entry exports them as they are,
 * and loads the rest of the agents only when first used (scripts/main-entry.mjs; an array cannot be
 * stood in for).
 */

/** Toolsets an agent may name in `tools`, besides other agents. */
export const TOOLSET_NAMES = [
  "code",
  "tools",
  "filesystem_project",
  "filesystem_project_ro",
  "filesystem_cwd",
  "filesystem_cwd_ro",
  "shell_readonly",
  "shell_file_ops",
  "shell",
  "skills",
] as const;

/** How a run answers a tool call that needs approval. */
export const APPROVAL_MODES = ["prompt", "approve_all", "reject_all"] as const;
