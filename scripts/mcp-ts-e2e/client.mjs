// End-to-end check of `ctxpack serve` with the official TypeScript MCP SDK
// client over stdio. Usage: node client.mjs CTXPACK_BINARY REPOSITORY
// The repository's store holds one pack named pr-1 (ctxpack pack --store).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, repo] = process.argv.slice(2);
let passed = 0, failed = 0;
function check(name, ok, detail) {
  if (ok) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name}${detail ? `: ${detail}` : ""}`); }
}
const legend = (text, key) => {
  const tail = text.slice(text.lastIndexOf("## LEGEND"));
  const line = tail.split("\n").find((l) => l.startsWith(`- ${key}: `));
  return line ? line.slice(key.length + 4) : "";
};

const client = new Client({ name: "ctxpack-ts-e2e", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: bin, args: ["serve", "-C", repo], stderr: "inherit" }));
check("initialize: server is ctxpack", client.getServerVersion()?.name === "ctxpack");

const tools = (await client.listTools()).tools.map((t) => t.name).sort();
check("tools/list: input, output and query", tools.join(",") === "input,output,query", tools.join(","));

const call = async (name, args) => {
  const res = await client.callTool({ name, arguments: args });
  return { text: res.content[0].text, isError: !!res.isError };
};
const error = (r) => { try { return JSON.parse(r.text); } catch { return {}; } };

for (const profile of ["orchestrator", "reviewer", "executor"]) {
  let args = { action: "read", name: "pr-1", profile, limit: 1 };
  const seen = [];
  for (let page = 0; page < 100; page++) {
    const r = await call("output", args);
    if (r.isError) { check(`read ${profile}`, false, r.text); break; }
    for (const l of r.text.split("\n")) if (l.startsWith("## [")) seen.push(l);
    const next = legend(r.text, "next_page_token");
    if (next === "none") break;
    args = { action: "read", name: "pr-1", page_token: next };
  }
  const whole = await call("output", { action: "read", name: "pr-1", profile, limit: 1000 });
  const total = (whole.text.match(/\n## \[/g) || []).length;
  check(`read ${profile}: paging returns every chunk once`, seen.length === total && new Set(seen).size === total, `${seen.length} vs ${total}`);
  check(`read ${profile}: LEGEND selection`, legend(whole.text, "selected_by") === "name:only_candidate" && legend(whole.text, "profile") === profile);
}

const got = JSON.parse((await call("input", { action: "get", name: "pr-1" })).text).pack;
check("input get: revision 1, draft", got.revision === 1 && got.status === "draft", JSON.stringify(got));
const doc = {
  scope: { description: "util" },
  findings: [{ description: "util is unused", refs: ["util.go:3"] }],
};
let r = await call("input", { action: "write", id: got.id, expected_revision: 1, document: doc });
check("input write: revision 2", !r.isError && JSON.parse(r.text).entry.revision === 2, r.text);
r = await call("input", { action: "write", id: got.id, expected_revision: 1, document: { scope: "x" } });
let e = error(r);
check("stale write: revision_conflict with changed_section_keys", r.isError && e.code === "revision_conflict" &&
  JSON.stringify(e.details.changed_section_keys) === '["findings","scope"]', r.text);
r = await call("input", { action: "write", id: got.id, expected_revision: 2, status: "finalized",
  document: { ...doc, qa: { verdict: "pass" }, findings: [{ description: "x", refs: ["util.go:3", "util.go:40-41"] }] } });
e = error(r);
check("finalize with a broken ref: finalize_validation.invalid_refs", r.isError && e.code === "finalize_validation" &&
  e.details.invalid_refs.length === 1 && e.details.invalid_refs[0].reason === "line_out_of_range", r.text);
r = await call("output", { action: "get", id: got.id, mode: "full" });
e = error(r);
check("legacy output get: guidance to read", r.isError && e.code === "invalid_data" && e.kind === "validation" && e.details.supported_action === "read", r.text);
r = await call("output", { action: "read", id: got.id, cursor: "x" });
check("legacy cursor: page_token", error(r).details?.supported_field === "page_token", r.text);

const resources = (await client.listResources()).resources.map((x) => x.uri);
check("resources/list: the pack and its document", resources.includes(`ctxpack://packs/${got.id}`) && resources.includes(`ctxpack://packs/${got.id}/document`), resources.join(" "));
const pack = await client.readResource({ uri: `ctxpack://packs/${got.id}` });
check("resources/read: the stored pack", JSON.parse(pack.contents[0].text).pack_id === got.id);

await client.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
