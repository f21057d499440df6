package pack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// keyLines are the lines of a fake private key between its BEGIN and END
// lines: what no diff may show of it.
func keyLines(key string) []string {
	lines := strings.Split(key, "\n")
	return lines[1 : len(lines)-1]
}

// assertNoKeyLine fails when text holds 12 characters of any line of the
// key's body.
func assertNoKeyLine(t *testing.T, where, text string, lines []string) {
	t.Helper()
	for _, l := range lines {
		for i := 0; i+12 <= len(l); i += 6 {
			if strings.Contains(text, l[i:i+12]) {
				t.Fatalf("%s shows part of the key's line %q…", where, l[:6])
			}
		}
	}
}

// A change that edits a file holding a private key away from its BEGIN and
// END lines has a diff whose own text holds no key: its lines are read
// against the scans of both whole versions of the file, and each line of
// the key the diff shows (added, removed, context, or the heading after a
// hunk's ranges) is redacted; under secrets.action exclude or fail the
// diff is withheld. A version the builder never scanned as a file (its
// bytes classed binary) is scanned for its diff all the same.
func TestDiffShowsNoPartOfAKeyOfEitherVersion(t *testing.T) {
	key := secrettest.Make(41).RSAKey
	body := keyLines(key)
	around := func(k string) string { return "first\n" + k + "\nz1\nz2\nz3\nz4\n" }
	const control = "\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\n"
	var binaryHead strings.Builder // more than a tenth of the first 8 KiB are control bytes
	for range 20 {
		binaryHead.WriteString(control)
	}
	edit := func(text string, line int, to string) string {
		ls := strings.Split(text, "\n")
		ls[line-1] = to
		return strings.Join(ls, "\n")
	}
	drop := func(text string, line int) string {
		ls := strings.Split(text, "\n")
		return strings.Join(append(ls[:line-1:line-1], ls[line:]...), "\n")
	}
	endLine := len(body) + 3 // "first", BEGIN, the body, END
	tests := []struct {
		name     string
		old, new string
		heading  bool // the diff's hunk heading is a line of the key
		// headless: the new version holds lines of the key without its
		// BEGIN or END, which no scan of it finds: only the diff is
		// looked at.
		headless bool
	}{
		{name: "a line in the middle of the key edited", old: around(key), new: edit(around(key), 9, "X"+body[6][1:]), heading: true},
		{name: "the line after the key edited", old: around(key), new: edit(around(key), endLine+1, "Z1"), heading: true},
		{name: "a line of the key removed", old: around(key), new: drop(around(key), 9), heading: true},
		{name: "the key's END line removed", old: around(key), new: drop(around(key), endLine), heading: true, headless: true},
		{name: "the key's BEGIN line removed", old: around(key), new: drop(around(key), 2), headless: true},
		{name: "the old version classed binary", old: binaryHead.String() + around(key), new: edit(around(key), 9, "X"+body[6][1:]), heading: true},
		{name: "the old version classed binary, its key's END removed", old: binaryHead.String() + around(key), new: "first\n" + strings.Join(body, "\n") + "\n", headless: true},
	}
	sc, err := audit.NewScanner(audit.ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := gittest.New(t)
			g.Write("main.go", "package main\n\nfunc main() {}\n")
			g.Write("deploy/key.txt", tt.old)
			g.Commit("base")
			g.Write("deploy/key.txt", tt.new)
			g.Commit("edit the key file")
			for _, typ := range []string{policy.TypeAuto, policy.TypeSummary} {
				for _, action := range []string{policy.ActionRedact, policy.ActionExclude, policy.ActionFail} {
					pol := policy.Default()
					pol.Pack.Type, pol.Secrets.Action = typ, action
					res, err := pack.Build(context.Background(), lastCommitSnapshot(t, g.Dir), pack.Options{Policy: pol, Scanner: sc, ToolVersion: "0.0.0-test"})
					if err != nil {
						t.Fatal(err)
					}
					where := typ + " " + action
					if !tt.headless {
						assertNoKeyLine(t, where+" pack", string(res.JSON), body)
					}
					var c *pack.Change
					for i := range res.Pack.Changes {
						if res.Pack.Changes[i].Path == "deploy/key.txt" {
							c = &res.Pack.Changes[i]
						}
					}
					if c == nil {
						t.Fatalf("%s: no change of the key file", where)
					}
					assertNoKeyLine(t, where+" diff", c.Diff, body)
					if c.OriginalWithheld != pack.WithheldSecret {
						t.Errorf("%s: the change describes the originals (original_withheld %q)", where, c.OriginalWithheld)
					}
					if action != policy.ActionRedact {
						if c.Diff != "" {
							t.Errorf("%s: the diff is sent:\n%s", where, c.Diff)
						}
						continue
					}
					if c.Diff == "" || !strings.Contains(c.Diff, "[REDACTED:private-key]") {
						t.Fatalf("%s: the diff is withheld (%s) or shows no redaction:\n%s", where, c.DiffWithheld, c.Diff)
					}
					if tt.heading && !strings.Contains(c.Diff, " @@ [REDACTED:private-key]\n") {
						t.Errorf("%s: the hunk heading is not redacted:\n%s", where, c.Diff)
					}
					diffEvents := 0
					for _, e := range res.Secrets {
						if e.Where == "diff" && e.Path == "deploy/key.txt" && e.RuleID == "private-key" {
							diffEvents++
						}
					}
					if diffEvents == 0 {
						t.Errorf("%s: no secret event for the diff", where)
					}
				}
			}
		})
	}
}

// A change whose old version the source cannot give (a change listed by
// GitHub's API, whose base is not in the checkout) has its diff withheld:
// what it shows of that version was never scanned. An added file's diff
// has no old version to show.
func TestDiffOfAnUnreadOldVersionIsWithheld(t *testing.T) {
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	g.Write("notes.txt", "one\ntwo\nthree\n")
	g.Commit("base")
	g.Write("notes.txt", "one\n2\nthree\n")
	g.Write("added.txt", "new\n")
	g.Commit("change")
	snap := lastCommitSnapshot(t, g.Dir)
	for i := range snap.Changes {
		if snap.Changes[i].Old == nil && snap.Changes[i].Status != "added" {
			t.Fatalf("the source gave %s no old version", snap.Changes[i].Path)
		}
		snap.Changes[i].Old = nil
	}
	sc, err := audit.NewScanner(audit.ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := pack.Build(context.Background(), snap, pack.Options{Policy: policy.Default(), Scanner: sc, ToolVersion: "0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Pack.Changes {
		switch c.Path {
		case "notes.txt":
			if c.Diff != "" || c.DiffWithheld != pack.ReasonUnscanned {
				t.Errorf("notes.txt: diff withheld %q, sent %q", c.DiffWithheld, c.Diff)
			}
		case "added.txt":
			if c.DiffWithheld != "" {
				t.Errorf("added.txt: diff withheld %q", c.DiffWithheld)
			}
		}
	}
}

func TestDiffSecrets(t *testing.T) {
	// A "secret" of three lines in the middle of each version: bytes from
	// the 'k' of "key1" to the end of "key3".
	side := func(text string) *pack.DiffSide {
		s, e := strings.Index(text, "key1"), strings.Index(text, "key3")+len("key3")
		return &pack.DiffSide{Text: text, Findings: []pack.Finding{{RuleID: "r", StartLine: 3, Start: s, End: e}}}
	}
	old := side("a\nb\nkey1 x\nkey2\nkey3 y\nc\n")
	cur := side("a\nb\nkey1 x\nKEY2\nkey3 y\nc\n")
	header := "diff --git a/f b/f\n--- a/f\n+++ b/f\n"
	shown := func(diff string, spans []pack.DiffSecret) []string {
		var out []string
		for _, s := range spans {
			out = append(out, diff[s.Start:s.End])
		}
		return out
	}
	tests := []struct {
		name     string
		diff     string
		old, new *pack.DiffSide
		ok       bool
		want     string // the texts shown, joined by |
	}{
		{name: "added, removed and context lines", diff: header + "@@ -3,3 +3,3 @@ b\n key1 x\n-key2\n+KEY2\n key3 y\n",
			old: old, new: cur, ok: true, want: "key1 x|key1 x|key2|KEY2|key3|key3"},
		{name: "the heading is a line of the key", diff: header + "@@ -4,2 +4,2 @@ key1 x\n-key2\n+KEY2\n key3 y\n",
			old: old, new: cur, ok: true, want: "key1 x|key1 x|key2|KEY2|key3|key3"},
		{name: "a heading cut short: every key line it may be", diff: header + "@@ -4,2 +4,2 @@ key\n-key2\n+KEY2\n key3 y\n",
			old: old, new: cur, ok: true, want: "key|key|key|key|key|key2|KEY2|key3|key3"},
		{name: "a heading that is no line of the key", diff: header + "@@ -4,2 +4,2 @@ b\n-key2\n+KEY2\n key3 y\n",
			old: old, new: cur, ok: true, want: "key2|KEY2|key3|key3"},
		{name: "no line of the key", diff: header + "@@ -1,2 +1,3 @@\n a\n+new\n b\n",
			old: old, new: side("a\nnew\nb\nkey1 x\nKEY2\nkey3 y\nc\n"), ok: true, want: ""},
		{name: "a header alone", diff: header, ok: true, want: ""},
		{name: "an added file", diff: header + "@@ -0,0 +1,2 @@\n+key1 x\n+key2\n", new: side("key1 x\nkey2\nkey3\n"), ok: true, want: "key1 x|key2"},
		{name: "a line that is not the side's", diff: header + "@@ -3,1 +3,1 @@\n-key1 x\n+key1 z\n", old: old, new: cur},
		{name: "a line of an absent side", diff: header + "@@ -1 +1 @@\n-a\n+a!\n", new: cur},
		{name: "a line past the side's end", diff: header + "@@ -7 +7 @@\n-q\n+r\n", old: old, new: cur},
		{name: "a hunk cut short", diff: header + "@@ -1,3 +1,3 @@\n a\n b\n", old: old, new: cur},
		{name: "text after a hunk", diff: header + "@@ -1 +1 @@\n a\ntrailing\n", old: old, new: cur},
		{name: "a hunk header that does not read", diff: header + "@@ -x +1 @@\n a\n", old: old, new: cur},
		{name: "no newline at the end", diff: header + "@@ -1 +1 @@\n-key1\n\\ No newline at end of file\n+key1!\n\\ No newline at end of file\n",
			old: &pack.DiffSide{Text: "key1", Findings: []pack.Finding{{RuleID: "r", Start: 0, End: 4}}}, new: &pack.DiffSide{Text: "key1!"}, ok: true, want: "key1"},
		{name: "lines ending CRLF", diff: header + "@@ -1,2 +1,2 @@\n key1\r\n-key3\r\n+key3!\r\n",
			old: side("key1\r\nkey3\r\n"), new: &pack.DiffSide{Text: "key1\r\nkey3!\r\n"}, ok: true, want: "key1\r|key3"},
	}
	for _, tt := range tests {
		got, ok := pack.DiffSecrets(tt.diff, tt.old, tt.new)
		if ok != tt.ok {
			t.Errorf("%s: ok %v, want %v", tt.name, ok, tt.ok)
			continue
		}
		if s := strings.Join(shown(tt.diff, got), "|"); s != tt.want {
			t.Errorf("%s: shows %q, want %q", tt.name, s, tt.want)
		}
	}
}
