package pack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
)

// recordingScanner finds FAKESECRET tokens and records every path it was
// given, so a test can tell what a build scanned.
type recordingScanner struct {
	mu      sync.Mutex
	scanned map[string]int
	// last is the last text scanned under each path.
	last map[string]string
}

var fakeSecret = regexp.MustCompile(`FAKESECRET[0-9A-Z]{12}`)

func (s *recordingScanner) Scan(_ context.Context, path string, content []byte) ([]pack.Finding, error) {
	s.mu.Lock()
	s.scanned[path]++
	if s.last == nil {
		s.last = map[string]string{}
	}
	s.last[path] = string(content)
	s.mu.Unlock()
	var out []pack.Finding
	for _, m := range fakeSecret.FindAllIndex(content, -1) {
		line := strings.Count(string(content[:m[0]]), "\n") + 1
		out = append(out, pack.Finding{RuleID: "fake-secret", Path: path, StartLine: line, EndLine: line,
			Fingerprint: path + ":fake-secret", Start: m[0], End: m[1]})
	}
	return out, nil
}

// A change pack scans the files it may send (the changed files, key files,
// the rest of the snapshot, relations) and not the unchanged boilerplate it
// lists but never sends; what it sends is scanned and redacted as before.
func TestChangePackScansWhatItMaySend(t *testing.T) {
	g := changeRepo(t)
	// A secret in an unchanged key file the pack sends.
	g.Write("README.md", "# shop\n\nShop keeps orders in a store.\ntoken: FAKESECRET0123456789AB\n")
	g.Commit("readme")
	g.Write("store/store.go", storeGo("\tif k == \"x\" {\n\t\treturn errEmpty\n\t}\n\ts.rows[k] = v\n\treturn nil\n"))
	g.Commit("store: refuse x")

	ctx := context.Background()
	snap := lastCommitSnapshot(t, g.Dir)
	sc := &recordingScanner{scanned: map[string]int{}}
	res, err := pack.Build(ctx, snap, pack.Options{Policy: policy.Default(), Scanner: sc, ToolVersion: "0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]pack.LedgerRow{}
	for _, r := range res.Ledger {
		listed[r.Path] = r
	}
	for _, tc := range []struct {
		path        string
		wantScanned bool
		wantReason  pack.Reason
	}{
		{"store/store.go", true, ""},
		{"README.md", true, ""},
		{"go.mod", true, ""},
		{"LICENSE", false, pack.ReasonBoilerplate},
		{"CHANGELOG.md", false, pack.ReasonBoilerplate},
	} {
		row, ok := listed[tc.path]
		if !ok {
			t.Errorf("%s: not in the ledger", tc.path)
			continue
		}
		if got := sc.scanned[tc.path] > 0; got != tc.wantScanned {
			t.Errorf("%s: scanned = %v, want %v", tc.path, got, tc.wantScanned)
		}
		if row.Reason != tc.wantReason {
			t.Errorf("%s: reason %q, want %q", tc.path, row.Reason, tc.wantReason)
		}
	}
	if strings.Contains(string(res.JSON), "FAKESECRET") {
		t.Error("the pack holds the secret of README.md")
	}
	readme, ok := item(res.Pack, "README.md")
	if !ok || !strings.Contains(readme.Content, "[REDACTED:fake-secret]") || readme.OriginalWithheld != pack.WithheldSecret {
		t.Errorf("README.md: sent %v, content %q, original_withheld %q; want it redacted and its original withheld", ok, readme.Content, readme.OriginalWithheld)
	}
}

// The last scan of a Summary pack's fields is of the very document the audit
// scans in the written pack (so the scan cache answers the audit's scan).
func TestSummaryScansTheAuditsDocument(t *testing.T) {
	for _, tc := range []struct {
		name   string
		secret bool // a secret in a file the summary describes
	}{
		{"clean", false},
		{"secret in a file", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := changeRepo(t)
			if tc.secret {
				g.Write("api/keys.go", "package api\n\n// Key is the API key.\nconst Key = \"FAKESECRET0123456789AB\"\n")
				g.Commit("keys")
			}
			ctx := context.Background()
			repo, err := source.Open(g.Dir)
			if err != nil {
				t.Fatal(err)
			}
			defer repo.Close()
			snap, err := repo.Commit(ctx, "HEAD", policy.ScopeTree)
			if err != nil {
				t.Fatal(err)
			}
			snap.Changes = nil // the tree as it is
			pol := policy.Default()
			pol.Pack.Type = policy.TypeSummary
			built := &recordingScanner{scanned: map[string]int{}}
			res, err := pack.Build(ctx, snap, pack.Options{Policy: pol, Scanner: built, ToolVersion: "0.0.0-test"})
			if err != nil {
				t.Fatal(err)
			}
			var written pack.Pack
			if err := json.Unmarshal(res.JSON, &written); err != nil {
				t.Fatal(err)
			}
			audited := &recordingScanner{scanned: map[string]int{}}
			if found, failed := audit.PackSecrets(ctx, audited, &written); len(found)+len(failed) > 0 {
				t.Fatalf("audit: %d found, %d failed", len(found), len(failed))
			}
			const fields = "(pack fields)"
			want, got := audited.last[fields], built.last[fields]
			if want == "" || got != want {
				t.Errorf("the builder last scanned %d bytes of pack fields, the audit %d: they differ", len(got), len(want))
			}
		})
	}
}

// Under secrets.action exclude a manifest that holds a secret is excluded
// before it is read for the manifest, in a change pack as in any other
// (a change pack scans files late; the manifest must not read one first).
func TestChangePackManifestOfExcludedFile(t *testing.T) {
	for _, tc := range []struct {
		action   string
		wantRead bool
	}{
		{policy.ActionRedact, true},
		{policy.ActionExclude, false},
	} {
		t.Run(tc.action, func(t *testing.T) {
			g := changeRepo(t)
			g.Write("go.mod", "module example.com/shopmodule\n\n// token FAKESECRET0123456789AB\n\ngo 1.22\n\nrequire example.com/widgets v1.2.3\n")
			g.Commit("go.mod")
			g.Write("store/store.go", storeGo("\tif k == \"x\" {\n\t\treturn errEmpty\n\t}\n\ts.rows[k] = v\n\treturn nil\n"))
			g.Commit("store: refuse x")
			ctx := context.Background()
			snap := lastCommitSnapshot(t, g.Dir)
			pol := policy.Default()
			pol.Secrets.Action = tc.action
			res, err := pack.Build(ctx, snap, pack.Options{Policy: pol, Scanner: &recordingScanner{scanned: map[string]int{}}, ToolVersion: "0.0.0-test"})
			if err != nil {
				t.Fatal(err)
			}
			m, err := json.Marshal(res.Pack.Manifest)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Pack.Manifest.ProjectName == "shopmodule"; got != tc.wantRead {
				t.Errorf("manifest read go.mod: %v, want %v (manifest %s)", got, tc.wantRead, m)
			}
		})
	}
}

// Under secrets.action exclude a changed file that holds a secret outside
// its changed lines is excluded, and so is its diff: the file is scanned
// before its diff is bounded.
func TestChangePackDiffOfExcludedFile(t *testing.T) {
	for _, tc := range []struct {
		action       string
		wantWithheld pack.Reason
	}{
		{policy.ActionRedact, ""},
		{policy.ActionExclude, pack.ReasonCredentials},
	} {
		t.Run(tc.action, func(t *testing.T) {
			g := changeRepo(t)
			// The secret is far from the changed line: not in the diff's context.
			head := "package store\n\n// token FAKESECRET0123456789AB\n" + strings.Repeat("\n// padding\n", 10)
			g.Write("store/check.go", head+"\n// validKey reports whether k may be stored.\nfunc validKey(k string) bool {\n\treturn k != \"\"\n}\n")
			g.Commit("check")
			g.Write("store/check.go", head+"\n// validKey reports whether k may be stored.\nfunc validKey(k string) bool {\n\treturn k != \"\" && k != \"x\"\n}\n")
			g.Commit("store: refuse x")
			ctx := context.Background()
			snap := lastCommitSnapshot(t, g.Dir)
			pol := policy.Default()
			pol.Secrets.Action = tc.action
			res, err := pack.Build(ctx, snap, pack.Options{Policy: pol, Scanner: &recordingScanner{scanned: map[string]int{}}, ToolVersion: "0.0.0-test"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Pack.Changes) != 1 {
				t.Fatalf("%d changes, want 1", len(res.Pack.Changes))
			}
			c := res.Pack.Changes[0]
			if c.DiffWithheld != tc.wantWithheld {
				t.Errorf("diff of %s withheld %q, want %q", c.Path, c.DiffWithheld, tc.wantWithheld)
			}
			if strings.Contains(string(res.JSON), "FAKESECRET") {
				t.Error("the pack holds the secret")
			}
		})
	}
}

// lastCommitSnapshot is the change-scope snapshot of HEAD~1..HEAD in dir.
// machineBody is thirty small Go functions: an unchanged file's worth of
// tokens, so that a change pack's budget reaches only a few such files.
func machineBody() string {
	var body strings.Builder
	for i := range 30 {
		fmt.Fprintf(&body, "// step%d advances the machine by one state of %d.\nfunc step%d(s int) int { return s*%d + %d }\n\n", i, i, i, i+3, i*7)
	}
	return body.String()
}

// buildLastCommit builds the change pack of dir's last commit under the
// secrets action, with a recordingScanner.
func buildLastCommit(t *testing.T, dir, action string) (*pack.Result, *recordingScanner) {
	t.Helper()
	pol := policy.Default()
	pol.Secrets.Action = action
	sc := &recordingScanner{scanned: map[string]int{}}
	res, err := pack.Build(context.Background(), lastCommitSnapshot(t, dir), pack.Options{Policy: pol, Scanner: sc, ToolVersion: "0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	return res, sc
}

// sentItems lists a pack's items: path, lines and relationships.
func sentItems(p *pack.Pack) []string {
	var out []string
	for _, it := range append(append([]pack.Item{}, p.KeyFiles...), p.Contents...) {
		out = append(out, fmt.Sprintf("%s:%d-%d:%s", it.Path, it.StartLine, it.EndLine, strings.Join(it.Relationship, ",")))
	}
	return out
}

func lastCommitSnapshot(t *testing.T, dir string) *pack.Snapshot {
	t.Helper()
	repo, err := source.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	snap, err := repo.Range(context.Background(), "HEAD~1", "HEAD", policy.ScopeChange)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// A change pack scans an unchanged file only when its budget reaches it:
// what it sends is the same as when every file is scanned first (secrets
// action exclude scans them all, since the scan decides what is
// excluded), a file the budget never reaches is neither scanned nor
// described by a digest, and one it reaches is redacted as before.
func TestChangePackScansOnlyWhatTheBudgetReaches(t *testing.T) {
	g := changeRepo(t)
	const files = 30
	for i := range files {
		g.Write(fmt.Sprintf("m%02d.go", i), "package shop\n\n"+machineBody())
	}
	g.Commit("machine")
	g.Write("store/store.go", storeGo("\tif k == \"x\" {\n\t\treturn errEmpty\n\t}\n\ts.rows[k] = v\n\treturn nil\n"))
	g.Commit("store: refuse x")

	lazy, sc := buildLastCommit(t, g.Dir, policy.ActionRedact)
	eager, scAll := buildLastCommit(t, g.Dir, policy.ActionExclude)
	if got, want := sentItems(lazy.Pack), sentItems(eager.Pack); !slices.Equal(got, want) {
		t.Errorf("items scanned as the budget reaches them:\n%q\nevery file scanned first:\n%q", got, want)
	}
	scanned, sentFiles := 0, 0
	for i := range files {
		p := fmt.Sprintf("m%02d.go", i)
		if scAll.scanned[p] == 0 {
			t.Fatalf("%s: not scanned under exclude", p)
		}
		_, isSent := item(lazy.Pack, p)
		if isSent {
			sentFiles++
		}
		if sc.scanned[p] > 0 {
			scanned++
			continue
		}
		if isSent {
			t.Errorf("%s: sent unscanned", p)
		}
		for _, r := range lazy.Ledger {
			if r.Path == p && (r.SHA256Original != "" || r.Blob != "") {
				t.Errorf("%s: never scanned, yet its ledger row has sha256 %q blob %q", p, r.SHA256Original, r.Blob)
			}
		}
	}
	if sentFiles == 0 || scanned >= files/2 {
		t.Errorf("%d of %d unchanged files scanned, %d sent: want a few scanned, not all", scanned, files, sentFiles)
	}

	// A secret in the first file the budget reaches: sent redacted.
	g.Write("a_notes.txt", "deploy token: FAKESECRET0123456789AB\n")
	g.Commit("notes")
	g.Write("store/store.go", storeGo("\tif k == \"y\" {\n\t\treturn errEmpty\n\t}\n\ts.rows[k] = v\n\treturn nil\n"))
	g.Commit("store: refuse y")
	res, _ := buildLastCommit(t, g.Dir, policy.ActionRedact)
	notes, ok := item(res.Pack, "a_notes.txt")
	if !ok || !strings.Contains(notes.Content, "[REDACTED:fake-secret]") || strings.Contains(string(res.JSON), "FAKESECRET") || notes.OriginalWithheld != pack.WithheldSecret {
		t.Errorf("a_notes.txt: sent %v, content %q, original_withheld %q: want it sent redacted, its original withheld", ok, notes.Content, notes.OriginalWithheld)
	}
}

// Looking for the definition of a name the change calls scans only the
// file that defines it: the files that merely mention it are read, their
// definitions looked up, and scanned only if the budget reaches them
// later, like any unchanged file. What is sent is the same as when every
// file is scanned first.
func TestCalleeLookupScansTheDefinition(t *testing.T) {
	g := changeRepo(t)
	const mentions = 20
	for i := range mentions {
		g.Write(fmt.Sprintf("notes/n%02d.go", i), "package notes\n\n// See lookupRow in the store.\n"+machineBody())
	}
	g.Write("rows/rows.go", "package rows\n\n// lookupRow finds a row.\nfunc lookupRow(k string) string {\n\treturn k\n}\n")
	g.Commit("notes")
	g.Write("store/store.go", storeGo("\t_ = lookupRow(k)\n\ts.rows[k] = v\n\treturn nil\n"))
	g.Commit("store: look the row up")

	lazy, sc := buildLastCommit(t, g.Dir, policy.ActionRedact)
	eager, _ := buildLastCommit(t, g.Dir, policy.ActionExclude)
	if got, want := sentItems(lazy.Pack), sentItems(eager.Pack); !slices.Equal(got, want) {
		t.Errorf("items, definitions looked up before the scan:\n%q\nevery file scanned first:\n%q", got, want)
	}
	def, ok := item(lazy.Pack, "rows/rows.go")
	if !ok || !slices.Contains(def.Relationship, pack.RelCalls) || sc.scanned["rows/rows.go"] == 0 {
		t.Errorf("rows/rows.go: sent %v as %v, scanned %d times; want it sent as what the change calls", ok, def.Relationship, sc.scanned["rows/rows.go"])
	}
	scanned := 0
	for i := range mentions {
		if sc.scanned[fmt.Sprintf("notes/n%02d.go", i)] > 0 {
			scanned++
		}
	}
	if scanned >= mentions/2 {
		t.Errorf("%d of the %d files that only mention lookupRow were scanned: want only those the budget reaches", scanned, mentions)
	}
}

// TestCalleeLookupReadsAheadAlike: the callee lookup's files, read and
// extracted ahead on the other cores, give the very pack and record the
// lookup gives reading them one after the other: the same files read,
// scanned and listed, the same items, byte for byte — with a work tree
// that moved on from the commit (files read ahead from the object store),
// and with the read-ahead off.
func TestCalleeLookupReadsAheadAlike(t *testing.T) {
	g := changeRepo(t)
	for i := range 12 {
		g.Write(fmt.Sprintf("notes/n%02d.go", i), "package notes\n\n// See lookupRow in the store.\nfunc note() { _ = lookupRow }\n"+machineBody())
	}
	g.Write("rows/rows.go", "package rows\n\n// lookupRow finds a row.\nfunc lookupRow(k string) string {\n\treturn k\n}\n")
	g.Write("rows/other.go", "package rows\n\nfunc spill(k string) string { return lookupRow(k) + shelve(k) }\n")
	g.Commit("notes")
	g.Write("store/store.go", storeGo("\t_ = lookupRow(k) + shelve(k)\n\ts.rows[k] = v\n\treturn nil\n"))
	g.Commit("store: look the row up")
	g.Write("notes/n03.go", "package notes\n\nfunc lookupRow() {}\n")

	build := func(ahead bool) (*pack.Result, *recordingScanner) {
		defer pack.SetReadAhead(ahead)()
		return buildLastCommit(t, g.Dir, policy.ActionRedact)
	}
	off, offScans := build(false)
	for range 3 {
		on, onScans := build(true)
		if !bytes.Equal(on.JSON, off.JSON) {
			t.Fatalf("the pack differs with the read-ahead:\n%q\nwithout:\n%q", sentItems(on.Pack), sentItems(off.Pack))
		}
		if !maps.Equal(onScans.scanned, offScans.scanned) {
			t.Fatalf("files scanned with the read-ahead %v, without %v", onScans.scanned, offScans.scanned)
		}
	}
	if def, ok := item(off.Pack, "rows/rows.go"); !ok || !slices.Contains(def.Relationship, pack.RelCalls) {
		t.Errorf("rows/rows.go: sent %v as %v; want it sent as what the change calls", ok, def.Relationship)
	}
}

// revealingScanner is recordingScanner that also finds REVEALED, but only
// in a text already redacted: a secret only a rescan after redaction sees.
// It counts the redacted texts it scans by path.
type revealingScanner struct {
	recordingScanner
	rescanned map[string]int
}

func (s *revealingScanner) Scan(ctx context.Context, path string, content []byte) ([]pack.Finding, error) {
	out, err := s.recordingScanner.Scan(ctx, path, content)
	if !bytes.Contains(content, []byte("[REDACTED:")) {
		return out, err
	}
	s.mu.Lock()
	s.rescanned[path]++
	s.mu.Unlock()
	for i := 0; ; {
		j := bytes.Index(content[i:], []byte("REVEALED"))
		if j < 0 {
			break
		}
		at := i + j
		line := bytes.Count(content[:at], []byte("\n")) + 1
		out = append(out, pack.Finding{RuleID: "revealed", Path: path, StartLine: line, EndLine: line,
			Fingerprint: path + ":revealed", Start: at, End: at + len("REVEALED")})
		i = at + 1
	}
	return out, err
}

// A change pack rescans a file's redacted whole text only when it sends
// the file whole: a changed file holding a secret away from the change
// is sent as its diff and the code around it, never rescanned whole, and
// a key file sent whole is rescanned, what only the rescan finds redacted
// and reported.
func TestChangePackRescansAWholeTextOnlyWhenSent(t *testing.T) {
	g := changeRepo(t)
	g.Write("README.md", "# shop\n\nShop keeps orders in a store.\ntoken: FAKESECRET0123456789AB REVEALED\n")
	far := "\n// Seed is the store's test key: FAKESECRETABCDEFGHIJKL.\nvar Seed = 1\n"
	g.Write("store/store.go", storeGo("\ts.rows[k] = v\n\treturn nil\n")+far)
	g.Commit("readme, seed")
	g.Write("store/store.go", storeGo("\tif k == \"x\" {\n\t\treturn errEmpty\n\t}\n\ts.rows[k] = v\n\treturn nil\n")+far)
	g.Commit("store: refuse x")

	sc := &revealingScanner{recordingScanner: recordingScanner{scanned: map[string]int{}}, rescanned: map[string]int{}}
	res, err := pack.Build(context.Background(), lastCommitSnapshot(t, g.Dir), pack.Options{Policy: policy.Default(), Scanner: sc, ToolVersion: "0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(res.JSON); strings.Contains(s, "FAKESECRET") || strings.Contains(s, "REVEALED") {
		t.Fatal("the pack holds a secret")
	}
	for _, it := range append(append([]pack.Item{}, res.Pack.KeyFiles...), res.Pack.Contents...) {
		if it.Path == "store/store.go" && it.StartLine == 0 {
			t.Fatalf("store/store.go sent whole (%d bytes): the test needs it sent in part", len(it.Content))
		}
	}
	if sc.scanned["store/store.go"] == 0 || sc.rescanned["store/store.go"] != 0 {
		t.Errorf("store/store.go scanned %d times, %d of them redacted: its redacted whole text is never sent, so never rescanned", sc.scanned["store/store.go"], sc.rescanned["store/store.go"])
	}
	readme, ok := item(res.Pack, "README.md")
	if !ok || readme.Truncated || !strings.Contains(readme.Content, "[REDACTED:fake-secret] [REDACTED:revealed]") {
		t.Fatalf("README.md: sent %v, content %q; want it whole with both secrets redacted", ok, readme.Content)
	}
	var rules []string
	for _, e := range res.Secrets {
		if e.Path == "README.md" {
			rules = append(rules, e.RuleID+":"+e.Action)
		}
	}
	slices.Sort(rules)
	if want := []string{"fake-secret:redacted", "revealed:redacted"}; !slices.Equal(rules, want) {
		t.Errorf("README.md's secret events %q, want %q", rules, want)
	}
	for _, r := range res.Ledger {
		if r.Path == "README.md" && (r.Redactions != 2 || !slices.Equal(r.RuleIDs, []string{"fake-secret", "revealed"})) {
			t.Errorf("README.md's ledger row: %d redactions, rules %q; want 2, [fake-secret revealed]", r.Redactions, r.RuleIDs)
		}
	}
}

// summingScanner is a recordingScanner that is also a pack.SumScanner: it
// notes the digests it is handed.
type summingScanner struct {
	recordingScanner
	digests secrettest.Digests
}

func (s *summingScanner) ScanSum(ctx context.Context, path string, content []byte, sum [32]byte) ([]pack.Finding, error) {
	s.digests.Note(path, content, sum)
	return s.Scan(ctx, path, content)
}

// The builder hands a pack.SumScanner the digest of a file it read as it
// is (UTF-8), which it took reading it; a file decoded from another
// encoding is another text, scanned without one: every digest handed is
// the digest of what it is handed with (the bytes of the Latin-1 file,
// which its diff shows, are scanned with theirs: DiffSecrets).
func TestBuildHandsTheScannerTheFilesDigest(t *testing.T) {
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	g.WriteBytes("legacy/menu.txt", []byte("caf\xe9 cr\xe8me\n"))
	g.Commit("base")
	g.Write("main.go", "package main\n\nfunc main() { println(1) }\n")
	g.WriteBytes("legacy/menu.txt", []byte("caf\xe9 cr\xe8me\nna\xefve\n"))
	g.Commit("change")
	sc := &summingScanner{recordingScanner: recordingScanner{scanned: map[string]int{}}}
	if _, err := pack.Build(context.Background(), lastCommitSnapshot(t, g.Dir), pack.Options{Policy: policy.Default(), Scanner: sc, ToolVersion: "0.0.0-test"}); err != nil {
		t.Fatal(err)
	}
	if !sc.digests.Summed["main.go"] || sc.scanned["legacy/menu.txt"] == 0 {
		t.Errorf("handed a digest for %v; scanned %v", sc.digests.Summed, sc.scanned)
	}
	if len(sc.digests.Wrong) > 0 {
		t.Errorf("a digest that is not the content's: %v", sc.digests.Wrong)
	}
}
