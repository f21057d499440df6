package source

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestRangeWalkMatchesGitOnRepos compares, on real repositories named in
// CTXPACK_RANGE_REPOS (paths separated by the list separator; skipped
// when unset), the merge bases and commit lists the git CLI backend
// answers (walked through cat-file when short, see walkRange) with git's
// own, for ranges drawn from each repository's recent history: a merge's
// two parents (a pull request's base and head), a commit and a commit
// some way down, and those reversed.
func TestRangeWalkMatchesGitOnRepos(t *testing.T) {
	dirs := filepath.SplitList(os.Getenv("CTXPACK_RANGE_REPOS"))
	if len(dirs) == 0 {
		t.Skip("CTXPACK_RANGE_REPOS is unset")
	}
	ctx := context.Background()
	git := func(dir string, args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil && !(len(args) > 0 && args[0] == "merge-base") {
			t.Fatalf("git %v in %s: %v", args, dir, err)
		}
		return string(out)
	}
	sorted := func(s string) string {
		f := strings.Fields(s)
		sort.Strings(f)
		return fmt.Sprint(f)
	}
	for _, dir := range dirs {
		type pair struct{ base, head string }
		var pairs []pair
		lines := strings.Split(strings.TrimSpace(git(dir, "log", "--all", "--format=%H %P", "--max-count=400")), "\n")
		for i, l := range lines {
			f := strings.Fields(l)
			if len(f) == 3 {
				pairs = append(pairs, pair{f[1], f[2]}, pair{f[2], f[1]})
			}
			for _, k := range []int{1, 7, 40, 90} {
				if i%k == 0 && i+k < len(lines) {
					other := strings.Fields(lines[i+k])[0]
					pairs = append(pairs, pair{other, f[0]}, pair{f[0], other})
				}
			}
		}
		walked := 0
		for _, p := range pairs {
			r, err := OpenWith(dir, OpenOptions{Backend: BackendCLI})
			if err != nil {
				t.Fatal(err)
			}
			bases, err := r.mergeBases(ctx, ObjectID(p.head), ObjectID(p.base))
			if want := sorted(git(dir, "merge-base", "--all", p.head, p.base)); err != nil || fmt.Sprint(bases) != want {
				t.Errorf("%s: merge-base %s %s = %v, %v; git says %s", dir, p.head, p.base, bases, err, want)
			}
			list, err := r.revList(ctx, ObjectID(p.head), []ObjectID{ObjectID(p.base)})
			if want := sorted(git(dir, "rev-list", p.head, "--not", p.base)); err != nil || fmt.Sprint(list) != want {
				t.Errorf("%s: rev-list %s --not %s = %d commits, %v; git says %d", dir, p.head, p.base, len(list), err, len(strings.Fields(want))-0)
			}
			if _, long := r.history.get(question("walk too long", ObjectID(p.head), ObjectID(p.base))); !long {
				walked++
			}
			r.Close()
		}
		t.Logf("%s: %d ranges, %d answered by walks", dir, len(pairs), walked)
	}
}
