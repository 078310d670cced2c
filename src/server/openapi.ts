/** The OpenAPI 3.1 document of `serve`, generated from the same zod schemas that validate requests. */
import { z } from "zod";
import { errorBodySchema, ROUTES, type RouteSpec } from "./schemas.js";

const json = (schema: z.ZodType, io: "input" | "output") => z.toJSONSchema(schema, { io, target: "draft-2020-12", unrepresentable: "any" });

export function openApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [operationId, spec] of Object.entries(ROUTES) as Array<[string, RouteSpec]>) {
    const parameters: unknown[] = [];
    if (spec.path.includes("{id}")) parameters.push({ name: "id", in: "path", required: true, schema: { type: "string" }, description: "session id from POST /sessions" });
    if (spec.query) {
      for (const [key, field] of Object.entries(spec.query.shape)) {
        parameters.push({ name: key, in: "query", required: !(field as z.ZodType).safeParse(undefined).success, schema: json(field as z.ZodType, "input") });
      }
    }
    const operation: Record<string, unknown> = {
      operationId,
      summary: spec.summary,
      ...(parameters.length ? { parameters } : {}),
      ...(spec.auth ? {} : { security: [] }),
      responses: {
        [String(spec.status ?? 200)]: {
          description: "success",
          content:
            spec.response === "bytes"
              ? { "application/octet-stream": { schema: { type: "string", contentMediaType: "application/octet-stream" } }, "text/plain": { schema: { type: "string" } }, "application/json": { schema: {} } }
              : {
                  "application/json": { schema: json(spec.response, "output") },
                  ...(spec.stream ? { "text/event-stream": { schema: { type: "string", description: "events: output { stream, text } ..., then result (the ExecutionResult)" } } } : {}),
                },
        },
        default: { description: "failure", content: { "application/json": { schema: json(errorBodySchema, "output") } } },
      },
    };
    if (spec.body) operation.requestBody = { required: true, content: { "application/json": { schema: json(spec.body, "input") } } };
    if (spec.rawBody) operation.requestBody = { required: true, content: Object.fromEntries(spec.rawBody.map((t) => [t, { schema: t === "application/json" ? {} : { type: "string" } }])) };
    (paths[spec.path] ??= {})[spec.method] = operation;
  }
  return {
    openapi: "3.1.0",
    info: { title: "ts-code-mode session server", version },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}
