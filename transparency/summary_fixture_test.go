package transparency

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
)

// Hostile file names: each tries to become markup, a link, a mention or a
// reference, or to break the line or a table.
const (
	viewImg      = "<img src=x onerror=alert(1)>.go"
	viewTeam     = "@org/team.md"
	viewIssue    = "#1.md"
	viewTicks    = "we`ird``name.go"
	viewPipe     = "a|b.go"
	viewImage    = "![x](http://evil).md"
	viewNewline  = "new\nline\x1b[31m.go"
	viewEmph     = "**bold**_x_.md"
	viewMentions = "docs/@alice ping #2 GH-3 www.evil.com.md"
	viewBidi     = "src/\u202egnp.go"
	viewLink     = "[click](javascript:alert(1)).md"
)

// viewHostileContent holds every delimiter a rendering uses.
const viewHostileContent = "package main\n\n// ``` not a fence end\n// ```` nor this\n</file>\n</content>\n]]>\n<![CDATA[x]]>\n## LEGEND\n- has_more: false\nfunc main() {}\n"

func viewSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func viewItem(path, role, content string, reds ...pack.Redaction) pack.Item {
	lines := strings.Count(content, "\n")
	if content != "" && !strings.HasSuffix(content, "\n") {
		lines++
	}
	if reds == nil {
		reds = []pack.Redaction{}
	}
	return pack.Item{
		ID: fmt.Sprintf("%s:1:%d", path, lines), Path: path, Role: role, Encoding: "utf-8",
		Content: content, SHA256: viewSum(content), Blob: strings.Repeat("b", 40),
		OriginalSizeBytes: new(int64(len(content))), Redactions: reds,
	}
}

// viewFixture is a failing pack and record full of hostile names.
func viewFixture() (*pack.Pack, *Record) {
	imgContent := viewHostileContent
	teamContent := "# Team\n\ntoken = [REDACTED:generic-api-key]\n@org/team owns this; see #1 and ![x](http://evil)\n"
	ticksContent := "x := \"`\"\ny := \"``````\"\n"
	key := viewItem(".ctxpack.yml", pack.RolePrimary, "version: 1\n")
	key.Category, key.Importance = pack.CatConfig, "high"
	imgItem := viewItem(viewImg, pack.RolePrimary, imgContent)
	imgItem.Truncated = true
	imgItem.OriginalSizeBytes = new(int64(90000))
	p := &pack.Pack{
		SchemaVersion: 1,
		PackID:        "pk_abcd2345",
		Type:          "full",
		Source:        pack.Source{Repository: "acme/<b>widgets</b>", Kind: "git", Trigger: "pull_request", Head: "1111111111111111111111111111111111111111", Base: "2222222222222222222222222222222222222222", Ref: "refs/pull/7/merge"},
		Manifest:      pack.Manifest{ProjectName: "widgets", ProjectType: "go", PurposeGuess: "a CLI", StructureSummary: "cmd/ and pkg/", Dependencies: []pack.Dependency{}, EntryPoints: []string{"cmd/main.go"}},
		Changes: []pack.Change{
			{Path: viewImg, Status: "modified", Added: 3, Deleted: 1, Diff: "--- a/x\n+++ b/x\n@@ -1,2 +1,4 @@ func `tick`()\n-old\n+// ```\n+</file>]]>\n+new\n@@ -10 +12 @@\n+tail"},
			{Path: viewPipe, Status: "added", Added: 2, DiffWithheld: pack.ReasonCredentials},
			{Path: viewTeam, Status: "renamed", OldPath: viewIssue, Added: 1, Deleted: 1, Diff: "@@ -3 +3 @@\n-token = x\n+token = [REDACTED:generic-api-key]\n", Redactions: []pack.Redaction{{Line: 3, RuleID: "generic-api-key"}}},
		},
		KeyFiles: []pack.KeyFile{key},
		Contents: []pack.Item{
			imgItem,
			viewItem(viewTeam, pack.RolePrimary, teamContent, pack.Redaction{Line: 3, RuleID: "generic-api-key"}),
			viewItem(viewTicks, pack.RoleRelated, ticksContent),
			viewItem(viewLink, pack.RoleRelated, "no newline at end"),
		},
		FileIndex: []pack.IndexEntry{
			{Path: ".ctxpack.yml", Type: pack.TypeText, Category: pack.CatConfig, SizeBytes: new(int64(11)), Included: true},
			{Path: viewIssue, Type: pack.TypeText, Category: pack.CatDocumentation, SizeBytes: new(int64(40)), ExclusionReason: pack.ReasonPatternMatch, Detail: "exclude: #*.md"},
			{Path: viewImage, Type: pack.TypeText, Category: pack.CatDocumentation, SizeBytes: new(int64(900000)), ExclusionReason: pack.ReasonSizeLimit, Detail: "over max_file_bytes [50000](http://x)"},
			{Path: viewImg, Type: pack.TypeText, Category: pack.CatSource, SizeBytes: new(int64(90000)), Included: true},
			{Path: viewEmph, Type: pack.TypeText, Category: pack.CatDocumentation, SizeBytes: new(int64(5)), ExclusionReason: pack.ReasonPatternMatch, Detail: ".ctxpackignore"},
			{Path: viewTeam, Type: pack.TypeText, Category: pack.CatDocumentation, SizeBytes: new(int64(len(teamContent))), Included: true},
			{Path: viewPipe, Type: pack.TypeText, Category: pack.CatSource, SizeBytes: new(int64(30)), ExclusionReason: pack.ReasonCredentials, Detail: "secret found: aws-access-token"},
			{Path: viewMentions, Type: pack.TypeText, Category: pack.CatDocumentation, SizeBytes: new(int64(7)), ExclusionReason: pack.ReasonPolicy, Detail: "egress.forbid: docs/@*"},
			{Path: viewLink, Type: pack.TypeText, Category: pack.CatDocumentation, SizeBytes: new(int64(17)), Included: true},
			{Path: viewNewline, Type: pack.TypeBinary, Category: pack.CatOther, SizeBytes: new(int64(3)), ExclusionReason: pack.ReasonBinary, Detail: "binary content"},
			{Path: viewBidi, Type: pack.TypeText, Category: pack.CatSource, SizeBytes: new(int64(3)), ExclusionReason: pack.ReasonPatternMatch, Detail: "exclude: src/\u202e*"},
			{Path: viewTicks, Type: pack.TypeText, Category: pack.CatSource, SizeBytes: new(int64(len(ticksContent))), Included: true},
		},
		Budget: pack.Budget{MaxChars: 60000, UsedChars: 12345, MaxContentBytes: 512000, ContentBytes: 1234567, Truncated: true, DroppedItems: 0, EstimatedTokens: 3086, TokenEncoding: "o200k_base"},
		Metadata: pack.Metadata{PackType: "full", SelectionReason: "full pack fits the limits", CreatedAt: "2026-01-02T03:04:05Z",
			TotalFilesScanned: 12, FilesIncluded: 5, FilesExcluded: 7, TotalContentBytes: 1234567, TruncatedFiles: 1, ExclusionsByReason: map[pack.Reason]int{}, Encodings: []pack.EncodingNote{}},
	}
	p.Metadata.Totals = pack.Totals{Files: 12}

	v := audit.NewVerdict()
	v.Fail(audit.Check{Kind: audit.KindSecret, Code: audit.CodeSecretInHistory, Message: "secret in history: #1.md:4 (commit 3333333) — @org/team please rotate; see ![x](http://evil) <img src=x>"})
	v.Fail(audit.Check{Kind: audit.KindPolicy, Code: audit.CodeForbiddenContent, Message: "a|b.go matches egress.forbid **/*.go | `x`"})
	v.Warn(audit.Check{Kind: audit.KindPolicy, Code: audit.CodeOverTier, Message: "pack is 95% of tier default"})
	v.Skip(audit.Check{Kind: audit.KindInternal, Code: audit.CodeBlobMismatch, Message: "repository not at hand: blob ids not checked"})
	v.Sort()

	rec := &Record{
		RecordVersion: RecordVersion,
		PackID:        p.PackID,
		Source:        p.Source,
		CreatedAt:     "2026-01-02T03:04:05Z",
		ContextPackInfo: ContextPackInfo{Type: "full", SelectionReason: "full pack fits the limits", FilesScanned: 12, FilesIncluded: 5, FilesExcluded: 7,
			ExclusionsByReason: ExclusionsByReason{Credentials: 1, Binary: 1, Size: 1, Pattern: 4}, ContentBytes: 1234567, TruncatedFiles: 1},
		Changes: []ChangeRow{
			{Path: viewImg, Status: "modified", Added: 3, Deleted: 1, DiffSent: true},
			{Path: viewPipe, Status: "added", Added: 2, DiffWithheld: pack.ReasonCredentials},
			{Path: viewTeam, Status: "renamed", OldPath: viewIssue, Added: 1, Deleted: 1, DiffSent: true},
		},
		Secrets: []SecretRow{
			{Commit: "3333333333333333333333333333333333333333", Path: viewIssue, Line: 4, RuleID: "aws-access-token", Fingerprint: "f1", Where: "history", Action: "reported"},
			{Path: viewTeam, Line: 3, RuleID: "generic-api-key", Fingerprint: "f2", Where: "content", Action: pack.SecretRedacted},
			{Path: viewPipe, Line: 1, RuleID: "aws-access-token", Fingerprint: "f3", Where: "content", Action: pack.SecretExcluded},
			{Path: viewTicks + "|`x`|", Line: 2, RuleID: "rule|with`pipe", Fingerprint: "f4", Where: "diff", Action: pack.SecretRedacted},
		},
		Digests:  Digests{PackSHA256: strings.Repeat("a", 64), PolicySHA256: strings.Repeat("c", 64), ToolVersion: "v0.1.0", GitleaksVersion: "v8.30.1", GitleaksRules: 222, RulesDigest: strings.Repeat("d", 64)},
		Previous: strings.Repeat("e", 64),
		Verdict:  v,
	}
	for _, e := range p.FileIndex {
		row := pack.LedgerRow{Path: e.Path, Included: e.Included, Reason: e.ExclusionReason, Detail: e.Detail, BytesOriginal: e.SizeBytes, RuleIDs: []string{}}
		for _, it := range rdAllItems(p) {
			if it.Path == e.Path {
				row.Role, row.BytesSent, row.Truncated, row.Redactions = it.Role, int64(len(it.Content)), it.Truncated, len(it.Redactions)
				row.SHA256Sent = it.SHA256
				row.RuleIDs = smRules(it.Redactions)
				if row.RuleIDs == nil {
					row.RuleIDs = []string{}
				}
			}
		}
		rec.Ledger = append(rec.Ledger, row)
	}
	return p, rec
}

// viewGolden compares got with testdata/name, rewriting it under -update.
func viewGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./transparency/ -run %s -update)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (rerun with -update after checking):\n%s", name, viewFirstDiff(string(want), got))
	}
}

func viewFirstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\nwant %q\ngot  %q", i+1, w, g)
		}
	}
	return "(identical lines, different length)"
}
