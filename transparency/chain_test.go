package transparency

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/go-git/go-git/v5"
)

// chain is a five-commit repository whose every commit has its record as a
// note, each bound to its parent's.
type chain struct {
	r       *gittest.Repo
	repo    *git.Repository
	commits []string
	records []*Record
}

func newChain(t *testing.T, n int) *chain {
	t.Helper()
	r := newFixture(t)
	c := &chain{r: r}
	for i := 1; i <= n; i++ {
		r.Write(fmt.Sprintf("src/f%d.go", i), fmt.Sprintf("package src\n\nconst F%d = %d\n", i, i))
		c.commits = append(c.commits, r.Commit(fmt.Sprintf("commit %d", i)))
	}
	c.repo = openGit(t, r.Dir)
	for i := range c.commits {
		c.note(t, i, nil)
	}
	return c
}

// note (re)builds the record of commit i, bound to its parent's current
// note, lets edit change it, and stores it.
func (c *chain) note(t *testing.T, i int, edit func(*Record)) {
	t.Helper()
	if len(c.records) <= i {
		prev, err := PreviousDigest(c.repo, hash(c.commits[i]))
		if err != nil {
			t.Fatal(err)
		}
		rec, _ := recordFor(t, c.r.Dir, "", c.commits[i], prev)
		c.records = append(c.records, rec)
	}
	rec := *c.records[i]
	prev, err := PreviousDigest(c.repo, hash(c.commits[i]))
	if err != nil {
		t.Fatal(err)
	}
	rec.Previous = prev
	if edit != nil {
		edit(&rec)
	}
	data := mustValid(t, &rec)
	if err := WriteNote(c.repo, hash(c.commits[i]), data); err != nil {
		t.Fatal(err)
	}
}

func (c *chain) raw(t *testing.T, i int) []byte {
	t.Helper()
	data, ok, err := ReadNote(c.repo, hash(c.commits[i]))
	if err != nil || !ok {
		t.Fatalf("note of commit %d: %v %v", i+1, ok, err)
	}
	return data
}

type brk struct {
	commit int // 1-based index into the chain
	kind   string
}

func TestVerifyChain(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(t *testing.T, c *chain)
		want    []brk
		records int
		start   int // 1-based; 0 = none
	}{
		{"intact", nil, nil, 5, 1},
		{"edited note (rewritten with WriteNote)", func(t *testing.T, c *chain) {
			c.note(t, 2, func(r *Record) { r.ContextPackInfo.FilesIncluded += 7 })
		}, []brk{{3, BreakEditedNote}}, 5, 1},
		{"edited note (git notes add -f, canonical bytes)", func(t *testing.T, c *chain) {
			rec, err := ParseRecord(c.raw(t, 2))
			if err != nil {
				t.Fatal(err)
			}
			rec.Verdict.Status = "fail"
			data := mustValid(t, rec)
			f := filepath.Join(t.TempDir(), "note")
			if err := os.WriteFile(f, data, 0o644); err != nil {
				t.Fatal(err)
			}
			c.r.Git("notes", "--ref=ctxpack", "add", "-f", "-F", f, c.commits[2])
		}, []brk{{3, BreakEditedNote}}, 5, 1},
		{"edited tip by hand (not canonical)", func(t *testing.T, c *chain) {
			var v any
			if err := json.Unmarshal(c.raw(t, 4), &v); err != nil {
				t.Fatal(err)
			}
			pretty, _ := json.MarshalIndent(v, "", "  ")
			c.r.Git("notes", "--ref=ctxpack", "add", "-f", "-m", string(pretty), c.commits[4])
		}, []brk{{5, BreakEditedNote}}, 5, 1},
		{"note removed", func(t *testing.T, c *chain) {
			c.r.Git("notes", "--ref=ctxpack", "remove", c.commits[2])
		}, []brk{{3, BreakMissingNote}}, 4, 1},
		{"note removed and commit 4's unrecorded", func(t *testing.T, c *chain) {
			c.r.Git("notes", "--ref=ctxpack", "remove", c.commits[2])
			c.r.Git("notes", "--ref=ctxpack", "remove", c.commits[3])
		}, []brk{{4, BreakMissingNote}, {3, BreakMissingNote}}, 3, 1},
		{"digest mismatch", func(t *testing.T, c *chain) {
			c.note(t, 3, func(r *Record) { r.Previous = DigestOf([]byte("something else")) })
			c.note(t, 4, nil)
		}, []brk{{4, BreakDigestMismatch}}, 5, 1},
		{"no previous over a noted parent", func(t *testing.T, c *chain) {
			c.note(t, 3, func(r *Record) { r.Previous = "" })
			c.note(t, 4, nil)
		}, []brk{{4, BreakDigestMismatch}}, 5, 1},
		{"unparsable note", func(t *testing.T, c *chain) {
			if err := WriteNote(c.repo, hash(c.commits[1]), []byte("not a record\n")); err != nil {
				t.Fatal(err)
			}
		}, []brk{{2, BreakEditedNote}, {2, BreakUnparsableNote}}, 5, 1},
		{"record of another commit", func(t *testing.T, c *chain) {
			if err := WriteNote(c.repo, hash(c.commits[2]), c.raw(t, 1)); err != nil {
				t.Fatal(err)
			}
			// Commit 4 bound the old note (edited); the moved record names
			// commit 1's record as previous, not commit 2's (mismatch).
		}, []brk{{3, BreakEditedNote}, {3, BreakDigestMismatch}}, 5, 1},
		{"commits newer than any note are not breaks", func(t *testing.T, c *chain) {
			c.r.Write("late.txt", "late\n")
			c.r.Commit("not recorded yet")
		}, nil, 5, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChain(t, 5)
			if tt.mutate != nil {
				tt.mutate(t, c)
			}
			head := hash(c.r.Git("rev-parse", "HEAD"))
			// A fresh handle: the CLI may have changed the notes ref.
			c.repo = openGit(t, c.r.Dir)
			rep, err := VerifyChain(c.repo, head)
			if err != nil {
				t.Fatal(err)
			}
			index := map[string]int{}
			for i, h := range c.commits {
				index[h] = i + 1
			}
			var got []brk
			for _, b := range rep.Breaks {
				k := brk{index[b.Commit], b.Kind}
				if !slices.Contains(got, k) {
					got = append(got, k)
				}
				if b.Message == "" {
					t.Errorf("break without a message: %+v", b)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("breaks = %v, want %v\n%+v", got, tt.want, rep.Breaks)
			}
			if rep.Records != tt.records {
				t.Errorf("records = %d, want %d", rep.Records, tt.records)
			}
			if wantStart := ""; tt.start > 0 {
				wantStart = c.commits[tt.start-1]
				if rep.Start != wantStart {
					t.Errorf("start = %s, want commit %d", rep.Start, tt.start)
				}
			}
			brks, err := Verify(c.repo, head)
			if err != nil || len(brks) != len(rep.Breaks) {
				t.Fatalf("Verify: %v %v", brks, err)
			}
			sameChain(t, c.r.Dir, head.String(), rep)
		})
	}
}

// A commit that was never recorded starts a new chain at its child: the
// child's previous is empty because its first parent has no note.
func TestVerifyStopsAtChainStart(t *testing.T) {
	r := newFixture(t)
	cs := commits(t, r, 4)
	repo := openGit(t, r.Dir)
	for _, i := range []int{0, 2, 3} { // commit 2 is never recorded
		prev, err := PreviousDigest(repo, hash(cs[i]))
		if err != nil {
			t.Fatal(err)
		}
		rec, _ := recordFor(t, r.Dir, "", cs[i], prev)
		if err := WriteNote(repo, hash(cs[i]), mustValid(t, rec)); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := VerifyChain(repo, hash(cs[3]))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Breaks) != 0 || rep.Start != cs[2] || rep.Records != 2 {
		t.Fatalf("report %+v, want no breaks, start at commit 3, 2 records", rep)
	}
}

func TestLog(t *testing.T) {
	c := newChain(t, 5)
	c.r.Write("late.txt", "late\n")
	late := c.r.Commit("not recorded")
	if err := WriteNote(c.repo, hash(c.commits[1]), []byte("garbage\n")); err != nil {
		t.Fatal(err)
	}
	entries, err := Log(c.repo, hash(late), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 6 {
		t.Fatalf("%d entries", len(entries))
	}
	if e := entries[0]; e.Commit != late || e.HasNote || e.PackID != "" {
		t.Fatalf("unrecorded commit: %+v", e)
	}
	for i, e := range entries[1:] {
		idx := 4 - i
		if e.Commit != c.commits[idx] || !e.HasNote {
			t.Fatalf("entry %d: %+v", i+1, e)
		}
		if idx == 1 {
			if e.Error == "" || e.PackID != "" {
				t.Fatalf("garbage note: %+v", e)
			}
			continue
		}
		rec := c.records[idx]
		if e.PackID != rec.PackID || e.Type != "full" || e.Verdict != "pass" ||
			e.Included != rec.ContextPackInfo.FilesIncluded || e.Excluded != rec.ContextPackInfo.FilesExcluded ||
			e.Secrets != 0 || !strings.HasPrefix(e.Digest, "sha256:") {
			t.Fatalf("entry for commit %d: %+v", idx+1, e)
		}
	}
	rep, err := VerifyChain(c.repo, hash(late))
	if err != nil {
		t.Fatal(err)
	}
	sameChain(t, c.r.Dir, late, rep)
	two, err := Log(c.repo, hash(late), 2)
	if err != nil || len(two) != 2 || two[1].Commit != c.commits[4] {
		t.Fatalf("Log -n 2: %+v %v", two, err)
	}
}

// TestVerifyTellsMissingFromBroken: a record written before its parent's
// (two runs at once) and a commit never recorded are missing records, not
// breaks; a record naming a previous record that never existed is a break.
func TestVerifyTellsMissingFromBroken(t *testing.T) {
	setup := func(n int) (*gittest.Repo, *git.Repository, []string, func(i int, prev string)) {
		r := newFixture(t)
		var cs []string
		for i := 1; i <= n; i++ {
			r.Write(fmt.Sprintf("f%d.go", i), fmt.Sprintf("package f\n\nconst F%d = %d\n", i, i))
			cs = append(cs, r.Commit(fmt.Sprintf("commit %d", i)))
		}
		repo := openGit(t, r.Dir)
		note := func(i int, prev string) {
			if prev == "bound" {
				var err error
				if prev, err = PreviousDigest(repo, hash(cs[i])); err != nil {
					t.Fatal(err)
				}
			}
			rec, _ := recordFor(t, r.Dir, "", cs[i], prev)
			if err := WriteNote(repo, hash(cs[i]), mustValid(t, rec)); err != nil {
				t.Fatal(err)
			}
		}
		return r, repo, cs, note
	}

	// Commit 3 is recorded while commit 2 has no record yet, then commit 2
	// is recorded, bound to commit 1.
	r, repo, cs, note := setup(3)
	note(0, "bound")
	note(2, "bound")
	note(1, "bound")
	rep, err := VerifyChain(repo, hash(cs[2]))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Breaks) != 0 || len(rep.Missing) != 1 || rep.Missing[0].Kind != MissingRecordedBeforeParent || rep.Missing[0].Commit != cs[2] || rep.Records != 3 {
		t.Fatalf("recorded before its parent: %+v", rep)
	}
	sameChain(t, r.Dir, cs[2], rep)

	// Commit 4 names a previous record of commit 3 that never existed (a
	// break); commit 2 was never recorded (missing).
	r, repo, cs, note = setup(4)
	note(0, "bound")
	note(3, DigestOf([]byte("a record that was never written")))
	rep, err = VerifyChain(repo, hash(cs[3]))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Breaks) != 1 || rep.Breaks[0].Commit != cs[2] || rep.Breaks[0].Kind != BreakMissingNote ||
		len(rep.Missing) != 1 || rep.Missing[0].Commit != cs[1] || rep.Missing[0].Kind != MissingRecord {
		t.Fatalf("breaks %+v missing %+v", rep.Breaks, rep.Missing)
	}
	sameChain(t, r.Dir, cs[3], rep)
}
