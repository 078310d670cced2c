/**
 * The `skills` toolset (Agent Skills, progressive disclosure): the catalog goes in the agent's
 * system prompt (skillsSystemText), and two tools read a skill when a task matches it —
 * load_skill (its instructions and the list of its files) and read_skill_file (one file, confined
 * to the skill's folder by the library). Both use the call's Session, the one `code` starts, so a
 * skill's scripts run with skills.run inside run_code against the same store.
 */
import { z } from "zod";
import { lazy } from "../../lazy.js";
import { bounded } from "../../mcp/format.js";
import type { AgentTool, ToolsetEnv } from "./types.js";

const nameInput = lazy(() => z.string().min(1).max(64).describe("the skill's name, from <available_skills>"));
const loadInput = lazy(() => z.object({ name: nameInput }));
const readInput = lazy(() => z.object({ name: nameInput, path: z.string().min(1).max(1024).describe('a file of the skill, relative to its folder, e.g. "references/columns.md"') }));

/** What goes after the agent's instructions: how to use skills and their catalog; "" when there are none. */
export async function skillsSystemText(env: ToolsetEnv): Promise<string> {
  const catalog = await (await env.session()).skillsCatalog();
  if (catalog === "") return "";
  return [
    "Skills are instructions (and scripts) for specific tasks. When a task matches a skill below, call load_skill(name) first and follow its instructions; read a file it names with read_skill_file(name, path); run one of its scripts inside run_code with skills.run(name, script, args).",
    catalog,
  ].join("\n");
}

export function skillsToolset(env: ToolsetEnv): AgentTool[] {
  return [
    {
      name: "load_skill",
      description: "Read a skill from <available_skills>: its instructions and the paths of its files (scripts/, references/, assets/).",
      inputSchema: loadInput,
      needsApproval: false,
      async execute(args) {
        const { name } = loadInput.parse(args);
        const skill = await (await env.session()).loadSkill(name);
        const files = skill.resources.length ? skill.resources.join("\n") : "(none)";
        return bounded(`# Skill ${skill.name}\n\n${skill.body}\n\n--- files of this skill ---\n${files}`, env.maxOutputChars);
      },
    },
    {
      name: "read_skill_file",
      description: "Read one text file of a skill (a path load_skill listed, relative to the skill's folder).",
      inputSchema: readInput,
      needsApproval: false,
      async execute(args) {
        const { name, path } = readInput.parse(args);
        // The same operation as the guest's skills.read: the library confines the path to the skill's folder.
        const text = await (await env.session()).dispatch("skills", "read", [name, path, { as: "text" }]);
        return bounded(String(text), env.maxOutputChars);
      },
    },
  ];
}
