package action

import (
	"context"
	"regexp"
	"strconv"

	"github.com/ctxpack/ctxpack/pack"
)

// maxClosedIssues bounds the issues whose titles are asked of the API.
const maxClosedIssues = 10

// closingKeyword matches GitHub's closing keywords before an issue of the
// same repository: "Closes #12", "fixes: #3", "Resolved #40".
var closingKeyword = regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d+)\b`)

// ClosedIssues returns the issue numbers a pull request body closes, in
// order, once each, at most maxClosedIssues.
func ClosedIssues(body string) []int {
	var out []int
	seen := map[int]bool{}
	for _, m := range closingKeyword.FindAllStringSubmatch(body, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil || n <= 0 || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
		if len(out) == maxClosedIssues {
			break
		}
	}
	return out
}

// pullIntent is the pull request's part of the pack's intent: its title,
// body and labels (from the payload, else from the API) and the titles of
// the issues it closes (from the API). What the API cannot give is left
// out with a warning; the pack is built either way. Every text is
// secret-scanned by the builder like any content.
func (r *runner) pullIntent(ctx context.Context) *pack.PullRequest {
	if r.plan.PR <= 0 {
		return nil
	}
	out := &pack.PullRequest{Number: r.plan.PR}
	pr := r.plan.Pull
	if pr == nil || pr.Title == nil {
		gh, err := r.github()
		if err != nil {
			r.rep.warnf("pull request #%d: its title and body are not in the payload and the API cannot be used (%v): the pack's intent has its commit messages only", r.plan.PR, err)
			return out
		}
		got, _, err := gh.PullRequests.Get(ctx, r.owner, r.repo, r.plan.PR)
		if err != nil {
			r.rep.warnf("pull request #%d: %v: the pack's intent has its commit messages only", r.plan.PR, apiErr("read the pull request", err))
			return out
		}
		title, body := got.GetTitle(), got.GetBody()
		pr = &pullRequest{Title: &title, Body: &body}
		for _, l := range got.Labels {
			pr.Labels = append(pr.Labels, prLabel{Name: l.GetName()})
		}
	}
	if pr.Title != nil {
		out.Title = *pr.Title
	}
	if pr.Body != nil {
		out.Body = *pr.Body
	}
	for _, l := range pr.Labels {
		if l.Name != "" {
			out.Labels = append(out.Labels, l.Name)
		}
	}
	closes := ClosedIssues(out.Body)
	if len(closes) == 0 {
		return out
	}
	gh, err := r.github()
	for _, n := range closes {
		ref := pack.IssueRef{Number: n}
		if err == nil {
			issue, _, ierr := gh.Issues.Get(ctx, r.owner, r.repo, n)
			if ierr == nil {
				ref.Title = issue.GetTitle()
			} else {
				r.rep.warnf("issue #%d, which pull request #%d closes: %v", n, r.plan.PR, apiErr("read the issue", ierr))
			}
		}
		out.Closes = append(out.Closes, ref)
	}
	return out
}
