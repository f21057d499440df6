package pack_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// Every text of the intent is scanned whole before it is capped: a secret
// the cap cuts is replaced first, so no part of it is left for a scan of
// the capped text to miss. The cap keeps a redaction marker whole or drops
// it, and the intent's redactions are those whose marker it holds; a secret
// the cap left out still is an event.
func TestIntentIsScannedBeforeItIsCapped(t *testing.T) {
	const secret = "FAKESECRET0123456789AB"
	// at puts the secret so that it starts 15 runes before a cap of n.
	at := func(n int) string { return strings.Repeat("a", n-16) + " " + secret + " and more words after it" }
	checklist := func(n int) string { return "- [ ] " + strings.Repeat("c", n-16) + " " + secret + "\n" }
	task := func(t pack.Task) *pack.Task { return &t }
	pr := func(p pack.PullRequest) *pack.PullRequest { p.Number = 7; return &p }
	commit := func(subject, body string) []pack.CommitMessage {
		return []pack.CommitMessage{{Commit: strings.Repeat("1", 40), Subject: subject, Body: body}}
	}
	for _, tc := range []struct {
		name   string
		intent pack.Intent
		field  string
		text   func(*pack.Intent) string
		marker bool // the field keeps its secret's marker
	}{
		{"goal", pack.Intent{Goal: at(600)}, "goal", func(in *pack.Intent) string { return in.Goal }, false},
		{"task title", pack.Intent{Task: task(pack.Task{Title: at(300)})}, "task.title", func(in *pack.Intent) string { return in.Task.Title }, false},
		{"task goal", pack.Intent{Task: task(pack.Task{Goal: at(600)})}, "task.goal", func(in *pack.Intent) string { return in.Task.Goal }, false},
		{"task body", pack.Intent{Task: task(pack.Task{Title: "t", Body: at(4000)})}, "task.body", func(in *pack.Intent) string { return in.Task.Body }, false},
		{"task acceptance", pack.Intent{Task: task(pack.Task{Title: "t", Acceptance: []string{at(300)}})}, "task.acceptance[0]", func(in *pack.Intent) string { return in.Task.Acceptance[0] }, false},
		{"pull request title", pack.Intent{PullRequest: pr(pack.PullRequest{Title: at(300)})}, "pull_request.title", func(in *pack.Intent) string { return in.PullRequest.Title }, false},
		{"pull request body", pack.Intent{PullRequest: pr(pack.PullRequest{Title: "t", Body: at(4000)})}, "pull_request.body", func(in *pack.Intent) string { return in.PullRequest.Body }, false},
		{"closed issue", pack.Intent{PullRequest: pr(pack.PullRequest{Title: "t", Closes: []pack.IssueRef{{Number: 1, Title: at(300)}}})}, "pull_request.closes[0].title", func(in *pack.Intent) string { return in.PullRequest.Closes[0].Title }, false},
		{"commit subject", pack.Intent{Commits: commit(at(200), "")}, "commits[0].subject", func(in *pack.Intent) string { return in.Commits[0].Subject }, false},
		{"commit body", pack.Intent{Commits: commit("s", at(1200))}, "commits[0].body", func(in *pack.Intent) string { return in.Commits[0].Body }, false},
		{"checklist item", pack.Intent{PullRequest: pr(pack.PullRequest{Title: "t", Body: checklist(300)})}, "acceptance[0]", func(in *pack.Intent) string { return in.Acceptance[0] }, false},
		{"marker kept", pack.Intent{Commits: commit("s", "key "+secret+"\n"+strings.Repeat("b", 1300))}, "commits[0].body", func(in *pack.Intent) string { return in.Commits[0].Body }, true},
		{"secret past the cap", pack.Intent{Commits: commit("s", strings.Repeat("b", 1300)+" "+secret)}, "commits[0].body", func(in *pack.Intent) string { return in.Commits[0].Body }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := lastCommitSnapshot(t, changeRepo(t).Dir)
			snap.Intent = tc.intent
			res, err := pack.Build(context.Background(), snap, pack.Options{Policy: policy.Default(), Scanner: &recordingScanner{scanned: map[string]int{}}, ToolVersion: "0.0.0-test"})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(res.JSON), "FAKESECRET") {
				t.Fatalf("the pack holds a part of the secret: %+v", res.Pack.Intent)
			}
			in := res.Pack.Intent
			// An acceptance item is capped, not counted as the intent's
			// truncation.
			if in == nil || in.Truncated == strings.HasPrefix(tc.field, "acceptance") {
				t.Fatalf("intent %+v: truncated %v", in, in != nil && in.Truncated)
			}
			checkIntentRedactions(t, in)
			if got := tc.text(in); strings.Contains(got, "[REDACTED:") != tc.marker {
				t.Errorf("%s = %q; want the marker: %v", tc.field, got, tc.marker)
			}
			source := tc.field
			if source == "acceptance[0]" {
				source = "pull_request.body" // an item's secret is an event of the text it is cut from
			}
			event := false
			for _, e := range res.Secrets {
				event = event || e.Where == "intent" && e.Path == "(intent) "+source
			}
			if !event {
				t.Errorf("no secret event for %s: %+v", source, res.Secrets)
			}
		})
	}
}

// redactionMarkerAt matches a redaction marker and what follows its rule.
var redactionMarkerAt = regexp.MustCompile(`\[REDACTED:[^\]\s]*\]?`)

// checkIntentRedactions: every marker of the intent is whole, and each
// field lists one redaction per marker it holds.
func checkIntentRedactions(t *testing.T, in *pack.Intent) {
	t.Helper()
	texts := map[string]string{"goal": in.Goal}
	if in.Task != nil {
		texts["task.title"], texts["task.goal"], texts["task.body"] = in.Task.Title, in.Task.Goal, in.Task.Body
		for i, a := range in.Task.Acceptance {
			texts[fmt.Sprintf("task.acceptance[%d]", i)] = a
		}
	}
	if p := in.PullRequest; p != nil {
		texts["pull_request.title"], texts["pull_request.body"] = p.Title, p.Body
		for i, c := range p.Closes {
			texts[fmt.Sprintf("pull_request.closes[%d].title", i)] = c.Title
		}
	}
	for i, c := range in.Commits {
		texts[fmt.Sprintf("commits[%d].subject", i)], texts[fmt.Sprintf("commits[%d].body", i)] = c.Subject, c.Body
	}
	for i, a := range in.Acceptance {
		texts[fmt.Sprintf("acceptance[%d]", i)] = a
	}
	listed := map[string]int{}
	for _, r := range in.Redactions {
		listed[r.Field]++
	}
	for field, text := range texts {
		markers := redactionMarkerAt.FindAllString(text, -1)
		for _, m := range markers {
			if m != "[REDACTED:fake-secret]" {
				t.Errorf("%s: a cut marker %q in %q", field, m, text)
			}
		}
		if listed[field] != len(markers) {
			t.Errorf("%s: %d redactions listed, %d markers in %q", field, listed[field], len(markers), text)
		}
	}
}

// A commit body over the bodies' bound is left out whole, with the
// redactions it had.
func TestIntentBodyLeftOutListsNoRedaction(t *testing.T) {
	const secret = "FAKESECRET0123456789AB"
	snap := lastCommitSnapshot(t, changeRepo(t).Dir)
	snap.Intent = pack.Intent{}
	for i := range 6 {
		snap.Intent.Commits = append(snap.Intent.Commits, pack.CommitMessage{Commit: strings.Repeat(fmt.Sprint(i), 40), Subject: "s", Body: "key " + secret + "\n" + strings.Repeat("b", 1100)})
	}
	res, err := pack.Build(context.Background(), snap, pack.Options{Policy: policy.Default(), Scanner: &recordingScanner{scanned: map[string]int{}}, ToolVersion: "0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	in := res.Pack.Intent
	if in == nil || in.Commits[5].Body != "" || in.Omitted != "left out: the bodies of 1 commit messages" {
		t.Fatalf("intent %+v", in)
	}
	checkIntentRedactions(t, in)
	if strings.Contains(string(res.JSON), "FAKESECRET") {
		t.Fatal("the pack holds the secret")
	}
}
