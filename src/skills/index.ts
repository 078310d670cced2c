/** Agent Skills: SKILL.md parsing and validation, the library over stores and read-only roots, discovery. */
export { SkillLibrary, SkillProtectedError, UntrustedSkillError, type CreateSkillInput, type SkillDetails, type SkillLibraryOptions, type SkillSummary } from "./library.js";
export { discoverSkillRoots, DISCOVERED_FOLDERS } from "./roots.js";
export { lenientSkill, parseSkillMd, validateFrontmatter, MAX_DESCRIPTION_LENGTH, MAX_COMPATIBILITY_LENGTH, type SkillFrontmatter } from "./spec.js";
export { validateSkillDir } from "./validate.js";
