package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// HistoryFinding is a secret a commit of the range added.
type HistoryFinding = pack.Finding

// ScanHistory scans the lines each commit of the snapshot added, commit by
// commit and in parallel, so a secret added and later removed inside the
// range is found. Every file is scanned, excluded or not: pushing a commit
// publishes it. Findings come back in commit order, then path and line.
func ScanHistory(ctx context.Context, s *audit.Scanner, snap *pack.Snapshot) ([]HistoryFinding, error) {
	if err := snap.AwaitCommits(); err != nil {
		return nil, err
	}
	var items []audit.ScanItem
	order := map[string]int{}
	for i, c := range snap.Commits {
		order[c.Commit] = i
		for _, f := range c.Files {
			items = append(items, audit.ScanItem{Path: f.Path, Commit: c.Commit, Lines: f.Lines})
		}
	}
	found, err := s.ScanAll(ctx, items)
	if err != nil {
		return nil, fmt.Errorf("per-commit secret scan: %w", err)
	}
	sort.SliceStable(found, func(i, j int) bool { return order[found[i].Commit] < order[found[j].Commit] })
	// Lines that could not be read were not scanned: the scan is incomplete.
	var unread []string
	for _, c := range snap.Commits {
		for _, p := range c.Unread {
			unread = append(unread, fmt.Sprintf("%s in commit %s", p, short(c.Commit)))
		}
	}
	if len(unread) > 0 {
		return found, &unreadHistoryError{unread: unread}
	}
	return found, nil
}

// unreadHistoryError is a per-commit scan that could not read the added
// lines of some commits' files: the history scan is unavailable, not broken.
type unreadHistoryError struct{ unread []string }

func (e *unreadHistoryError) Error() string {
	return fmt.Sprintf("the added lines of %s could not be read (content not in this partial clone, and its promisor remote could not provide it): make the promisor remote reachable and run again", strings.Join(e.unread, ", "))
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Judge builds the verdict of a build: the independent audit of the pack
// bytes, plus what only the build knows (secrets handled by policy, secrets in
// the history of the range).
func Judge(ctx context.Context, out *Outcome, history []HistoryFinding, historyErr error) (*audit.Verdict, error) {
	// The builder's pack is let go before the audit decodes the bytes, and
	// the pack the audit decoded (and found to serialize to exactly those
	// bytes) takes its place for what follows: a large pack's contents are
	// held once, not twice, and the record, renderings and reports describe
	// the pack as written.
	out.Result.Pack = nil
	v, decoded, err := audit.PackDecoded(ctx, out.Result.JSON, audit.Input{
		Policy:    out.Policy,
		Scanner:   out.Scanner,
		Sensitive: audit.SensitiveFile,
		Snapshot:  out.Snapshot,
	})
	if err != nil {
		return nil, err
	}
	if decoded == nil {
		return nil, fmt.Errorf("audit: the pack just built is not a JSON pack document: %s", v.Failed[0].Message)
	}
	out.Result.Pack = decoded
	pol := out.Policy
	introduced := map[string]bool{}
	for _, f := range history {
		introduced[f.Path+"\x00"+f.RuleID] = true
		c := audit.Check{Kind: audit.KindSecret, Code: audit.CodeSecretInHistory,
			Message: fmt.Sprintf("commit %s adds a secret at %s:%d (rule %s)", short(f.Commit), f.Path, f.StartLine, f.RuleID),
			Details: map[string]any{"commit": f.Commit, "path": f.Path, "line": f.StartLine, "rule_id": f.RuleID, "fingerprint": f.Fingerprint}}
		if pol.Secrets.History == "fail" && pol.FailsOn(policy.FailSecretInHistory) {
			v.Fail(c)
		} else {
			v.Warn(c)
		}
	}
	var unread *unreadHistoryError
	switch {
	case errors.As(historyErr, &unread):
		// Like history a shallow checkout lacks (NotRun.History): the
		// policy may report it as skipped.
		c := audit.Check{Kind: audit.KindSecret, Code: audit.CodeHistoryUnavailable,
			Message: "the per-commit secret scan could not read every commit: " + unread.Error(),
			Details: map[string]any{"unread": unread.unread}}
		if pol.HistoryUnavailableFails() {
			c.Message += " (secrets.history_unavailable: warn in the policy reports this as skipped instead)"
			v.Fail(c)
		} else {
			v.Skip(c)
		}
	case historyErr != nil:
		v.Fail(audit.Check{Kind: audit.KindInternal, Code: audit.CodeInternal,
			Message: "the per-commit secret scan could not run: " + historyErr.Error()})
	}
	for _, e := range out.Result.Secrets {
		details := map[string]any{"path": e.Path, "line": e.StartLine, "rule_id": e.RuleID, "where": e.Where, "action": e.Action}
		switch {
		case e.Where == pack.WhereName && e.Commit != "":
			// A name only a commit of the range brings: like a secret it added.
			details["commit"], details["fingerprint"] = e.Commit, e.Fingerprint
			c := audit.Check{Kind: audit.KindSecret, Code: audit.CodeSecretInHistory,
				Message: fmt.Sprintf("commit %s adds a file whose name holds a secret, %s (rule %s)", short(e.Commit), e.Path, e.RuleID),
				Details: details}
			if pol.Secrets.History == "fail" && pol.FailsOn(policy.FailSecretInHistory) {
				v.Fail(c)
			} else {
				v.Warn(c)
			}
		case e.Action == pack.SecretFailed:
			v.Fail(audit.Check{Kind: audit.KindSecret, Code: audit.CodeSecretPolicyFail,
				Message: fmt.Sprintf("secret in %s %s:%d (rule %s); secrets.action is fail, so the file was kept out", e.Where, e.Path, e.StartLine, e.RuleID),
				Details: details})
		case !introduced[e.Path+"\x00"+e.RuleID]:
			v.Warn(audit.Check{Kind: audit.KindSecret, Code: audit.CodeSecretInContext,
				Message: fmt.Sprintf("secret in %s %s:%d (rule %s) was %s", e.Where, e.Path, e.StartLine, e.RuleID, e.Action),
				Details: details})
		}
	}
	v.Sort()
	return v, nil
}
