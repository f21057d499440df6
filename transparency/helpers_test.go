package transparency

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pack/schema"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
)

// fakeScanner finds FAKESECRET tokens: enough to exercise the record's
// secret rows without gitleaks.
type fakeScanner struct{}

var fakeSecret = regexp.MustCompile(`FAKESECRET[0-9A-Z]{12}`)

func (fakeScanner) Scan(_ context.Context, path string, content []byte) ([]pack.Finding, error) {
	var out []pack.Finding
	for _, m := range fakeSecret.FindAllIndex(content, -1) {
		line := strings.Count(string(content[:m[0]]), "\n") + 1
		out = append(out, pack.Finding{
			RuleID: "fake-secret", Path: path, StartLine: line, EndLine: line,
			Fingerprint: fmt.Sprintf("%s:fake-secret:%d", path, line),
			Start:       m[0], End: m[1],
		})
	}
	return out, nil
}

// historyFindings scans each commit's added lines like the pipeline's
// per-commit scan does.
func historyFindings(snap *pack.Snapshot) []pack.Finding {
	var out []pack.Finding
	for _, c := range snap.Commits {
		for _, f := range c.Files {
			for _, l := range f.Lines {
				if fakeSecret.MatchString(l.Text) {
					out = append(out, pack.Finding{
						RuleID: "fake-secret", Path: f.Path, Commit: c.Commit,
						StartLine: l.Number, EndLine: l.Number,
						Fingerprint: fmt.Sprintf("%s:%s:fake-secret:%d", c.Commit, f.Path, l.Number),
					})
				}
			}
		}
	}
	return out
}

// newFixture makes a repository whose name does not depend on the temp dir.
func newFixture(t *testing.T) *gittest.Repo {
	t.Helper()
	r := gittest.New(t)
	r.Git("remote", "add", "origin", "https://example.com/acme/demo.git")
	return r
}

// recordFor packs commit (or base..head when base is set) of the fixture
// with a fake scanner and builds its record, validated against the schema.
func recordFor(t *testing.T, dir, base, head, previous string) (*Record, *pack.Result) {
	t.Helper()
	ctx := context.Background()
	repo, err := source.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var snap *pack.Snapshot
	if base != "" {
		snap, err = repo.Range(ctx, base, head, policy.ScopeTree)
	} else {
		snap, err = repo.Commit(ctx, head, policy.ScopeTree)
	}
	if err != nil {
		t.Fatal(err)
	}
	pol := policy.Default()
	res, err := pack.Build(ctx, snap, pack.Options{Policy: pol, Scanner: fakeScanner{}, ToolVersion: "0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	v := audit.NewVerdict()
	hist := historyFindings(snap)
	if len(hist) > 0 {
		v.Fail(audit.Check{Kind: audit.KindSecret, Code: audit.CodeSecretInHistory, Message: "a secret is in the history of the range",
			Details: map[string]any{"count": len(hist)}})
	}
	rec := Build(BuildInput{
		Result:          res,
		PolicyDigest:    pol.Digest(),
		GitleaksVersion: "v8.30.1",
		GitleaksRules:   222,
		RulesDigest:     strings.Repeat("ab", 32),
		History:         hist,
		HistoryAction:   "reported",
		Verdict:         v,
		Previous:        previous,
	})
	mustValid(t, rec)
	return rec, res
}

// mustValid checks a record against the schema: every record a test makes
// goes through it.
func mustValid(t *testing.T, rec *Record) []byte {
	t.Helper()
	data, err := rec.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.ValidateRecord(data); err != nil {
		t.Fatalf("record does not validate: %v\n%s", err, data)
	}
	return data
}

func hash(s string) plumbing.Hash { return plumbing.NewHash(s) }
