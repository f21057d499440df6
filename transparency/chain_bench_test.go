package transparency

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/source"
)

// BenchmarkChainWalk walks the log and the chain of a repository of 1,000
// commits, each with a note, through each reader:
//
//	go test ./transparency -run '^$' -bench ChainWalk -benchtime 5x -count 3
func BenchmarkChainWalk(b *testing.B) {
	const n = 1000
	r := gittest.New(b)
	// fast-import makes the commits and their notes in one process.
	var in strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&in, "commit refs/heads/main\nmark :%d\ncommitter C <c@example.com> %d +0000\ndata 8\ncommit %d\n", i, 1700000000+i, i%10)
		if i > 1 {
			fmt.Fprintf(&in, "from :%d\n", i-1)
		}
		fmt.Fprintf(&in, "M 100644 inline f.txt\ndata %d\n%d\n\n", len(fmt.Sprint(i))+1, i)
	}
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&in, "commit refs/notes/ctxpack\ncommitter C <c@example.com> %d +0000\ndata 5\nnote\n", 1700000000+n+i)
		note := fmt.Sprintf("{\"note\": %d}\n", i)
		fmt.Fprintf(&in, "N inline :%d\ndata %d\n%s\n", i, len(note), note)
	}
	if _, err := r.TryGitStdin(in.String(), "fast-import", "--quiet"); err != nil {
		b.Fatal(err)
	}
	head := source.ObjectID(r.Git("rev-parse", "main"))
	for _, name := range []string{"go-git", "source go-git", "source git"} {
		objs := chainReaders(b, r.Dir)[name]
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			for range b.N {
				log, err := LogWith(ctx, objs, head, 0)
				if err != nil || len(log) != n || !log[n-1].HasNote {
					b.Fatalf("log: %d entries, %v", len(log), err)
				}
				rep, err := VerifyChainWith(ctx, objs, head)
				if err != nil || rep.Records != n {
					b.Fatalf("verify: %+v %v", rep, err)
				}
			}
		})
	}
}
