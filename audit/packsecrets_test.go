package audit

import (
	"context"
	"fmt"
	"testing"

	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
)

// TestPackSecretsInDocumentOrder: the documents are scanned on every
// core, and reported in the pack's order (items, then diffs) on every
// run; a run stopped before a document was scanned reports it as not
// scanned, never as clean.
func TestPackSecretsInDocumentOrder(t *testing.T) {
	f := secrettest.Make(7)
	s, err := NewScanner(ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := &pack.Pack{}
	var want []string
	for i := range 12 {
		path := fmt.Sprintf("f%02d.go", i)
		text := "package x\n"
		if i%3 == 0 {
			text += "var k = \"" + f.GitHub + "\"\n"
			want = append(want, path)
		}
		p.Contents = append(p.Contents, pack.Item{Path: path, Content: text})
	}
	p.Changes = []pack.Change{{Path: "d.go", Diff: "--- a/d.go\n+++ b/d.go\n@@ -1 +1,2 @@\n package x\n+var k = \"" + f.Stripe + "\"\n"}}
	want = append(want, "d.go")
	for range 5 {
		found, failed := PackSecrets(context.Background(), s, p)
		if len(failed) > 0 {
			t.Fatalf("failed: %+v", failed)
		}
		var got []string
		for _, c := range found {
			got = append(got, c.Details["path"].(string))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("found in %v, want %v", got, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	found, failed := PackSecrets(ctx, s, p)
	if len(found) > 0 {
		t.Errorf("stopped run found %+v", found)
	}
	notScanned := map[string]bool{}
	for _, c := range failed {
		if c.Code != CodeInternal {
			t.Errorf("failed check %+v", c)
		}
		if path, ok := c.Details["path"].(string); ok {
			notScanned[path] = true
		}
	}
	for _, it := range p.Contents {
		if !notScanned[it.Path] {
			t.Errorf("stopped run: %s is not reported as not scanned (%+v)", it.Path, failed)
		}
	}
}
