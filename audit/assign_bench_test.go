package audit

import (
	"os"
	"testing"
)

// BenchmarkFindAssignmentsTree is the assignment rules alone over every
// text file of CTXPACK_SCAN_TREE (a list like PATH; .git is skipped), the
// current scan and the reference it replaced:
//
//	CTXPACK_SCAN_TREE=/tmp/hugo go test -run '^$' -bench FindAssignmentsTree -count 5 ./audit/
func BenchmarkFindAssignmentsTree(b *testing.B) {
	if os.Getenv("CTXPACK_SCAN_TREE") == "" {
		b.Skip("CTXPACK_SCAN_TREE is not set")
	}
	files := treeTexts(b)
	total := 0
	for _, s := range files {
		total += len(s)
	}
	for _, impl := range []struct {
		name string
		find func(string, string, *lineIndex) []assignment
	}{{"reference", findAssignmentsRef}, {"current", findAssignments}} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				for p, s := range files {
					impl.find(p, s, newLineIndex(s))
				}
			}
		})
	}
}
