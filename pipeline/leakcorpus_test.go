package pipeline

import (
	"context"
	"testing"

	"github.com/ctxpack/ctxpack/internal/leakcorpus"
	"github.com/ctxpack/ctxpack/pack"
)

// TestLeakCorpusNeverLeaves packs the generated leak corpus (secrets of
// every class of issue 13, in contents, diffs, a commit undone later,
// names, the range's commit message and its pull request) as a range in
// every secrets action, and looks for each secret in everything the run
// lets out. bench/cmd/leakbench does the same through the binary, with the
// Action's outputs too.
func TestLeakCorpusNeverLeaves(t *testing.T) {
	c := leakcorpus.Build(13)
	dir := t.TempDir()
	base, head, err := c.Commit(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"redact", "exclude", "fail"} {
		run, err := Execute(context.Background(), PackOptions{Dir: dir, Base: base, Head: head, SecretsAction: mode,
			PullRequest: &pack.PullRequest{Number: 7, Title: c.PRTitle, Body: c.PRBody}})
		if err != nil {
			t.Fatal(err)
		}
		outs := outputs(t, run)
		leaked := 0
		for _, p := range c.Plants {
			for where, data := range outs {
				if p.Leaked(data) {
					leaked++
					t.Errorf("%s: %s %s secret (%s) in %s leaks in %s", mode, p.Class, p.Where, p.Provider, p.Path, where)
					break
				}
			}
		}
		t.Logf("%s: %d/%d leaked", mode, leaked, len(c.Plants))
	}
}
