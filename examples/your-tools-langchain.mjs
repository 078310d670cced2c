// Take your LangChain tools, add code mode: the model writes code that calls them.
// Run from the repository after `npm run build`:  node examples/your-tools-langchain.mjs
// The model here is LangChain's scripted fakeModel(), so the example runs offline; use your own
// chat model (e.g. new ChatOpenAI({ model: "gpt-4.1" })) and it writes the code itself.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { AIMessage, fakeModel } from "langchain";

const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-your-tools-"));
process.on("exit", () => rmSync(base, { recursive: true, force: true }));
const forecast = { Oslo: 4, Rome: 19 };

// Two scripted turns: code that calls the user's tool twice at once, then the answer.
const code = 'const [a, b] = await Promise.all(["Oslo", "Rome"].map((city) => tools.getWeather({ city })));\na.tempC > b.tempC ? a.city : b.city';
const model = fakeModel()
  .respondWithTools([{ name: "run_code", args: { code }, id: "c1" }])
  .respond((messages) => new AIMessage(`run_code said: ${messages.at(-1).content}`));

// --- docs: LangChain ---
import { createAgent, tool } from "langchain";
import { z } from "zod";
import { FileStorage, Session } from "ts-code-mode";
import { codeModeSystemPrompt, codeModeTools, fromLangChainTools } from "ts-code-mode/langchain";

// Your tools, as they are.
const getWeather = tool(async ({ city }) => ({ city, tempC: forecast[city] }), {
  name: "getWeather",
  description: "Get the weather in a city",
  schema: z.object({ city: z.string() }),
});

// Add code mode: the code the model writes calls them as tools.getWeather({ city }).
const session = new Session({ storage: new FileStorage({ basePath: base }), tools: fromLangChainTools([getWeather]) });
const agent = createAgent({
  model,
  tools: codeModeTools(session),
  systemPrompt: await codeModeSystemPrompt(session),
});
const { messages } = await agent.invoke({ messages: [{ role: "user", content: "Is it warmer in Oslo or in Rome?" }] });
console.log(messages.at(-1).content);
await session.close();
// --- end ---
