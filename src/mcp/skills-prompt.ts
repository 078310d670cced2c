/**
 * The skills catalog as an MCP prompt (`prompts/get skills`): a host puts it in the system prompt.
 * A prompt, not the server instructions, so the default surface stays the same size however many
 * skills the store holds (test/mcp/disclosure.test.ts).
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { Session } from "../session.js";

export function registerSkillsPrompt(server: McpServer, session: Session): void {
  server.registerPrompt(
    "skills",
    {
      title: "Skills catalog",
      description: "The available Agent Skills (name, description, location) to put in a system prompt; empty when there are none.",
      argsSchema: { format: z.enum(["xml", "markdown"]).optional() },
    },
    async ({ format }) => {
      const text = await session.skillsCatalog({ format: format ?? "xml" });
      return {
        description: text ? "Skills catalog" : "No skills are available",
        messages: text ? [{ role: "user", content: { type: "text", text } }] : [],
      };
    },
  );
}
