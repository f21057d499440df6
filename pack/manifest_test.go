package pack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
)

// The manifest's texts come from the files' texts with their secrets
// redacted, in every pack type: a purpose that package lang cuts at its
// cap inside a secret (a README paragraph, a package.json description with
// no space to cut at) holds no part of it, also when the README is an
// unchanged file a change pack scans only when it uses it.
func TestManifestTextsComeFromRedactedFiles(t *testing.T) {
	const secret = "FAKESECRET0123456789AB"
	long := "dd " + strings.Repeat("e", 280) // lang cuts at 299 runes, inside the secret
	for _, src := range []struct {
		name, path, content string
	}{
		{"readme", "README.md", "# shop\n\n" + long + secret + "\n"},
		{"package.json", "package.json", `{"name": "shop", "description": "` + long + secret + `"}` + "\n"},
	} {
		for _, typ := range []string{"change", "tree", "summary", "change exclude"} {
			t.Run(src.name+" "+typ, func(t *testing.T) {
				g := changeRepo(t)
				if src.path != "README.md" {
					g.Write("README.md", "# shop\n") // no paragraph of its own
				}
				g.Write(src.path, src.content)
				g.Commit("manifest")
				g.Write("store/store.go", storeGo("\tif k == \"x\" {\n\t\treturn errEmpty\n\t}\n\ts.rows[k] = v\n\treturn nil\n"))
				g.Commit("store: refuse x")
				ctx := context.Background()
				pol := policy.Default()
				snap := lastCommitSnapshot(t, g.Dir)
				switch typ {
				case "tree", "summary":
					repo, err := source.Open(g.Dir)
					if err != nil {
						t.Fatal(err)
					}
					defer repo.Close()
					if snap, err = repo.Commit(ctx, "HEAD", policy.ScopeTree); err != nil {
						t.Fatal(err)
					}
					snap.Changes = nil // the tree as it is
					if typ == "summary" {
						pol.Pack.Type = policy.TypeSummary
					}
				case "change exclude":
					pol.Secrets.Action = policy.ActionExclude
				}
				res, err := pack.Build(ctx, snap, pack.Options{Policy: pol, Scanner: &recordingScanner{scanned: map[string]int{}}, ToolVersion: "0.0.0-test"})
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(res.JSON), "FAKESECRET") {
					t.Fatalf("the pack holds a part of the secret; purpose %q", res.Pack.Manifest.PurposeGuess)
				}
				purpose := res.Pack.Manifest.PurposeGuess
				if typ == "change exclude" {
					// The file its scan excluded is not read for the manifest.
					if strings.Contains(purpose, "eeee") {
						t.Errorf("purpose %q from a file the policy excludes", purpose)
					}
					return
				}
				if !strings.HasPrefix(purpose, long) {
					t.Errorf("purpose %q, want it from %s", purpose, src.path)
				}
			})
		}
	}
}
