package source

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/policy"
)

// gitLog puts a git first on PATH that logs every run and then runs the
// real git: the tests count the processes a call spawns.
type gitLog struct {
	t    *testing.T
	file string
}

func logGit(t *testing.T) *gitLog {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l := &gitLog{t: t, file: filepath.Join(dir, "runs")}
	// The subcommand and its first option (up to any "="): "cat-file
	// --batch-check", "rev-parse --verify", "merge-base --all".
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s %%s\\n' \"$1\" \"${2%%%%=*}\" >> '%s'\nexec '%s' \"$@\"\n", l.file, real)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return l
}

// take returns how many times each command ran since the last take.
func (l *gitLog) take() map[string]int {
	l.t.Helper()
	data, err := os.ReadFile(l.file)
	if err != nil && !os.IsNotExist(err) {
		l.t.Fatal(err)
	}
	if err := os.Remove(l.file); err != nil && !os.IsNotExist(err) {
		l.t.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line != "" {
			out[line]++
		}
	}
	return out
}

// cliRepos opens dir read by the git CLI both ways a repository can be:
// opened with the CLI backend, and routed to it as a large repository.
func cliRepos(t *testing.T, dir string) map[string]*Repo {
	t.Helper()
	cli, err := OpenWith(dir, OpenOptions{Backend: BackendCLI})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	routed, err := OpenWith(dir, OpenOptions{Backend: BackendGoGit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { routed.Close() })
	routed.routeLarge(-1, -1)
	if _, ok := routed.b.(*routedBackend); !ok {
		t.Fatalf("not routed: %T", routed.b)
	}
	return map[string]*Repo{"cli": cli, "routed": routed}
}

// ambiguousBlobs writes two blobs whose ids share their first four hex
// digits, and returns those digits.
func ambiguousBlobs(t *testing.T, g *gittest.Repo) string {
	t.Helper()
	seen := map[string]string{}
	for i := 0; ; i++ {
		content := fmt.Sprintf("blob %d\n", i)
		sum := sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(content), content)))
		prefix := hex.EncodeToString(sum[:])[:4]
		if other, ok := seen[prefix]; ok {
			for _, c := range []string{other, content} {
				if _, err := g.TryGitStdin(c, "hash-object", "-w", "--stdin"); err != nil {
					t.Fatal(err)
				}
			}
			return prefix
		}
		seen[prefix] = content
	}
}

// TestResolveThroughCatFile checks that the revisions the CLI backend
// resolves through its running cat-file name what `git rev-parse --verify
// --quiet` names, that the others still go to rev-parse, and that every
// error is the one rev-parse's path gives.
func TestResolveThroughCatFile(t *testing.T) {
	g := gittest.New(t)
	g.Write("a", "1\n")
	c1 := g.Commit("one")
	g.Write("a", "2\n")
	c2 := g.Commit("two")
	g.Git("branch", "feature", c1)
	g.Git("tag", "-a", "v2", "-m", "annotated", c2)
	g.Git("tag", "-a", "vv", "-m", "tag of a tag", "v2")
	g.Git("tag", "light", c1)
	g.Git("tag", "-a", "treetag", "-m", "a tree", c2+"^{tree}")
	g.Git("branch", "dup", c1) // refs/tags/dup wins, as git's lookup rules say
	g.Git("tag", "dup", c2)
	g.Git("update-ref", "refs/heads/"+c1, c2) // a full id wins over a ref of that name
	ambiguous := ambiguousBlobs(t, g)
	missing := strings.Repeat("0123456789", 4)

	unknown := func(rev string) string {
		return fmt.Sprintf("unknown revision %q: check the branch, tag or commit exists (git log --oneline)", rev)
	}
	notCommit := func(rev string) string { return fmt.Sprintf("revision %q is not a commit", rev) }
	notThere := func(rev string) string {
		return fmt.Sprintf("revision %q names an object that is not in the repository: fetch it (git fetch)", rev)
	}
	cases := []struct {
		rev     string
		want    string // the commit, or
		err     string // the whole error
		catFile bool   // resolved without a rev-parse
	}{
		{rev: "main", want: c2, catFile: true},
		{rev: "feature", want: c1, catFile: true},
		{rev: "HEAD", want: c2, catFile: true},
		{rev: "@", want: c2, catFile: true},
		{rev: "HEAD~1", want: c1, catFile: true},
		{rev: "main^", want: c1, catFile: true},
		{rev: "v2", want: c2, catFile: true},
		{rev: "vv", want: c2, catFile: true},
		{rev: "light", want: c1, catFile: true},
		{rev: "v2^{commit}", want: c2, catFile: true},
		{rev: "vv^{}", want: c2, catFile: true},
		{rev: "refs/tags/v2", want: c2, catFile: true},
		{rev: "dup", want: c2, catFile: true},
		{rev: "heads/dup", want: c1, catFile: true},
		{rev: c1, want: c1, catFile: true},
		{rev: strings.ToUpper(c1), want: c1, catFile: true},
		{rev: c1[:8], want: c1, catFile: true},
		{rev: "main^{/one}", want: c1, catFile: true},
		{rev: "main^{tree}", err: notCommit("main^{tree}"), catFile: true},
		{rev: "treetag", err: notCommit("treetag"), catFile: true},
		// Not found by cat-file: rev-parse's path, with its errors.
		{rev: "nope", err: unknown("nope")},
		{rev: ambiguous, err: unknown(ambiguous)},
		{rev: missing, err: notThere(missing)},
		{rev: "main~9", err: unknown("main~9")},
		// What rev-parse reads before its lookup, and what cat-file's
		// line protocol cannot carry, never reach cat-file.
		{rev: "feature..main", err: unknown("feature..main")},
		{rev: "main^{/t..}", want: c2},
		{rev: "main^!", err: unknown("main^!")},
		{rev: "main^@", err: unknown("main^@")},
		{rev: "main^-", err: unknown("main^-")},
		{rev: "^main", err: notThere("^main")}, // rev-parse prints "^<id>"
		{rev: "main@{0}", want: c2},
		{rev: "main@{9}", err: unknown("main@{9}")},
		{rev: ":/one", want: c1},
		{rev: "HEAD:a", err: notCommit("HEAD:a")},
		{rev: "main\nfeature", err: unknown("main\nfeature")},
		{rev: "main feature", err: unknown("main feature")},
		{rev: "main\tx", err: unknown("main\tx")},
		{rev: `main\x`, err: unknown(`main\x`)},
	}
	runs := logGit(t)
	ctx := context.Background()
	for name, r := range cliRepos(t, g.Dir) {
		b, _ := r.cli()
		for _, tc := range cases {
			// The claim: what cat-file finds is what rev-parse prints.
			if id, ok := b.lookupRevision(ctx, tc.rev); ok {
				if !tc.catFile {
					t.Errorf("%s: %q was resolved by cat-file", name, tc.rev)
				}
				if out, err := g.TryGit(nil, "rev-parse", "--verify", "--quiet", tc.rev); err != nil || out != id.String() {
					t.Errorf("%s: cat-file resolves %q to %s, rev-parse to %q (%v)", name, tc.rev, id, out, err)
				}
			}
			runs.take()
			got, err := r.Resolve(tc.rev)
			spawned := runs.take()
			switch {
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Errorf("%s: Resolve(%q) = %s, %v; want error %q", name, tc.rev, got, err, tc.err)
			case tc.err == "" && (err != nil || got.String() != tc.want):
				t.Errorf("%s: Resolve(%q) = %s, %v; want %s", name, tc.rev, got, err, tc.want)
			}
			if n := spawned["rev-parse --verify"]; tc.catFile && n != 0 || !tc.catFile && n != 1 {
				t.Errorf("%s: Resolve(%q) ran %d rev-parse (%v)", name, tc.rev, n, spawned)
			}
			delete(spawned, "rev-parse --verify")
			delete(spawned, "cat-file --batch-check") // started on the first lookup
			delete(spawned, "cat-file --batch")       // started on the first tag read
			if len(spawned) > 0 {
				t.Errorf("%s: Resolve(%q) ran %v", name, tc.rev, spawned)
			}
		}
	}
}

// TestResolveFollowsMovedRefs checks that the long-lived cat-file answers
// for refs as they are now: a ref moved, created, packed or deleted after
// it started resolves as rev-parse resolves it then.
func TestResolveFollowsMovedRefs(t *testing.T) {
	g := gittest.New(t)
	g.Write("a", "1\n")
	c1 := g.Commit("one")
	g.Write("a", "2\n")
	c2 := g.Commit("two")
	g.Git("branch", "moving", c1)
	steps := []struct {
		change func()
		rev    string
		want   string // "" when the ref is gone
	}{
		{func() {}, "moving", c1},
		{func() { g.Git("update-ref", "refs/heads/moving", c2) }, "moving", c2},
		{func() { g.Git("pack-refs", "--all") }, "moving", c2},
		{func() { g.Git("update-ref", "refs/heads/moving", c1) }, "moving", c1},
		{func() { g.Git("branch", "late", c2) }, "late", c2},
		{func() { g.Git("update-ref", "-d", "refs/heads/moving") }, "moving", ""},
		{func() {
			g.Write("a", "3\n")
			g.Commit("three")
		}, "main", ""}, // a commit written after cat-file started
	}
	for name, r := range cliRepos(t, g.Dir) {
		g.Git("update-ref", "refs/heads/moving", c1)
		g.Git("reset", "-q", "--hard", c2)
		for i, st := range steps {
			st.change()
			want := st.want
			if st.rev == "main" {
				want = g.Git("rev-parse", "main")
			}
			got, err := r.Resolve(st.rev)
			if want == "" && err == nil || want != "" && (err != nil || got.String() != want) {
				t.Errorf("%s step %d: Resolve(%q) = %s, %v; want %q", name, i, st.rev, got, err, want)
			}
		}
		g.Git("branch", "-D", "late")
	}
}

// TestResolveUnbornHead keeps the empty repository's error.
func TestResolveUnbornHead(t *testing.T) {
	g := gittest.New(t)
	r, err := OpenWith(g.Dir, OpenOptions{Backend: BackendCLI})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, rev := range []string{"HEAD", "HEAD~1", "main"} {
		_, err := r.Resolve(rev)
		wantNoCommits := strings.HasPrefix(rev, "HEAD")
		if wantNoCommits && (err == nil || err.Error() != fmt.Sprintf("revision %q: the repository has no commits yet", rev)) ||
			!wantNoCommits && (err == nil || err.Error() != fmt.Sprintf("unknown revision %q: check the branch, tag or commit exists (git log --oneline)", rev)) {
			t.Errorf("Resolve(%q): %v", rev, err)
		}
	}
}

// TestGitProcessesOfARange counts the git processes a range pack and a
// pre-push check spawn on a linear branch: the two cat-file processes and
// the listing of the head tree (ls-tree, for the change pack's search), and
// nothing else (revisions resolve through cat-file, the merge base and the
// commit list come from the commits it reads, each question once).
func TestGitProcessesOfARange(t *testing.T) {
	g := gittest.New(t)
	base, head := buildHistory(g)
	g.Git("branch", "base", base)
	parent := ObjectID(g.Git("rev-parse", head+"~1"))
	runs := logGit(t)
	ctx := context.Background()
	cases := []struct {
		name       string
		base, head string
	}{
		{"ids", base, head},
		{"names", "base", "main"},
	}
	for name, r := range cliRepos(t, g.Dir) {
		for _, tc := range cases {
			r.history.reset()
			runs.take()
			// What pipeline.Pack asks: the configuration's commit (the
			// merge base), its presence, then the range itself.
			if _, err := r.Resolve(tc.head); err != nil {
				t.Fatal(err)
			}
			from, err := r.DiffBase("", tc.base, tc.head)
			if err != nil || from != base {
				t.Fatalf("%s %s: diff base %s, %v", name, tc.name, from, err)
			}
			if !r.HasCommit(from) {
				t.Fatalf("%s %s: merge base %s not found", name, tc.name, from)
			}
			snap, err := r.Range(ctx, tc.base, tc.head, policy.ScopeChange)
			if err != nil || snap.Source.Base != base || snap.Source.Head != head || len(snap.Commits) != 2 {
				t.Fatalf("%s %s: range %+v, %v", name, tc.name, snap, err)
			}
			// The change has Go files: the head tree is listed for its
			// search, on another core (waited for here).
			if _, err := snap.Tree.Paths(ctx); err != nil {
				t.Fatal(err)
			}
			// A linear branch: no merge-base, no rev-list (see
			// TestLinearRangeAnswersAsGit).
			want := map[string]int{"cat-file --batch-check": 1, "cat-file --batch": 1, "ls-tree -r": 1}
			if tc.name != "ids" {
				want = map[string]int{"ls-tree -r": 1} // the first case's cat-file runs on
			}
			if got := runs.take(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s %s: the range ran %v, want %v", name, tc.name, got, want)
			}
		}

		// The pre-push hook lists the new commits to plan the push, to
		// find its diff base and to snapshot it: no process at all.
		r.history.reset()
		known := []ObjectID{ObjectID(base)}
		for range 2 {
			u, err := r.Unpublished(ctx, ObjectID(head), known)
			if err != nil || len(u.Commits) != 2 || u.Base == nil || u.Base.ID.String() != base {
				t.Fatalf("%s: unpublished %+v, %v", name, u, err)
			}
		}
		p, err := r.Pushed(ctx, ObjectID(head), known)
		if err != nil || p.Base != base || len(p.Commits) != 2 || p.Snapshot == nil {
			t.Fatalf("%s: pushed %+v, %v", name, p, err)
		}
		if _, err := p.Snapshot.Tree.Paths(ctx); err != nil {
			t.Fatal(err)
		}
		if got := runs.take(); fmt.Sprint(got) != fmt.Sprint(map[string]int{"ls-tree -r": 1}) {
			t.Errorf("%s: the push ran %v, want only the listing of its tree", name, got)
		}
		// Known commits that are not one base: one rev-list.
		known = append(known, parent)
		for range 2 {
			if u, err := r.Unpublished(ctx, ObjectID(head), known); err != nil || len(u.Commits) != 1 {
				t.Fatalf("%s: unpublished %+v, %v", name, u, err)
			}
		}
		if got := runs.take(); fmt.Sprint(got) != fmt.Sprint(map[string]int{"rev-list --stdin": 1}) {
			t.Errorf("%s: the push ran %v, want one rev-list", name, got)
		}
	}
}

// TestHistoryMemoAnswersAsGit checks the memo's answers against git's for
// every pair of a history with criss-cross merges, asked twice, and that
// a memo answer is a copy the caller may change.
func TestHistoryMemoAnswersAsGit(t *testing.T) {
	g, ids := crissCrossHistory(t)
	ctx := context.Background()
	for name, r := range openEach(t, g.Dir) {
		for _, a := range ids {
			for _, b := range ids {
				wantBases, wantList := gitHistory(g, a, b)
				for i := range 2 {
					bases, err := r.mergeBases(ctx, ObjectID(a), ObjectID(b))
					if err != nil || fmt.Sprint(bases) != fmt.Sprint(wantBases) {
						t.Errorf("%s #%d: merge bases of %s %s = %v, %v; git says %v", name, i, a[:7], b[:7], bases, err, wantBases)
					}
					list, err := r.revList(ctx, ObjectID(a), []ObjectID{ObjectID(b)})
					if err != nil || fmt.Sprint(list) != fmt.Sprint(wantList) {
						t.Errorf("%s #%d: rev-list %s --not %s = %v, %v; git says %v", name, i, a[:7], b[:7], list, err, wantList)
					}
					for j := range list {
						list[j] = "changed by the caller"
					}
					for j := range bases {
						bases[j] = "changed by the caller"
					}
				}
			}
		}
	}
}

// TestReadNoteRunsGitOnlyWhenARefCanExist checks that reading a note runs
// no git notes when no ref git could take for the notes ref exists, and
// otherwise answers as git notes does.
func TestReadNoteRunsGitOnlyWhenARefCanExist(t *testing.T) {
	const ref = "refs/notes/ctxpack"
	addNote := func(g *gittest.Repo, at, text string) {
		g.Git("notes", "--ref="+ref, "add", "-m", text, at)
	}
	cases := []struct {
		name  string
		setup func(g *gittest.Repo, c1, c2 string)
		runs  int  // git notes processes
		found bool // a note of c1
		fails bool // git notes fails, so does ReadNote
	}{
		{name: "no notes", setup: func(*gittest.Repo, string, string) {}},
		{name: "other notes", setup: func(g *gittest.Repo, c1, _ string) {
			g.Git("notes", "--ref=refs/notes/other", "add", "-m", "x", c1)
		}},
		{name: "a note", setup: func(g *gittest.Repo, c1, _ string) { addNote(g, c1, "record") }, runs: 1, found: true},
		{name: "another commit's note", setup: func(g *gittest.Repo, _, c2 string) { addNote(g, c2, "record") }, runs: 1},
		{name: "packed", setup: func(g *gittest.Repo, c1, _ string) {
			addNote(g, c1, "record")
			g.Git("pack-refs", "--all")
		}, runs: 1, found: true},
		{name: "a branch git takes for the notes ref", setup: func(g *gittest.Repo, c1, _ string) {
			addNote(g, c1, "record")
			g.Git("update-ref", "refs/heads/"+ref, ref)
			g.Git("update-ref", "-d", ref)
		}, runs: 1, found: true},
		{name: "a dangling notes ref", setup: func(g *gittest.Repo, _, _ string) {
			g.WriteBytes(".git/"+ref, []byte(strings.Repeat("ab", 20)+"\n"))
		}, runs: 1, fails: true},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gittest.New(t)
			g.Write("a", "1\n")
			c1 := g.Commit("one")
			g.Write("a", "2\n")
			c2 := g.Commit("two")
			tc.setup(g, c1, c2)
			// What git notes says.
			out, err := g.TryGit(nil, "notes", "--ref="+ref, "list", c1)
			gitFound, gitFails := err == nil, err != nil && !strings.Contains(err.Error(), ": exit status 1\n")
			if gitFound != tc.found || gitFails != tc.fails {
				t.Fatalf("git notes list: %q, %v", out, err)
			}
			want := ""
			if gitFound {
				want = g.Git("cat-file", "blob", out)
			}
			runs := logGit(t)
			for name, r := range cliRepos(t, g.Dir) {
				runs.take()
				data, ok, err := r.ReadNote(ctx, ref, ObjectID(c1))
				if tc.fails != (err != nil) || ok != tc.found || strings.TrimSpace(string(data)) != want {
					t.Errorf("%s: ReadNote = %q, %v, %v; git notes: %q", name, data, ok, err, want)
				}
				if got := runs.take()["notes --ref"]; got != tc.runs {
					t.Errorf("%s: ran git notes %d times, want %d", name, got, tc.runs)
				}
			}
		})
	}
}

// TestRangeWalkAnswersAsGit checks the merge base and commit list of
// ranges against git's, and that git is asked only when walking them
// reads more than raceRangeWalk commits (beside the walk), or when git reads other
// parents than the commit objects name.
func TestRangeWalkAnswersAsGit(t *testing.T) {
	linear := func(g *gittest.Repo, n int) (base, head string) {
		g.Write("f", "0\n")
		base = g.Commit("base")
		for i := range n {
			g.Write("f", fmt.Sprintf("%d\n", i+1))
			head = g.Commit(fmt.Sprintf("c%d", i+1))
		}
		return base, head
	}
	// movedOn commits n times on a branch from start, and returns the last.
	movedOn := func(g *gittest.Repo, start string, n int) string {
		g.Git("checkout", "-q", "-b", "other", start)
		var last string
		for i := range n {
			g.Write("o", fmt.Sprintf("%d\n", i))
			last = g.Commit(fmt.Sprintf("other %d", i))
		}
		return last
	}
	none := map[string]int{}
	walked := map[string]int{"cat-file --batch": 1}                     // commits read, git not asked
	git := map[string]int{"merge-base --all": 1, "rev-list --stdin": 1} // nothing read: git's parents differ
	walkedThenGit := map[string]int{"cat-file --batch": 1, "merge-base --all": 1, "rev-list --stdin": 1}
	cases := []struct {
		name     string
		build    func(g *gittest.Repo) (base, head string)
		runs     map[string]int // the git processes the two questions start
		raced    bool           // runs are at most those: git was asked beside a walk that may answer first
		bounds   [2]int         // raceRangeWalk and maxRangeWalk for the case (0: as they are)
		baseIsMB bool           // git says base is the merge base (the fixture does what it says)
	}{
		{name: "one commit", build: func(g *gittest.Repo) (string, string) { return linear(g, 1) }, runs: walked, baseIsMB: true},
		{name: "three commits", build: func(g *gittest.Repo) (string, string) { return linear(g, 3) }, runs: walked, baseIsMB: true},
		{name: "base is head", build: func(g *gittest.Repo) (string, string) {
			_, head := linear(g, 1)
			return head, head
		}, runs: none, baseIsMB: true},
		{name: "as long as the walk", build: func(g *gittest.Repo) (string, string) { return linear(g, raceRangeWalk-1) }, runs: walked, baseIsMB: true},
		{name: "longer than the walk", build: func(g *gittest.Repo) (string, string) { return linear(g, raceRangeWalk) }, runs: walkedThenGit, raced: true, baseIsMB: true},
		// The bound cases race git from past the bound: git asked at
		// the walk's fifth read (a race from 4) answered before its
		// ninth now and then on a loaded machine, and the walk was not
		// "in vain" (CI, 2026-11-27).
		{name: "longer than the walk's bound", build: func(g *gittest.Repo) (string, string) { return linear(g, 20) }, runs: walkedThenGit, bounds: [2]int{16, 8}, baseIsMB: true},
		{name: "head below base", build: func(g *gittest.Repo) (string, string) {
			base, head := linear(g, 2)
			return head, base
		}, runs: walked},
		{name: "a merge in the range", build: func(g *gittest.Repo) (string, string) {
			base, _ := linear(g, 1)
			g.Git("checkout", "-q", "-b", "side", base)
			g.Write("s", "side\n")
			g.Commit("side")
			g.Git("checkout", "-q", "main")
			g.Git("merge", "-q", "--no-edit", "side")
			return base, g.Git("rev-parse", "HEAD")
		}, runs: walked, baseIsMB: true},
		{name: "base moved on", build: func(g *gittest.Repo) (string, string) {
			start, _ := linear(g, 1)
			head := g.Git("rev-parse", "HEAD")
			g.Git("checkout", "-q", "-b", "other", start)
			g.Write("o", "o\n")
			return g.Commit("other"), head
		}, runs: walked},
		{name: "both moved on", build: func(g *gittest.Repo) (string, string) {
			start, head := linear(g, 2)
			return movedOn(g, start, 3), head
		}, runs: walked},
		{name: "base moved on by a merge", build: func(g *gittest.Repo) (string, string) {
			start, _ := linear(g, 1)
			head := g.Git("rev-parse", "HEAD")
			g.Git("checkout", "-q", "-b", "side", start)
			g.Write("s", "s\n")
			g.Commit("side")
			g.Git("checkout", "-q", "-b", "other", start)
			g.Write("o", "o\n")
			g.Commit("other")
			g.Git("merge", "-q", "--no-edit", "side")
			return g.Git("rev-parse", "HEAD"), head
		}, runs: walked},
		{name: "base moved on farther than the walk", build: func(g *gittest.Repo) (string, string) {
			start, head := linear(g, 1)
			return movedOn(g, start, raceRangeWalk), head
		}, runs: walkedThenGit, raced: true},
		{name: "base moved on farther than the walk's bound", build: func(g *gittest.Repo) (string, string) {
			start, head := linear(g, 1)
			return movedOn(g, start, 20), head
		}, runs: walkedThenGit, bounds: [2]int{16, 8}},
		{name: "unrelated", build: func(g *gittest.Repo) (string, string) {
			_, head := linear(g, 1)
			g.Git("checkout", "-q", "--orphan", "other")
			g.Write("o", "o\n")
			return g.Commit("unrelated root"), head
		}, runs: walked},
		{name: "a shallow boundary in the range", build: func(g *gittest.Repo) (string, string) {
			base, head := linear(g, 2)
			g.WriteBytes(".git/shallow", []byte(g.Git("rev-parse", head+"~1")+"\n"))
			return base, head
		}, runs: git},
		{name: "a graft in the range", build: func(g *gittest.Repo) (string, string) {
			base, head := linear(g, 2)
			g.WriteBytes(".git/info/grafts", []byte(g.Git("rev-parse", head+"~1")+"\n"))
			return base, head
		}, runs: git},
		{name: "a replaced commit in the range", build: func(g *gittest.Repo) (string, string) {
			base, head := linear(g, 2)
			g.Git("replace", "--graft", head+"~1")
			return base, head
		}, runs: walked},
		{name: "a replaced commit that stays linear", build: func(g *gittest.Repo) (string, string) {
			base, head := linear(g, 3)
			g.Git("replace", "--graft", head, base)
			return base, head
		}, runs: walked, baseIsMB: true},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.bounds != [2]int{} {
				defer func(race, max int) { raceRangeWalk, maxRangeWalk = race, max }(raceRangeWalk, maxRangeWalk)
				raceRangeWalk, maxRangeWalk = tc.bounds[0], tc.bounds[1]
			}
			g := gittest.New(t)
			base, head := tc.build(g)
			out, _ := g.TryGit(nil, "merge-base", "--all", head, base)
			wantBases := strings.Fields(out)
			sort.Strings(wantBases)
			wantList := strings.Fields(g.Git("rev-list", head, "--not", base))
			sort.Strings(wantList)
			if isBase := fmt.Sprint(wantBases) == fmt.Sprint([]string{base}); isBase != tc.baseIsMB {
				t.Fatalf("git's merge base is %v, base %s", wantBases, base)
			}
			runs := logGit(t)
			for name, r := range cliRepos(t, g.Dir) {
				runs.take()
				for range 2 {
					bases, err := r.mergeBases(ctx, ObjectID(head), ObjectID(base))
					if err != nil || fmt.Sprint(bases) != fmt.Sprint(wantBases) {
						t.Errorf("%s: merge bases %v, %v; git says %v", name, bases, err, wantBases)
					}
					list, err := r.revList(ctx, ObjectID(head), []ObjectID{ObjectID(base)})
					if err != nil || fmt.Sprint(list) != fmt.Sprint(wantList) {
						t.Errorf("%s: rev-list %v, %v; git says %v", name, list, err, wantList)
					}
				}
				got := runs.take()
				if tc.raced {
					for k, n := range got {
						if n > tc.runs[k] {
							t.Errorf("%s: ran %v, want at most %v", name, got, tc.runs)
						}
					}
					if got["cat-file --batch"] != 1 {
						t.Errorf("%s: ran %v, want the walk", name, got)
					}
				} else if fmt.Sprint(got) != fmt.Sprint(tc.runs) {
					t.Errorf("%s: ran %v, want %v", name, got, tc.runs)
				}
				// A walk that reached its bound is not walked again for
				// the second question.
				_, walkedInVain := r.history.get(question("walk too long", ObjectID(head), ObjectID(base)))
				if want := fmt.Sprint(tc.runs) == fmt.Sprint(walkedThenGit) && !tc.raced; walkedInVain != want {
					t.Errorf("%s: walked in vain %v, want %v", name, walkedInVain, want)
				}
			}
		})
	}
}

// TestPrestart checks that the cat-file processes Prestart starts are the
// ones the reads use (each started once, whichever comes first), and that
// Close, even right after Prestart, leaves none running.
func TestPrestart(t *testing.T) {
	g := gittest.New(t)
	_, head := buildHistory(g)
	runs := logGit(t)
	ctx := context.Background()
	for name, r := range cliRepos(t, g.Dir) {
		runs.take()
		r.Prestart()
		r.Prestart() // a second call starts nothing more
		if got, err := r.Resolve("main"); err != nil || got.String() != head {
			t.Fatalf("%s: resolve main: %s, %v", name, got, err)
		}
		if _, err := r.commit(ctx, ObjectID(head)); err != nil {
			t.Fatalf("%s: read head: %v", name, err)
		}
		want := map[string]int{"cat-file --batch": 1, "cat-file --batch-check": 1}
		if got := runs.take(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: ran %v, want %v", name, got, want)
		}
	}
	for range 20 {
		r, err := OpenWith(g.Dir, OpenOptions{Backend: BackendCLI})
		if err != nil {
			t.Fatal(err)
		}
		r.Prestart()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		b, _ := r.cli()
		for _, c := range []*catFile{b.batch, b.check} {
			c.mu.Lock()
			running := c.cmd != nil
			c.mu.Unlock()
			if running {
				t.Fatalf("%s still running after Close", strings.Join(c.args, " "))
			}
		}
	}
}

// TestPrestartRoutesObjects: a run that reads objects (Prestart) reads a
// repository's through the git CLI when it was opened with the auto
// backend and packs routedObjectCount objects or more, else through
// go-git, and through go-git when go-git was asked for; the same commit
// either way.
func TestPrestartRoutesObjects(t *testing.T) {
	g := gittest.New(t)
	_, head := buildHistory(g)
	defer func(n int) { routedObjectCount = n }(routedObjectCount)
	for _, c := range []struct {
		backend       string
		from          int // routedObjectCount (the fixture packs none)
		before, after string
	}{
		{BackendAuto, 0, BackendGoGit, BackendCLI},
		{BackendAuto, 1, BackendGoGit, BackendGoGit},
		{BackendGoGit, 0, BackendGoGit, BackendGoGit},
	} {
		routedObjectCount = c.from
		r, err := OpenWith(g.Dir, OpenOptions{Backend: c.backend})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Backend(); got != c.before {
			t.Errorf("%q: opened with %s, want %s", c.backend, got, c.before)
		}
		r.Prestart()
		if got := r.Backend(); got != c.after {
			t.Errorf("%q: after Prestart %s, want %s", c.backend, got, c.after)
		}
		if got, err := r.Resolve("main"); err != nil || got.String() != head {
			t.Errorf("%q: resolve main: %s, %v", c.backend, got, err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// asking sends a blob ask for each of ids, its index the key, and closes
// the channel.
func asking(ids []ObjectID) <-chan blobAsk {
	asks := make(chan blobAsk)
	go func() {
		defer close(asks)
		for i, id := range ids {
			asks <- blobAsk{key: i, id: id}
		}
	}()
	return asks
}

// TestCatFileReadStream: one exchange reads many blobs in order, a missing
// object or a tree is that object's error only, more names than a pipe
// holds do not block, a name asked for only once the last answer is in is
// answered (each name is sent as it comes), and an exchange that ends
// early (its callback's error, a cancelled context) leaves the next read
// working.
func TestCatFileReadStream(t *testing.T) {
	g := gittest.New(t)
	g.Write("a", "alpha\n")
	g.Write("d/b", "beta\n")
	g.Commit("two")
	a, b := ObjectID(g.Git("rev-parse", "HEAD:a")), ObjectID(g.Git("rev-parse", "HEAD:d/b"))
	dir := ObjectID(g.Git("rev-parse", "HEAD:d"))
	missing := ObjectID(strings.Repeat("0", len(a)))
	ctx := context.Background()
	for name, r := range cliRepos(t, g.Dir) {
		cb, _ := r.cli()
		var got []string
		err := cb.blobs(ctx, asking([]ObjectID{a, missing, b, dir, a}), func(i int, data []byte, err error) error {
			got = append(got, fmt.Sprintf("%d:%q:%v", i, data, err != nil))
			return nil
		})
		want := []string{`0:"alpha\n":false`, `1:"":true`, `2:"beta\n":false`, `3:"":true`, `4:"alpha\n":false`}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: %v, %v; want %v", name, got, err, want)
		}
		many := make([]ObjectID, 5000) // 205 KB of names
		for i := range many {
			many[i] = []ObjectID{a, b}[i%2]
		}
		n := 0
		if err := cb.blobs(ctx, asking(many), func(i int, data []byte, err error) error {
			if err != nil || string(data) != []string{"alpha\n", "beta\n"}[i%2] {
				return fmt.Errorf("blob %d: %q, %v", i, data, err)
			}
			n++
			return nil
		}); err != nil || n != len(many) {
			t.Fatalf("%s: %d of %d read, %v", name, n, len(many), err)
		}
		// One name at a time, each asked for once the last is answered.
		asks, answered := make(chan blobAsk), make(chan struct{}, 1)
		go func() {
			defer close(asks)
			for i := range 20 {
				asks <- blobAsk{key: i, id: []ObjectID{a, b}[i%2]}
				<-answered
			}
		}()
		n = 0
		if err := cb.blobs(ctx, asks, func(i int, data []byte, err error) error {
			if err != nil || i != n || string(data) != []string{"alpha\n", "beta\n"}[i%2] {
				return fmt.Errorf("blob %d (answer %d): %q, %v", i, n, data, err)
			}
			n++
			answered <- struct{}{}
			return nil
		}); err != nil || n != 20 {
			t.Fatalf("%s: %d of 20 read one at a time, %v", name, n, err)
		}
		stop := errors.New("enough")
		if err := cb.blobs(ctx, asking(many), func(i int, _ []byte, _ error) error {
			if i == 10 {
				return stop
			}
			return nil
		}); !errors.Is(err, stop) {
			t.Fatalf("%s: err %v, want the callback's", name, err)
		}
		cctx, cancel := context.WithCancel(ctx)
		if err := cb.blobs(cctx, asking(many), func(i int, _ []byte, _ error) error {
			if i == 10 {
				cancel()
			}
			return nil
		}); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: err %v, want the context's", name, err)
		}
		if data, err := cb.blob(ctx, b); err != nil || string(data) != "beta\n" {
			t.Fatalf("%s: a read after the exchanges: %q, %v", name, data, err)
		}
	}
}

// TestGitProcessesOfAWorktree: where git lists the work tree (the CLI
// backend, a routed repository, a large index alone), the head tree the
// changes are found against is listed by one git ls-tree, beside the
// index's listing and git status, and the snapshot is the one a walk of
// the head's trees gives.
func TestGitProcessesOfAWorktree(t *testing.T) {
	g := gittest.New(t)
	buildHistory(g)
	dirtyWorktree(g)
	walked, err := OpenWith(g.Dir, OpenOptions{Backend: BackendGoGit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { walked.Close() })
	want, err := walked.Worktree(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	repos := cliRepos(t, g.Dir)
	index, err := OpenWith(g.Dir, OpenOptions{Backend: BackendGoGit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { index.Close() })
	index.routeLarge(1<<30, -1)
	if index.wt == nil {
		t.Fatal("the work tree is not listed through git")
	}
	repos["large index"] = index
	runs := logGit(t)
	for name, r := range repos {
		runs.take()
		snap, err := r.Worktree(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := runs.take(); got["ls-tree -r"] != 1 || got["ls-files -s"] != 1 || got["status --porcelain"] != 1 {
			t.Errorf("%s: the work-tree snapshot ran %v, want one ls-tree -r, ls-files and status each", name, got)
		}
		if got, want := dump(t, snap), dump(t, want); got != want {
			t.Errorf("%s: the snapshot differs from the walk's:\n%s\nwant\n%s", name, got, want)
		}
	}
}
