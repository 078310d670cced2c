/**
 * A local stand-in for a few operations of GitHub's REST API, on 127.0.0.1, for the OpenAPI tests
 * that load GitHub's real published spec (test/fixtures/openapi/github). It implements what the
 * spec says of these operations (paths, methods, status codes, content types):
 *
 *   POST /repos/{owner}/{repo}/issues   issues_create        201 JSON; needs the bearer token
 *   GET  /repos/{owner}/{repo}/issues   issues_list_for_repo 200 JSON array (state, per_page)
 *   GET  /users/{username}              users_get_by_username 200 JSON; "ghost": 404 echoing the Authorization header
 *   POST /markdown/raw                  markdown_render_raw  text/plain in, text/html out
 *   GET  /rate_limit                    rate_limit_get       200 JSON
 */
import { fileURLToPath } from "node:url";
import { json, startServer, type TestServer } from "../http/server.js";

export const GITHUB_SPEC = fileURLToPath(new URL("../../fixtures/openapi/github/api.github.com.json.gz", import.meta.url));
export const GITHUB_QUERIES = fileURLToPath(new URL("../../fixtures/openapi/github/queries.json", import.meta.url));

export async function startGitHubServer(token: string): Promise<TestServer> {
  const issues: Array<{ number: number; title: string; body?: string; labels: string[]; state: string }> = [];
  return startServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const authorized = req.headers.authorization === `Bearer ${token}`;
    let m: RegExpExecArray | null;
    if ((m = /^\/repos\/([^/]+)\/([^/]+)\/issues$/.exec(url.pathname))) {
      if (req.method === "POST") {
        if (!authorized) return json(res, 401, { message: "Requires authentication" });
        const input = JSON.parse(req.body) as { title: string; body?: string; labels?: string[] };
        const issue = { number: issues.length + 1, title: input.title, labels: input.labels ?? [], state: "open", ...(input.body ? { body: input.body } : {}) };
        issues.push(issue);
        return json(res, 201, { ...issue, repository_url: `https://api.github.com/repos/${m[1]}/${m[2]}` });
      }
      const state = url.searchParams.get("state") ?? "open";
      const perPage = Number(url.searchParams.get("per_page") ?? 30);
      return json(res, 200, issues.filter((i) => state === "all" || i.state === state).slice(0, perPage));
    }
    if ((m = /^\/users\/([^/]+)$/.exec(url.pathname))) {
      const login = decodeURIComponent(m[1]!);
      // A careless server that echoes the credentials it got into its error body.
      if (login === "ghost") return json(res, 404, { message: "Not Found", authorization: req.headers.authorization });
      return json(res, 200, { login, id: 1, type: "User", api_version: req.headers["x-github-api-version"] ?? null });
    }
    if (url.pathname === "/markdown/raw" && req.method === "POST") {
      res.writeHead(200, { "content-type": "text/html;charset=utf-8" });
      return res.end(`<p>${req.body}</p>`);
    }
    if (url.pathname === "/rate_limit") return json(res, 200, { resources: { core: { limit: 5000, remaining: 4999 } }, rate: { limit: 5000, remaining: 4999 } });
    json(res, 404, { message: "Not Found" });
  });
}
