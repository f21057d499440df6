package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
)

// TestUnreadableHistoryFailsTheRun: a range's per-commit patches are read
// in the background (source.Repo.CommitsAside); a blob one of its commits
// added that the repository no longer has fails the run, naming the file,
// as when they were read with the snapshot. No pack comes out of it.
func TestUnreadableHistoryFailsTheRun(t *testing.T) {
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	base := g.Commit("base")
	g.Write("scratch.txt", "a line that only one commit has\n")
	g.Commit("add scratch")
	g.Remove("scratch.txt")
	g.Write("main.go", "package main\n\nfunc main() { println(\"hi\") }\n")
	g.Commit("drop scratch")
	g.DropBlob("a line that only one commit has\n")
	for range 3 {
		run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Base: base, Head: "HEAD"})
		if err == nil {
			run.Close()
			t.Fatal("the range packed with a commit's added lines unreadable")
		}
		if !strings.Contains(err.Error(), "scratch.txt") {
			t.Fatalf("error %q does not name scratch.txt", err)
		}
	}
}
