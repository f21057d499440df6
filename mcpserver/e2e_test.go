package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/mcpserver"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/ctxpack/ctxpack/source"
	"github.com/ctxpack/ctxpack/store"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const mainGo = `package main

import "fmt"

func main() {
	fmt.Println(greeting())
}

func greeting() string {
	return "hello"
}
`

// session packs a fixture commit, stores it as pr-42 in a store with an
// injected clock, and connects the Go SDK's client to the server in process.
func session(t *testing.T) (*mcp.ClientSession, *store.Store, *clock, string) {
	t.Helper()
	ctx := context.Background()
	r := gittest.New(t)
	r.Write("README.md", "# demo\n\nA demo.\n")
	r.Write("main.go", "package main\n")
	r.Commit("first")
	r.Write("main.go", mainGo)
	for i := range 8 {
		r.Write(fmt.Sprintf("pkg/f%d.go", i), fmt.Sprintf("package pkg\n\n// F%d is %d.\nconst F%d = %d\n", i, i, i, i))
	}
	r.Commit("second")
	run, err := pipeline.Execute(ctx, pipeline.PackOptions{Dir: r.Dir, Commit: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict.Status != audit.StatusPass {
		t.Fatalf("fixture verdict: %+v", run.Verdict.Failed)
	}
	repo, err := source.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := audit.NewScanner(audit.ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}
	st, err := store.Open(store.Options{Dir: t.TempDir(), Now: c.Now, TTL: time.Hour, ExpiringSoon: 10 * time.Minute,
		Scanner: sc, Files: store.NewRepoFiles(repo, repo.Root)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Put(ctx, store.PutInput{Pack: run.Result.JSON, Record: run.RecordJSON, Name: "pr-42"})
	if err != nil {
		t.Fatal(err)
	}
	query := func(ctx context.Context, text string, maxChars int, commit string) ([]byte, error) {
		_, data, err := pipeline.Query(ctx, pipeline.PackOptions{Dir: r.Dir, Commit: commit}, text, maxChars)
		return data, err
	}
	srv := mcpserver.New(mcpserver.Options{Store: st, Version: "test", Query: query})
	ct, stt := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, stt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, st, c, res.View.ID
}

// call calls a tool and returns its text and whether it is an error.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s %v: %d contents", tool, args, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// callErr calls a tool that must fail with code and returns the error.
func callErr(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, code string) store.Error {
	t.Helper()
	text, isErr := call(t, cs, tool, args)
	if !isErr {
		t.Fatalf("%s %v succeeded, want %s:\n%s", tool, args, code, text)
	}
	var e store.Error
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		t.Fatalf("error is not the v3 contract: %v\n%s", err, text)
	}
	if e.Code != code || e.Kind == "" || e.Message == "" || e.Details == nil {
		t.Fatalf("%s %v: got %+v, want code %s", tool, args, e, code)
	}
	return e
}

func legend(out, key string) string {
	i := strings.LastIndex(out, "## LEGEND")
	if i < 0 {
		return ""
	}
	for _, line := range strings.Split(out[i:], "\n") {
		if v, ok := strings.CutPrefix(line, "- "+key+": "); ok {
			return v
		}
	}
	return ""
}

func TestEndToEnd(t *testing.T) {
	ctx := context.Background()
	cs, _, _, id := session(t)

	// initialize happened in Connect; the server says who it is.
	if init := cs.InitializeResult(); init == nil || init.ServerInfo.Name != "ctxpack" {
		t.Fatalf("initialize result: %+v", init)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "input,output,query" {
		t.Fatalf("tools %v", names)
	}

	// Read with each profile and page through: every chunk exactly once.
	for _, profile := range []string{"orchestrator", "reviewer", "executor"} {
		args := map[string]any{"action": "read", "name": "pr-42", "profile": profile, "limit": 3}
		var headings []string
		for page := 0; page < 50; page++ {
			out, isErr := call(t, cs, "output", args)
			if isErr {
				t.Fatalf("%s page %d: %s", profile, page, out)
			}
			if legend(out, "profile") != profile || legend(out, "selected_by") != "name:only_candidate" || legend(out, "selected_status") != "draft" {
				t.Fatalf("%s LEGEND:\n%s", profile, out)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "## [") {
					headings = append(headings, line)
				}
			}
			next := legend(out, "next_page_token")
			if next == "none" {
				break
			}
			args = map[string]any{"action": "read", "name": "pr-42", "page_token": next}
		}
		whole, _ := call(t, cs, "output", map[string]any{"action": "read", "id": id, "profile": profile, "limit": 1000})
		if n := strings.Count(whole, "\n## ["); n != len(headings) || n < 10 {
			t.Fatalf("%s: paged %d chunks, the whole read has %d", profile, len(headings), n)
		}
		if profile == "reviewer" != strings.Contains(whole, "```go") {
			t.Fatalf("%s: code fences only in the reviewer profile:\n%s", profile, whole)
		}
		if !strings.Contains(whole, `output {"action":"read","id":"`+id+`"`) && profile != "reviewer" {
			t.Fatalf("%s: deep-nav hints are not output read calls:\n%s", profile, whole)
		}
	}
	// The default read is the orchestrator's compact page of 6.
	out, _ := call(t, cs, "output", map[string]any{"action": "read", "id": id})
	if legend(out, "profile") != "orchestrator" || legend(out, "limit") != "6" || legend(out, "has_more") != "true" {
		t.Fatalf("default read LEGEND:\n%s", out)
	}
	callErr(t, cs, "output", map[string]any{"action": "read", "id": id, "page_token": "bm9wZQ"}, store.CodeInvalidData)

	// Write findings, then a write from a stale revision.
	doc := map[string]any{
		"scope":    map[string]any{"description": "greeting"},
		"findings": []any{map[string]any{"description": "hard-coded greeting", "refs": []string{"main.go:9-11"}}},
	}
	text, isErr := call(t, cs, "input", map[string]any{"action": "write", "id": id, "expected_revision": 1, "document": doc})
	if isErr || !strings.Contains(text, `"revision": 2`) {
		t.Fatalf("write: %s", text)
	}
	e := callErr(t, cs, "input", map[string]any{"action": "write", "name": "pr-42", "expected_revision": 1, "document": map[string]any{"scope": "x"}}, store.CodeRevisionConflict)
	if fmt.Sprint(e.Details["changed_section_keys"]) != "[findings scope]" || e.Details["current_revision"] != float64(2) {
		t.Fatalf("conflict details: %v", e.Details)
	}
	// validate_only keeps nothing.
	text, isErr = call(t, cs, "input", map[string]any{"action": "write", "id": id, "expected_revision": 2, "document": doc, "validate_only": true})
	if isErr || !strings.Contains(text, `"persisted": false`) {
		t.Fatalf("validate_only: %s", text)
	}

	// Finalize with a broken ref.
	doc["qa"] = map[string]any{"verdict": "pass"}
	doc["findings"] = []any{map[string]any{"description": "hard-coded greeting", "refs": []string{"main.go:9-11", "main.go:30-31"}}}
	e = callErr(t, cs, "input", map[string]any{"action": "write", "id": id, "expected_revision": 2, "status": "finalized", "document": doc}, store.CodeFinalizeValidation)
	refs, _ := e.Details["invalid_refs"].([]any)
	if len(refs) != 1 || refs[0].(map[string]any)["ref"] != "main.go:30-31" || refs[0].(map[string]any)["reason"] != store.RefOutOfRange {
		t.Fatalf("invalid_refs: %v", e.Details)
	}
	doc["findings"] = []any{map[string]any{"description": "hard-coded greeting", "refs": []string{"main.go:9-11"}}}
	text, isErr = call(t, cs, "input", map[string]any{"action": "write", "id": id, "expected_revision": 2, "status": "finalized", "document": doc})
	if isErr || !strings.Contains(text, `"status": "finalized"`) {
		t.Fatalf("finalize: %s", text)
	}
	out, _ = call(t, cs, "output", map[string]any{"action": "read", "name": "pr-42", "contains": "main.go:9-11"})
	if legend(out, "selected_status") != "finalized" || legend(out, "selected_revision") != "3" || !strings.Contains(out, "`main.go:9-11` — resolves") {
		t.Fatalf("read after finalize:\n%s", out)
	}

	// Resources: the pack as stored and the entry's document.
	rl, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range rl.Resources {
		uris = append(uris, r.URI)
	}
	if strings.Join(uris, " ") != "ctxpack://packs/"+id+" ctxpack://packs/"+id+"/document" {
		t.Fatalf("resources %v", uris)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ctxpack://packs/" + id})
	if err != nil || !strings.Contains(rr.Contents[0].Text, `"pack_id":"`+id+`"`) {
		t.Fatalf("read pack resource: %v", err)
	}
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ctxpack://packs/" + id + "/document"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, `"hard-coded greeting"`) {
		t.Fatalf("read document resource: %v", err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ctxpack://packs/pk_aaaaaaaa"}); err == nil {
		t.Fatal("a missing pack reads")
	}
}

func TestTTLExpiryAndGrace(t *testing.T) {
	cs, _, c, id := session(t)
	list := func(args map[string]any) string {
		out, isErr := call(t, cs, "output", args)
		if isErr {
			t.Fatal(out)
		}
		return out
	}
	text, _ := call(t, cs, "input", map[string]any{"action": "ttl", "id": id, "ttl_minutes": 30})
	if !strings.Contains(text, `"ttl_remaining": 1800`) {
		t.Fatalf("ttl: %s", text)
	}
	callErr(t, cs, "input", map[string]any{"action": "ttl", "id": id, "ttl_minutes": 5, "extend_minutes": 5}, store.CodeInvalidData)
	c.Add(25 * time.Minute)
	if out := list(map[string]any{"action": "list"}); !strings.Contains(out, "expiring_soon") || !strings.Contains(out, "⚠️ expiring soon") {
		t.Fatalf("list near expiry:\n%s", out)
	}
	c.Add(5 * time.Minute)
	if out := list(map[string]any{"action": "list"}); strings.Contains(out, id) {
		t.Fatalf("the default list shows an expired pack:\n%s", out)
	}
	if out := list(map[string]any{"action": "list", "freshness": "expired"}); !strings.Contains(out, id) || !strings.Contains(out, "⚠️ expired at") {
		t.Fatalf("freshness=expired list:\n%s", out)
	}
	callErr(t, cs, "output", map[string]any{"action": "read", "id": id}, store.CodeExpired)
	out, isErr := call(t, cs, "output", map[string]any{"action": "read", "name": "pr-42", "freshness": "expired"})
	if isErr || legend(out, "freshness_state") != "expired" || legend(out, "warning") == "" {
		t.Fatalf("read within the grace:\n%s", out)
	}
	// The grace is 900 s by default: one second before its end the pack is
	// readable, at its end it is gone.
	c.Add(899 * time.Second)
	if _, isErr := call(t, cs, "output", map[string]any{"action": "read", "id": id, "freshness": "expired"}); isErr {
		t.Fatal("unreadable before the end of the grace")
	}
	c.Add(time.Second)
	e := callErr(t, cs, "output", map[string]any{"action": "read", "id": id, "freshness": "expired"}, store.CodeNotFound)
	if e.Details["reason"] != "expired_past_grace" {
		t.Fatalf("past the grace: %+v", e)
	}
	if out := list(map[string]any{"action": "list", "freshness": "expired"}); strings.Contains(out, id) {
		t.Fatalf("an unavailable pack is listed:\n%s", out)
	}
}

func TestNameResolutionTie(t *testing.T) {
	cs, _, c, id := session(t)
	// A document-only entry named like the pack, created at the same
	// instant with the same revision: the name is ambiguous.
	text, isErr := call(t, cs, "input", map[string]any{"action": "write", "name": "pr-42", "document": map[string]any{"scope": "notes"}})
	if isErr {
		t.Fatal(text)
	}
	var created struct {
		Entry store.View `json:"entry"`
	}
	if err := json.Unmarshal([]byte(text), &created); err != nil {
		t.Fatal(err)
	}
	// The pack entry is revision 1 at the store time; so is the new one.
	e := callErr(t, cs, "output", map[string]any{"action": "read", "name": "pr-42"}, store.CodeAmbiguous)
	want := []string{id, created.Entry.ID}
	sort.Strings(want)
	if fmt.Sprint(e.Details["candidate_ids"]) != fmt.Sprint(want) {
		t.Fatalf("candidate_ids %v, want %v", e.Details["candidate_ids"], want)
	}
	callErr(t, cs, "input", map[string]any{"action": "delete", "name": "pr-42"}, store.CodeAmbiguous)
	// A later update breaks the tie by updated_at.
	c.Add(time.Second)
	if text, isErr := call(t, cs, "input", map[string]any{"action": "write", "id": id, "expected_revision": 1, "document": map[string]any{"scope": "x"}}); isErr {
		t.Fatal(text)
	}
	out, isErr := call(t, cs, "output", map[string]any{"action": "read", "name": "pr-42"})
	if isErr || legend(out, "pack_id") != id || legend(out, "selected_by") != store.SelectedByUpdatedAt || legend(out, "selected_revision") != "2" {
		t.Fatalf("after the update:\n%s", out)
	}
}

func TestContractRejectsLegacy(t *testing.T) {
	cs, _, _, id := session(t)
	for _, tc := range []struct {
		tool   string
		args   map[string]any
		detail string
		value  any
	}{
		{"output", map[string]any{"action": "get", "id": id}, "supported_action", "read"},
		{"output", map[string]any{"action": "read", "id": id, "mode": "full"}, "supported_field", "profile"},
		{"output", map[string]any{"action": "read", "id": id, "cursor": "x"}, "supported_field", "page_token"},
		{"output", map[string]any{"action": "read", "id": id, "match": "TODO"}, "supported_field", "contains"},
		{"output", map[string]any{"action": "read", "id": id, "format": "json"}, "unsupported_field", "format"},
		{"output", map[string]any{"action": "write", "id": id}, "supported_tool", "input"},
		{"input", map[string]any{"action": "write", "id": id, "op": "set", "document": map[string]any{}}, "supported_field", "document"},
		{"input", map[string]any{"action": "update", "id": id}, "supported_action", "write"},
		{"input", map[string]any{"action": "finalize", "id": id}, "supported_action", "write"},
		{"input", map[string]any{"action": "list", "limit": 3}, "unsupported_field", "limit"},
		{"input", map[string]any{"id": id}, "required_fields", nil},
		{"input", map[string]any{"action": "delete"}, "required_fields", nil},
		{"output", map[string]any{"action": "read"}, "required_fields", nil},
		{"input", map[string]any{"action": "write", "id": id, "expected_revision": "1", "document": map[string]any{}}, "expected_type", "integer"},
	} {
		e := callErr(t, cs, tc.tool, tc.args, store.CodeInvalidData)
		if e.Kind != "validation" {
			t.Errorf("%v: kind %s", tc.args, e.Kind)
		}
		got, ok := e.Details[tc.detail]
		if !ok || (tc.value != nil && got != tc.value) {
			t.Errorf("%s %v: details %v, want %s=%v (%s)", tc.tool, tc.args, e.Details, tc.detail, tc.value, e.Message)
		}
	}
}

// The query tool answers seed 003's query pack; bad arguments get the
// error contract.
func TestQueryTool(t *testing.T) {
	cs, _, _, _ := session(t)
	text, isErr := call(t, cs, "query", map[string]any{"query": "greeting", "commit": "HEAD", "max_chars": 3000})
	if isErr {
		t.Fatalf("query: %s", text)
	}
	var qp pack.QueryPack
	if err := json.Unmarshal([]byte(text), &qp); err != nil {
		t.Fatal(err)
	}
	if len(qp.Items) == 0 || qp.Items[0].Symbol != "greeting" || qp.Items[0].File != "main.go" || qp.Budget.MaxChars != 3000 || qp.Budget.UsedChars > 3000 {
		t.Fatalf("query pack = %+v", qp)
	}
	callErr(t, cs, "query", map[string]any{"query": "greeting", "match": "x"}, "invalid_data")
	callErr(t, cs, "query", map[string]any{"query": " "}, "invalid_data")
}
