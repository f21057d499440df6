package transparency

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pack/schema"
	"github.com/ctxpack/ctxpack/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// rangeFixture is a repository whose range main~3..main adds files of every
// kind and a secret that a later commit removes again.
func rangeFixture(t *testing.T) (dir, base, head string, commits []string) {
	t.Helper()
	r := newFixture(t)
	r.Write("README.md", "# demo\n")
	r.Write("main.go", "package main\n\nfunc main() {}\n")
	base = r.Commit("initial")
	r.Write("config.yml", "token: FAKESECRETABCDEFGHIJKL\nname: demo\n")
	commits = append(commits, r.Commit("add config with a secret"))
	r.Write("config.yml", "name: demo\n")
	r.Write(".env", "PASSWORD=hunter2\n")
	r.WriteBytes("logo.png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	commits = append(commits, r.Commit("remove the secret, add binary and .env"))
	r.Write("main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"FAKESECRETZYXWVUTSRQPO\") }\n")
	r.Write("node_modules/x/index.js", "module.exports = 1\n")
	commits = append(commits, r.Commit("print a secret, vendor a module"))
	return r.Dir, base, r.Git("rev-parse", "HEAD"), commits
}

func TestBuildDeterministicAndValid(t *testing.T) {
	dir, base, head, commits := rangeFixture(t)
	rec1, res := recordFor(t, dir, base, head, "")
	rec2, _ := recordFor(t, dir, base, head, "")
	b1, b2 := mustValid(t, rec1), mustValid(t, rec2)
	if !bytes.Equal(b1, b2) {
		t.Fatalf("two builds differ:\n%s\n%s", b1, b2)
	}
	if rec1.Digest() != rec2.Digest() || !strings.HasPrefix(rec1.Digest(), "sha256:") {
		t.Fatalf("digests: %q %q", rec1.Digest(), rec2.Digest())
	}
	if rec1.Digest() != DigestOf(b1) {
		t.Fatal("Digest is not the digest of the canonical JSON")
	}
	if !IsCanonical(b1) {
		t.Fatal("record bytes are not canonical")
	}
	back, err := ParseRecord(b1)
	if err != nil {
		t.Fatal(err)
	}
	if back.Digest() != rec1.Digest() {
		t.Fatal("parse and re-serialize changed the record")
	}

	// The record accounts for every file and mirrors the pack.
	if len(rec1.Ledger) != res.Pack.Metadata.TotalFilesScanned {
		t.Fatalf("ledger has %d rows, snapshot %d files", len(rec1.Ledger), res.Pack.Metadata.TotalFilesScanned)
	}
	info := rec1.ContextPackInfo
	if info.FilesIncluded+info.FilesExcluded != info.FilesScanned || info.Type != "full" {
		t.Fatalf("context_pack_info: %+v", info)
	}
	if info.ExclusionsByReason.Credentials < 1 || info.ExclusionsByReason.Binary < 1 || info.ExclusionsByReason.Pattern < 1 {
		t.Fatalf("exclusions_by_reason: %+v (want .env, logo.png, node_modules)", info.ExclusionsByReason)
	}
	if rec1.PackID != res.Pack.PackID || rec1.Digests.PackSHA256 != DigestOf(res.JSON) {
		t.Fatal("pack id or pack digest not taken from the pack")
	}
	if rec1.Source.Head != head || rec1.CreatedAt == "" {
		t.Fatalf("source %+v created_at %q", rec1.Source, rec1.CreatedAt)
	}
	if len(rec1.Changes) != len(res.Pack.Changes) {
		t.Fatalf("changes: %d rows, pack %d", len(rec1.Changes), len(res.Pack.Changes))
	}

	// Secrets: content/diff findings first, then history in commit order.
	var history []SecretRow
	sawHistory := false
	for _, s := range rec1.Secrets {
		if s.Where == WhereHistory {
			sawHistory = true
			history = append(history, s)
		} else if sawHistory {
			t.Fatalf("content finding after history findings: %+v", rec1.Secrets)
		}
		if strings.Contains(s.Fingerprint+s.Path+s.RuleID, "FAKESECRET") {
			t.Fatalf("a secret value leaked into the record: %+v", s)
		}
	}
	if len(history) != 2 || history[0].Commit != commits[0] || history[1].Commit != commits[2] {
		t.Fatalf("history findings: %+v", history)
	}
	if bytes.Contains(b1, []byte("FAKESECRET")) {
		t.Fatal("a secret value is in the record")
	}
	if rec1.Verdict == nil || rec1.Verdict.Status != audit.StatusFail {
		t.Fatalf("verdict: %+v", rec1.Verdict)
	}
}

func TestBuildDoesNotModifyInput(t *testing.T) {
	in := syntheticInput()
	before, _ := json.Marshal(in.Verdict)
	ledger0 := append([]string{}, in.Result.Ledger[0].RuleIDs...)
	Build(in)
	after, _ := json.Marshal(in.Verdict)
	if !bytes.Equal(before, after) || !reflect.DeepEqual(ledger0, in.Result.Ledger[0].RuleIDs) {
		t.Fatal("Build changed its input")
	}
}

func TestContextPackInfoMapping(t *testing.T) {
	tests := []struct {
		name   string
		counts map[pack.Reason]int
		want   ExclusionsByReason
	}{
		{"empty", nil, ExclusionsByReason{}},
		{"seed reasons", map[pack.Reason]int{pack.ReasonCredentials: 2, pack.ReasonBinary: 3, pack.ReasonSizeLimit: 4, pack.ReasonPatternMatch: 5},
			ExclusionsByReason{Credentials: 2, Binary: 3, Size: 4, Pattern: 5}},
		{"everything else is pattern", map[pack.Reason]int{pack.ReasonDependencyDir: 1, pack.ReasonBuildOutput: 1, pack.ReasonCache: 1,
			pack.ReasonSymlink: 1, pack.ReasonSubmodule: 1, pack.ReasonPolicy: 1, pack.ReasonDeleted: 1},
			ExclusionsByReason{Pattern: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &pack.Pack{Type: "summary", Metadata: pack.Metadata{ExclusionsByReason: tt.counts}}
			got := contextPackInfo(p)
			if got.ExclusionsByReason != tt.want {
				t.Fatalf("got %+v, want %+v", got.ExclusionsByReason, tt.want)
			}
			if got.Type != "summary" {
				t.Fatalf("type %q", got.Type)
			}
		})
	}
}

func TestNormalizeDigest(t *testing.T) {
	hex := strings.Repeat("0f", 32)
	for in, want := range map[string]string{
		hex:                              "sha256:" + hex,
		"sha256:" + hex:                  "sha256:" + hex,
		"sha256:" + strings.ToUpper(hex): "sha256:" + hex,
		"":                               "",
		"gitleaks-default-v8.30.1":       "gitleaks-default-v8.30.1",
		"  " + hex + "\n":                "sha256:" + hex,
	} {
		if got := normalizeDigest(in); got != want {
			t.Errorf("normalizeDigest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseRecordStrict(t *testing.T) {
	data := mustValid(t, Build(syntheticInput()))
	tests := []struct {
		name string
		data string
		ok   bool
	}{
		{"canonical", string(data), true},
		{"unknown field", strings.Replace(string(data), `{"record_version":1,`, `{"record_version":1,"extra":true,`, 1), false},
		{"other version", strings.Replace(string(data), `"record_version":1`, `"record_version":2`, 1), false},
		{"trailing data", string(data) + "{}", false},
		{"not json", "hello", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRecord([]byte(tt.data))
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
	spaced := strings.Replace(string(data), `"record_version":1`, `"record_version": 1`, 1)
	if _, err := ParseRecord([]byte(spaced)); err != nil || IsCanonical([]byte(spaced)) {
		t.Fatalf("a re-spaced record parses (%v) but is not canonical", err)
	}
}

func TestRecordSchemaRejects(t *testing.T) {
	good := mustValid(t, Build(syntheticInput()))
	var doc map[string]any
	if err := json.Unmarshal(good, &doc); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(m map[string]any)
	}{
		{"missing ledger", func(m map[string]any) { delete(m, "ledger") }},
		{"bad pack id", func(m map[string]any) { m["pack_id"] = "pk_UPPER123" }},
		{"bad previous", func(m map[string]any) { m["previous"] = "md5:abc" }},
		{"excluded without reason", func(m map[string]any) {
			row := m["ledger"].([]any)[1].(map[string]any)
			delete(row, "reason")
		}},
		{"history secret without commit", func(m map[string]any) {
			for _, s := range m["secrets"].([]any) {
				if s.(map[string]any)["where"] == "history" {
					delete(s.(map[string]any), "commit")
				}
			}
		}},
		{"unknown verdict status", func(m map[string]any) { m["verdict"].(map[string]any)["status"] = "maybe" }},
		{"secret value field", func(m map[string]any) { m["secrets"].([]any)[0].(map[string]any)["secret"] = "x" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			_ = json.Unmarshal(good, &m)
			tt.mutate(m)
			data, _ := json.Marshal(m)
			if err := schema.ValidateRecord(data); err == nil {
				t.Fatal("schema accepted an invalid record")
			}
		})
	}
	// A record of an unaudited pack has a null verdict, which is valid.
	in := syntheticInput()
	in.Verdict = nil
	mustValid(t, Build(in))
}

// syntheticInput is a hand-made pack result: the golden record depends only
// on the record's own code, not on the pack builder.
func syntheticInput() BuildInput {
	p := &pack.Pack{
		SchemaVersion: pack.SchemaVersion,
		PackID:        "pk_abcdefgh",
		Type:          "full",
		Source: pack.Source{Repository: "demo", Kind: "git", Trigger: "range",
			Head: strings.Repeat("1", 40), Base: strings.Repeat("2", 40), Tree: strings.Repeat("3", 40), Ref: "main", Scope: policy.ScopeChange},
		Changes: []pack.Change{
			{Path: "src/<img src=x onerror=alert(1)>.go", Status: "added", Added: 3, Diff: "@@ -0,0 +1,3 @@\n+x\n", DiffTruncated: true,
				Redactions: []pack.Redaction{{Line: 2, RuleID: "generic-api-key"}}},
			{Path: ".env", Status: "modified", Added: 1, Deleted: 1, DiffWithheld: pack.ReasonCredentials},
			{Path: "logo.png", Status: "renamed", OldPath: "img/logo.png", Binary: true},
		},
		Metadata: pack.Metadata{
			PackType: "full", SelectionReason: "full pack fits the limits", CreatedAt: "2023-11-14T22:13:20Z",
			TotalFilesScanned: 4, FilesIncluded: 1, FilesExcluded: 3, TotalContentBytes: 120, TruncatedFiles: 1,
			ExclusionsByReason: map[pack.Reason]int{pack.ReasonCredentials: 1, pack.ReasonBinary: 1, pack.ReasonDependencyDir: 1},
			ToolVersion:        "1.2.3",
		},
	}
	sha := func(c string) string { return strings.Repeat(c, 64) }
	res := &pack.Result{
		Pack: p,
		JSON: []byte("{\"pack_id\":\"pk_abcdefgh\"}\n"),
		Ledger: []pack.LedgerRow{
			{Path: "src/<img src=x onerror=alert(1)>.go", Included: true, Role: pack.RolePrimary, BytesOriginal: new(int64(400)), BytesSent: 120,
				SHA256Original: sha("a"), SHA256Sent: sha("b"), Blob: strings.Repeat("4", 40), Truncated: true, Redactions: 2,
				RuleIDs: []string{"z-rule", "generic-api-key"}},
			{Path: ".env", Reason: pack.ReasonCredentials, Detail: ".env", BytesOriginal: new(int64(17)), RuleIDs: []string{}},
			{Path: "logo.png", Reason: pack.ReasonBinary, Detail: "binary content", BytesOriginal: new(int64(16)), SHA256Original: sha("c"), Blob: strings.Repeat("5", 40)},
			{Path: "node_modules/x/index.js", Reason: pack.ReasonDependencyDir, Detail: "node_modules/", BytesOriginal: new(int64(19)), RuleIDs: []string{}},
		},
		Secrets: []pack.SecretEvent{
			{Finding: pack.Finding{RuleID: "z-rule", Path: "src/<img src=x onerror=alert(1)>.go", StartLine: 9, Fingerprint: "fp-3"}, Where: WhereContent, Action: pack.SecretRedacted},
			{Finding: pack.Finding{RuleID: "generic-api-key", Path: "src/<img src=x onerror=alert(1)>.go", StartLine: 2, Fingerprint: "fp-1"}, Where: WhereContent, Action: pack.SecretRedacted},
			{Finding: pack.Finding{RuleID: "generic-api-key", Path: "src/<img src=x onerror=alert(1)>.go", StartLine: 2, Fingerprint: "fp-2"}, Where: WhereDiff, Action: pack.SecretRedacted},
		},
	}
	v := audit.NewVerdict()
	v.Fail(audit.Check{Kind: audit.KindSecret, Code: audit.CodeSecretInHistory, Message: "b: secret in history", Details: map[string]any{"commits": 2, "rules": []string{"aws-access-token"}}})
	v.Fail(audit.Check{Kind: audit.KindPolicy, Code: audit.CodeOverTier, Message: "a: over tier"})
	v.Warn(audit.Check{Kind: audit.KindInternal, Code: "history_scan_skipped", Message: "warning"})
	c1, c2 := strings.Repeat("7", 40), strings.Repeat("6", 40)
	return BuildInput{
		Result:          res,
		PolicyDigest:    "sha256:" + sha("d"),
		GitleaksVersion: "v8.30.1",
		GitleaksRules:   222,
		RulesDigest:     sha("e"),
		// Commit order as given: c1 (7777…) before c2 (6666…), whatever their hex.
		History: []pack.Finding{
			{RuleID: "aws-access-token", Path: "b.txt", Commit: c1, StartLine: 3, Fingerprint: c1 + ":b.txt:aws-access-token:3"},
			{RuleID: "aws-access-token", Path: "a.txt", Commit: c2, StartLine: 1, Fingerprint: c2 + ":a.txt:aws-access-token:1"},
			{RuleID: "aws-access-token", Path: "a.txt", Commit: c1, StartLine: 7, Fingerprint: c1 + ":a.txt:aws-access-token:7"},
		},
		HistoryAction: "reported",
		Verdict:       v,
		Previous:      "sha256:" + sha("f"),
	}
}

func TestGoldenRecord(t *testing.T) {
	rec := Build(syntheticInput())
	data := mustValid(t, rec)
	// Order checks the golden file makes visible, stated here as well.
	wantOrder := []string{"content:2:fp-1", "diff:2:fp-2", "content:9:fp-3"}
	for i, s := range rec.Secrets[:3] {
		if got := s.Where + ":" + itoa(s.Line) + ":" + s.Fingerprint; got != wantOrder[i] {
			t.Fatalf("secret %d = %s, want %s", i, got, wantOrder[i])
		}
	}
	if h := rec.Secrets[3:]; h[0].Path != "a.txt" || h[0].Commit != strings.Repeat("7", 40) || h[1].Path != "b.txt" || h[2].Commit != strings.Repeat("6", 40) {
		t.Fatalf("history order: %+v", h)
	}
	if rec.Verdict.Failed[0].Code != audit.CodeOverTier {
		t.Fatalf("verdict not sorted: %+v", rec.Verdict.Failed)
	}
	golden := filepath.Join("testdata", "record.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGoldenRecord -update)", err)
	}
	if !bytes.Equal(data, want) {
		t.Fatalf("record differs from %s (run with -update if intended):\ngot  %s\nwant %s", golden, data, want)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
