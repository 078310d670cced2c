/** The commands shell_readonly may run (an agent file may narrow them with allowed_commands). Kept apart so files.ts can check options without loading the toolset. */
export const READONLY_COMMAND_NAMES = ["ls", "cat", "head", "tail", "wc", "grep", "find", "sort", "uniq", "git"] as const;
