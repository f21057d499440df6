package action

import (
	"testing"

	"github.com/google/go-github/v60/github"
)

// FuzzPlanFor plans what to pack for an event payload and name (GitHub
// sends them; a pull request controls much of them): a plan whose ids are
// commit ids, or an error, never a panic.
func FuzzPlanFor(f *testing.F) {
	a := "0123456789abcdef0123456789abcdef01234567"
	b := "89abcdef0123456789abcdef0123456789abcdef"
	for _, seed := range []struct{ name, payload string }{
		{"push", `{"ref":"refs/heads/main","before":"` + a + `","after":"` + b + `","forced":true,"repository":{"default_branch":"main"}}`},
		{"pull_request", `{"number":3,"pull_request":{"number":3,"base":{"sha":"` + a + `","repo":{"full_name":"o/r"}},"head":{"sha":"` + b + `","repo":null}}}`},
		{"merge_group", `{"merge_group":{"head_sha":"` + b + `","base_sha":"` + a + `"}}`},
		{"workflow_run", `{"workflow_run":{"head_sha":"` + b + `","pull_requests":[{"number":1,"base":{"sha":"` + a + `"}}]}}`},
		{"issue_comment", `{"issue":{"number":9,"pull_request":{}}}`},
		{"create", `{"ref":"x","ref_type":"branch"}`},
		{"status", `{"sha":"HEAD; rm -rf /"}`},
		{"check_run", `{"check_run":null}`},
	} {
		f.Add(seed.name, []byte(seed.payload), a)
	}
	f.Fuzz(func(t *testing.T, name string, payload []byte, sha string) {
		ev, err := ParseEvent(payload)
		if err != nil {
			return
		}
		p, err := PlanFor(name, ev, sha)
		if err != nil {
			return
		}
		for field, id := range map[string]string{"base": p.Base, "head": p.Head, "alt head": p.AltHead} {
			if id != "" && checkSHA(field, id) != nil {
				t.Fatalf("plan %+v: %s %q is not a commit id", p, field, id)
			}
		}
		if p.Kind == "" || p.Why == "" {
			t.Fatalf("plan %+v", p)
		}
	})
}

// FuzzAddedLines reads the lines a patch from GitHub's API adds.
func FuzzAddedLines(f *testing.F) {
	f.Add("@@ -1,2 +1,3 @@\n a\n+b\n-c\n+d\n\\ No newline at end of file\n")
	f.Add("@@ -0,0 +1 @@\n+x")
	f.Add("@@ -1 +99999999999999999999 @@\n+x")
	f.Add("garbage\n@@")
	f.Fuzz(func(t *testing.T, patch string) {
		lines, err := addedLines(patch)
		if err != nil {
			return
		}
		for i, l := range lines {
			if l.Number < 1 || (i > 0 && l.Number <= lines[i-1].Number) {
				t.Fatalf("line %d: %+v after %+v", i, l, lines[max(i-1, 0)])
			}
		}
	})
}

// FuzzAPIChange turns a file entry of GitHub's API into a change: names
// and patches come from the pull request.
func FuzzAPIChange(f *testing.F) {
	f.Add("a/b.go", "renamed", "old.go", "@@ -1 +1 @@\n-a\n+b", 1, 1)
	f.Add("/etc/passwd", "added", "", "", -1, 0)
	f.Fuzz(func(t *testing.T, name, status, prev, patch string, add, del int) {
		_ = changesFromAPI([]*github.CommitFile{{Filename: &name, Status: &status, PreviousFilename: &prev, Patch: &patch, Additions: &add, Deletions: &del}})
	})
}

// FuzzClosedIssues reads the issues a pull request's body (its author's
// text) closes: positive numbers, once each, at most maxClosedIssues.
func FuzzClosedIssues(f *testing.F) {
	f.Add("Fixes #12, closes: #3 and Resolved #40.\nfixes #12")
	f.Add("close #99999999999999999999999 fix #0 fixes #-1")
	f.Add("closes #1 closes #2 closes #3 closes #4 closes #5 closes #6 closes #7 closes #8 closes #9 closes #10 closes #11")
	f.Add("FIXED\t#7 resolve:\n#8 \xff#9")
	f.Fuzz(func(t *testing.T, body string) {
		got := ClosedIssues(body)
		if len(got) > maxClosedIssues {
			t.Fatalf("%d issues, over %d", len(got), maxClosedIssues)
		}
		seen := map[int]bool{}
		for _, n := range got {
			if n <= 0 || seen[n] {
				t.Fatalf("issues %v: %d", got, n)
			}
			seen[n] = true
		}
	})
}
