/**
 * The console's only style sheet and script, served as files from /console/static/ so the strict
 * Content-Security-Policy (`default-src 'self'`, no inline script or style) holds on every page.
 * The script only enhances: every page works with plain links and forms; it adds the live output
 * of a session's run (Server-Sent Events), written with textContent so output stays text.
 */
export const CONSOLE_CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #57606a; --line: #d0d7de; --accent: #0757c2; --warn: #9a6700; --bad: #b42318; --ok: #1a7f37; --code: #f6f8fa; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #30363d; --accent: #4493f8; --warn: #d29922; --bad: #f85149; --ok: #3fb950; --code: #161b22; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, textarea:focus-visible, select:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: .5rem; z-index: 1; }
.skip:focus { left: .5rem; }
main:focus { outline: none; }
header { border-bottom: 1px solid var(--line); padding: .5rem 1rem; display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; }
header .brand { font-weight: 700; margin-right: 1rem; }
nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem .9rem; margin: 0; padding: 0; }
nav a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
main { padding: 1rem; max-width: 80rem; margin: 0 auto; }
h1 { font-size: 1.5rem; margin: .25rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
pre, code, textarea { font: 14px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: var(--code); padding: .75rem; overflow: auto; max-height: 32rem; white-space: pre-wrap; overflow-wrap: anywhere; border: 1px solid var(--line); border-radius: 6px; }
textarea { width: 100%; min-height: 7rem; }
input[type=text], input[type=search], input[type=password], textarea, select { padding: .4rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); max-width: 100%; }
button { padding: .45rem .9rem; border-radius: 6px; border: 1px solid var(--line); background: var(--code); color: var(--fg); cursor: pointer; font: inherit; }
button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
button.danger { color: var(--bad); }
form.inline { display: inline; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin-bottom: 1rem; }
.filters label, .field label { display: block; font-size: .9rem; color: var(--muted); }
.field { margin: .5rem 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; margin: 1rem 0; }
.badge { display: inline-block; padding: 0 .5rem; border-radius: 1rem; border: 1px solid currentColor; font-size: .85rem; }
.status-paused, .trust-untrusted { color: var(--warn); }
.status-failed, .error { color: var(--bad); }
.status-completed, .trust-trusted { color: var(--ok); }
.muted { color: var(--muted); }
.tok-keyword { color: #8250df; } .tok-string { color: #0a3069; } .tok-number { color: #0550ae; } .tok-comment { color: var(--muted); font-style: italic; }
@media (prefers-color-scheme: dark) { .tok-keyword { color: #d2a8ff; } .tok-string { color: #a5d6ff; } .tok-number { color: #79c0ff; } }
.pager { display: flex; gap: 1rem; margin: 1rem 0; align-items: center; }
.notice { border-left: 4px solid var(--accent); padding: .5rem 1rem; background: var(--code); }
.notice.error { border-color: var(--bad); }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dl.meta dt { color: var(--muted); } dl.meta dd { margin: 0; overflow-wrap: anywhere; }
img.preview { max-width: 100%; height: auto; border: 1px solid var(--line); }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: .5rem 0; }
.choices label { margin-right: 1rem; }
@media (max-width: 40rem) {
  main { padding: .5rem; }
  table.stack thead { display: none; }
  table.stack tr { display: block; border-bottom: 1px solid var(--line); padding: .25rem 0; }
  table.stack td { display: block; border: 0; padding: .1rem .25rem; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
}
`;

export const CONSOLE_JS = `
"use strict";
// Live output of a session's run: <pre data-stream="URL"> is filled from Server-Sent Events.
for (const pre of document.querySelectorAll("pre[data-stream]")) {
  const status = document.getElementById(pre.dataset.statusId || "");
  const source = new EventSource(pre.dataset.stream);
  const say = (text) => { if (status) status.textContent = text; };
  source.addEventListener("reset", () => { pre.textContent = ""; say("running"); });
  source.addEventListener("output", (e) => { pre.textContent += JSON.parse(e.data).text; });
  source.addEventListener("end", (e) => { say(JSON.parse(e.data).summary); });
  source.addEventListener("idle", () => say("idle: no run in progress"));
  source.addEventListener("open", () => pre.setAttribute("data-connected", "true"));
  source.onerror = () => say("disconnected; reload the page to reconnect");
}
`;
