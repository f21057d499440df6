package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
)

func blobID(s string) string { return plumbing.ComputeHash(plumbing.BlobObject, []byte(s)).String() }

// TestRedactedFileOriginalNeverLeaves: for a file holding a secret (issue
// 13, class 6) nothing that leaves is a function of its original bytes
// alone: no blob id, sha256 or size of the original in the pack, the
// record, the attestation or any view, and sums of sizes leave it out. The
// file says why (original_withheld). A file whose secret sits in lines a
// change pack does not send, a file whose secret the change removes, and
// a credentials file are withheld too; the other files keep theirs.
func TestRedactedFileOriginalNeverLeaves(t *testing.T) {
	f := secrettest.Make(606)
	secretLine := "DB_PASSWORD = \"" + f.DBPassword + "\"\n"
	var long strings.Builder
	long.WriteString("package store\n\n// The connection settings.\n")
	long.WriteString("const dsn = \"postgres://app:" + f.DBPassword + "@db.internal:5432/app\"\n\n")
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&long, "func F%03d() int { return %d }\n\n", i, i)
	}
	g := gittest.New(t)
	files := map[string]string{
		"main.go":        "package main\n\nfunc main() {}\n",
		"settings.py":    "DEBUG = False\n",
		"legacy/old.py":  "USER = \"app\"\n" + secretLine,
		"store/store.go": long.String(),
		".env":           "API_TOKEN=abc\n",
	}
	for p, c := range files {
		g.Write(p, c)
	}
	// A symlink's target is repository-controlled text that is never read
	// or scanned: its blob id and length (the entry's size) are withheld.
	linkBase, linkHead := "../"+f.GitHub, "../"+f.Slack
	g.Symlink(linkBase, "link")
	base := g.Commit("base")
	head := map[string]string{
		"settings.py":    "DEBUG = False\n" + secretLine,
		"legacy/old.py":  "USER = \"app\"\n", // the change removes the secret: it is in the diff's "-" line
		"store/store.go": strings.Replace(long.String(), "return 149 }", "return 150 }", 1),
		"main.go":        "package main\n\nfunc main() { println(\"hi\") }\n",
	}
	for p, c := range head {
		g.Write(p, c)
	}
	g.Remove("link")
	g.Symlink(linkHead, "link")
	g.Commit("change")
	// What must not leave: the blob id and sha256 of every version holding
	// the secret, and of the credentials file. (The head of legacy/old.py
	// holds none: sent whole, its sha256 is that of the bytes sent.)
	var forbidden []string
	for _, c := range []string{head["settings.py"], files["legacy/old.py"], files["store/store.go"], head["store/store.go"], files[".env"]} {
		forbidden = append(forbidden, blobID(c), sha(c))
	}
	forbidden = append(forbidden, blobID(head["legacy/old.py"])) // named by the diff's index line
	forbidden = append(forbidden, blobID(linkBase), blobID(linkHead))
	withheld := map[string]string{"settings.py": pack.WithheldSecret, "legacy/old.py": pack.WithheldSecret,
		"store/store.go": pack.WithheldSecret, ".env": pack.WithheldCredentials, "link": pack.WithheldSymlink}

	for _, action := range []string{"redact", "exclude"} {
		for _, opts := range []PackOptions{
			{Commit: "HEAD"},
			{Base: base, Head: "HEAD", Type: "full", Scope: "tree"},
			{Commit: "HEAD", Type: "summary", Scope: "tree"},
		} {
			opts.Dir, opts.SecretsAction = g.Dir, action
			name := fmt.Sprintf("%s %+v", action, opts)
			run, err := Execute(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			outs := outputs(t, run)
			att, err := run.Attestation("pack.json", nil)
			if err != nil {
				t.Fatal(err)
			}
			outs["attestation"] = att
			for where, data := range outs {
				for _, x := range forbidden {
					if strings.Contains(string(data), x) {
						i := strings.Index(string(data), x)
						t.Fatalf("%s: %s holds a digest of a withheld original (%s…): %s", name, where, x[:8], string(data)[max(0, i-300):i+50])
					}
				}
				assertNoFragment(t, name+" "+where, data, []string{f.DBPassword, f.GitHub, f.Slack})
			}
			p := run.Result.Pack
			for _, it := range append(append([]pack.Item{}, p.KeyFiles...), p.Contents...) {
				if why := withheld[it.Path]; why != "" {
					if it.Blob != "" || it.OriginalSizeBytes != nil || it.OriginalWithheld != why {
						t.Errorf("%s: item %s = blob %q size %v withheld %q", name, it.ID, it.Blob, it.OriginalSizeBytes, it.OriginalWithheld)
					}
				} else if it.Blob == "" || it.OriginalSizeBytes == nil || it.OriginalWithheld != "" {
					t.Errorf("%s: item %s lost its blob or size", name, it.ID)
				}
			}
			var total int64
			for _, e := range p.FileIndex {
				if why := withheld[e.Path]; why != "" {
					if e.SizeBytes != nil || e.OriginalWithheld != why {
						t.Errorf("%s: index entry %s = size %v withheld %q", name, e.Path, e.SizeBytes, e.OriginalWithheld)
					}
				} else if e.SizeBytes == nil {
					t.Errorf("%s: index entry %s lost its size", name, e.Path)
				} else {
					total += *e.SizeBytes
				}
			}
			if p.Metadata.Totals.SizeBytes != total {
				t.Errorf("%s: total_size_bytes %d, want %d (the published sizes)", name, p.Metadata.Totals.SizeBytes, total)
			}
			for _, row := range run.Record.Ledger {
				if why := withheld[row.Path]; why != "" {
					if row.BytesOriginal != nil || row.SHA256Original != "" || row.Blob != "" || row.OriginalWithheld != why {
						t.Errorf("%s: ledger row %+v", name, row)
					}
				} else if row.BytesOriginal == nil {
					t.Errorf("%s: ledger row %s lost its size", name, row.Path)
				}
			}
			for _, c := range p.Changes {
				want := withheld[c.Path]
				if want == pack.WithheldCredentials || want == pack.WithheldSymlink {
					want = "" // its diff is withheld whole
				}
				if c.OriginalWithheld != want && !(want == "" && c.Diff == "") {
					t.Errorf("%s: change %s withheld %q, want %q", name, c.Path, c.OriginalWithheld, want)
				}
				if c.OriginalWithheld != "" && strings.Contains(c.Diff, "\nindex ") {
					t.Errorf("%s: the diff of %s names its blobs", name, c.Path)
				}
			}
			// The build's own audit and the audit against the repository
			// re-derive the withheld files' content without their blob ids.
			v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, run.Result.JSON), RepoDir: g.Dir})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range append(run.Verdict.Failed, v.Failed...) {
				switch c.Code {
				case audit.CodeSchemaInvalid, audit.CodeBlobMismatch, audit.CodeOriginalPublished, audit.CodeInternal:
					t.Errorf("%s: %s", name, c.Message)
				}
			}
			// A pack that publishes the symlink's size is refused.
			forged := *p
			forged.FileIndex = append([]pack.IndexEntry(nil), p.FileIndex...)
			for i := range forged.FileIndex {
				if e := &forged.FileIndex[i]; e.Path == "link" {
					e.SizeBytes, e.OriginalWithheld = new(int64(len(linkHead))), ""
				}
			}
			forged.Changes = append([]pack.Change(nil), p.Changes...)
			for i := range forged.Changes {
				if c := &forged.Changes[i]; c.Path == "link" {
					c.OriginalWithheld = ""
				}
			}
			data, err := pack.Finalize(&forged)
			if err != nil {
				t.Fatal(err)
			}
			v, err = Audit(context.Background(), AuditOptions{PackFile: writePack(t, data)})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(v.Failed, func(c audit.Check) bool { return c.Code == audit.CodeOriginalPublished }) {
				t.Errorf("%s: a pack publishing the symlink's size passed: %+v", name, v.Failed)
			}
		}
	}
}

// TestUnscannedFileDescribesNoDigest: a file a change pack lists but never
// scans (unchanged boilerplate, a file excluded by path) publishes no blob
// id or sha256 of its bytes: had it held a secret, either would let anyone
// confirm a guess of it offline.
func TestUnscannedFileDescribesNoDigest(t *testing.T) {
	f := secrettest.Make(607)
	g := gittest.New(t)
	licence := "MIT License\n\n" + f.GitHub + "\n"
	vendored := "module.exports = '" + f.Stripe + "'\n"
	g.Write("LICENSE", licence)
	g.Write("node_modules/x/index.js", vendored)
	g.Write("a.go", "package a\n")
	g.Commit("base")
	g.Write("a.go", "package a // changed\n")
	g.Commit("change")
	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Commit: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	outs := outputs(t, run)
	for where, data := range outs {
		for _, c := range []string{licence, vendored} {
			for _, x := range []string{blobID(c), sha(c)} {
				if strings.Contains(string(data), x) {
					t.Errorf("%s holds a digest of a file that was never scanned (%s…)", where, x[:8])
				}
			}
		}
	}
	for _, row := range run.Record.Ledger {
		if row.Path == "LICENSE" && (row.Blob != "" || row.SHA256Original != "") {
			t.Errorf("ledger row %+v", row)
		}
	}
}
