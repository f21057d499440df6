package action

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/google/go-github/v60/github"
)

// maxListedFiles bounds the change list read from the API (GitHub lists at
// most 3,000 files of a pull request or a commit), and maxCompareFiles is
// the most files GitHub lists of a comparison (on its first page only): a
// list of that many may leave files out.
const (
	maxListedFiles  = 3000
	maxCompareFiles = 300
)

// newGitHub returns a go-github client for apiURL (GITHUB_API_URL, so GHES
// works) with token auth and rt's retries.
func newGitHub(apiURL, token string, hc *http.Client, rt *retryTransport) (*github.Client, error) {
	if apiURL == "" {
		apiURL = "https://api.github.com"
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("GITHUB_API_URL %q is not an http(s) URL", clip(apiURL, 100))
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	rt.base = base
	client := github.NewClient(&http.Client{Transport: rt, Timeout: hc.Timeout, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar})
	if token != "" {
		client = client.WithAuthToken(token)
	}
	client.BaseURL = u
	client.UserAgent = "ctxpack-action"
	return client, nil
}

// changeFromAPI turns one of GitHub's file entries into a pack change, with
// the API's patch as its diff under a git-style header.
func changeFromAPI(f *github.CommitFile) (pack.Change, bool) {
	ch := pack.Change{Path: f.GetFilename(), Added: f.GetAdditions(), Deleted: f.GetDeletions()}
	switch f.GetStatus() {
	case "added", "copied":
		ch.Status = "added"
	case "removed":
		ch.Status = "deleted"
	case "renamed":
		ch.Status, ch.OldPath = "renamed", f.GetPreviousFilename()
	case "modified", "changed":
		ch.Status = "modified"
	default: // "unchanged"
		return ch, false
	}
	if ch.Path == "" {
		return ch, false
	}
	if patch := f.GetPatch(); patch != "" {
		from, to := "a/"+ch.Path, "b/"+ch.Path
		if ch.OldPath != "" {
			from = "a/" + ch.OldPath
		}
		header := "diff --git " + from + " " + to + "\n"
		switch ch.Status {
		case "added":
			from = "/dev/null"
		case "deleted":
			to = "/dev/null"
		}
		header += "--- " + from + "\n+++ " + to + "\n"
		if !strings.HasSuffix(patch, "\n") {
			patch += "\n"
		}
		ch.Diff = header + patch
	}
	return ch, true
}

func changesFromAPI(files []*github.CommitFile) []pack.Change {
	seen := map[string]bool{}
	var out []pack.Change
	for _, f := range files {
		ch, ok := changeFromAPI(f)
		if !ok || seen[ch.Path] {
			continue
		}
		seen[ch.Path] = true
		out = append(out, ch)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// prFiles lists a pull request's changed files.
func prFiles(ctx context.Context, gh *github.Client, owner, repo string, number int) ([]pack.Change, error) {
	var all []*github.CommitFile
	opts := &github.ListOptions{PerPage: 100}
	for {
		files, resp, err := gh.PullRequests.ListFiles(ctx, owner, repo, number, opts)
		if err != nil {
			return nil, apiErr("list the pull request's files", err)
		}
		all = append(all, files...)
		if resp.NextPage == 0 || len(all) >= maxListedFiles {
			break
		}
		opts.Page = resp.NextPage
	}
	return changesFromAPI(all), nil
}

// comparison is GitHub's base...head comparison.
type comparison struct {
	Changes []pack.Change
	// MergeBase is the merge base of base and head.
	MergeBase string
	// Commits are the commits of the comparison, oldest first; Complete is
	// false when the API listed fewer than there are.
	Commits  []string
	Complete bool
	// FilesCut is true when the API listed as many files as it lists of a
	// comparison (maxCompareFiles): Changes may leave some out.
	FilesCut bool
}

// compareFiles lists the files changed between base's merge base with head
// and head (GitHub's base...head comparison), with its merge base and
// commits.
func compareFiles(ctx context.Context, gh *github.Client, owner, repo, base, head string) (*comparison, error) {
	out, all, err := compare(ctx, gh, owner, repo, base, head)
	if err != nil {
		return nil, err
	}
	out.Changes = changesFromAPI(all)
	return out, nil
}

// compare reads GitHub's base...head comparison: its merge base and
// commits, and its files as the API gives them (with their patches).
func compare(ctx context.Context, gh *github.Client, owner, repo, base, head string) (*comparison, []*github.CommitFile, error) {
	var all []*github.CommitFile
	out := &comparison{}
	opts := &github.ListOptions{PerPage: 100}
	total := 0
	for first := true; ; first = false {
		// The files come with the first page; later pages page the commits.
		cmp, resp, err := gh.Repositories.CompareCommits(ctx, owner, repo, base, head, opts)
		if err != nil {
			return nil, nil, apiErr("compare "+short(base)+"..."+short(head), err)
		}
		if first {
			if cmp.MergeBaseCommit != nil {
				out.MergeBase = cmp.MergeBaseCommit.GetSHA()
			}
			total = cmp.GetTotalCommits()
		}
		for _, c := range cmp.Commits {
			out.Commits = append(out.Commits, c.GetSHA())
		}
		if len(all) < maxListedFiles {
			all = append(all, cmp.Files...)
		}
		if resp.NextPage == 0 || len(cmp.Commits) == 0 || len(out.Commits) >= maxAPICommits {
			break
		}
		opts.Page = resp.NextPage
	}
	out.Complete = total <= len(out.Commits)
	out.FilesCut = len(all) >= maxCompareFiles
	return out, all, nil
}

// commitFiles lists the files one commit changed against its first
// parent, and that parent ("" for a root commit).
func commitFiles(ctx context.Context, gh *github.Client, owner, repo, sha string) ([]pack.Change, string, error) {
	var all []*github.CommitFile
	parent := ""
	opts := &github.ListOptions{PerPage: 100}
	for {
		c, resp, err := gh.Repositories.GetCommit(ctx, owner, repo, sha, opts)
		if err != nil {
			return nil, "", apiErr("read commit "+short(sha), err)
		}
		if len(c.Parents) > 0 {
			parent = c.Parents[0].GetSHA()
		}
		all = append(all, c.Files...)
		if resp.NextPage == 0 || len(all) >= maxListedFiles || len(c.Files) == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if parent != "" && checkSHA("parent", parent) != nil {
		return nil, "", fmt.Errorf("the API named %q as the parent of %s", clip(parent, 80), short(sha))
	}
	return changesFromAPI(all), parent, nil
}

// apiErr names what failed with the status, never the request's headers.
func apiErr(what string, err error) error {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return fmt.Errorf("%s: GitHub API HTTP %d: %s", what, er.Response.StatusCode, oneLine(clip(er.Message, 200)))
	}
	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		return fmt.Errorf("%s: GitHub API rate limit: %s", what, oneLine(clip(rl.Message, 200)))
	}
	var ab *github.AbuseRateLimitError
	if errors.As(err, &ab) {
		return fmt.Errorf("%s: GitHub API secondary rate limit: %s", what, oneLine(clip(ab.Message, 200)))
	}
	return fmt.Errorf("%s: %w", what, redactErr(err))
}

// statusOf is the HTTP status of a go-github error, 0 when none.
func statusOf(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	var rl *github.RateLimitError
	if errors.As(err, &rl) && rl.Response != nil {
		return rl.Response.StatusCode
	}
	var ab *github.AbuseRateLimitError
	if errors.As(err, &ab) && ab.Response != nil {
		return ab.Response.StatusCode
	}
	return 0
}

// Marker is the hidden first line of the sticky comment.
const Marker = "<!-- ctxpack:summary -->"

// defaultBot is the author of comments made with the workflow's GITHUB_TOKEN.
const defaultBot = "github-actions[bot]"

// upsertComment edits the earlier ctxpack comment on the pull request (the
// first one that starts with Marker and was written by this token's user),
// else creates one. It returns the comment's URL. Creation is idempotent: a
// POST that failed (a 5xx or a dropped connection can come after GitHub
// created the comment) is retried only after listing the comments again and
// finding none with the marker.
func upsertComment(ctx context.Context, gh *github.Client, retry *retrier, owner, repo string, number int, body string) (string, bool, error) {
	// GET /user works for a personal or app user token; the workflow token
	// (and an app installation token) gets 403, and its comments are a bot's:
	// github-actions[bot] for the workflow token.
	me, known := defaultBot, false
	if u, _, err := gh.Users.Get(ctx, ""); err == nil && u.GetLogin() != "" {
		me, known = u.GetLogin(), true
	}
	mine := func(u *github.User) bool {
		if strings.EqualFold(u.GetLogin(), me) {
			return true
		}
		return !known && u.GetType() == "Bot"
	}
	var url string
	edited := false
	err := retry.do(ctx, "post the pull request comment", func(int) error {
		found, err := findComment(ctx, gh, owner, repo, number, mine)
		if err != nil {
			return err
		}
		if found != nil {
			c, _, err := gh.Issues.EditComment(ctx, owner, repo, found.GetID(), &github.IssueComment{Body: github.String(body)})
			if err != nil {
				return err
			}
			url, edited = c.GetHTMLURL(), true
			return nil
		}
		c, _, err := gh.Issues.CreateComment(ctx, owner, repo, number, &github.IssueComment{Body: github.String(body)})
		if err != nil {
			if s := statusOf(err); s == 0 || s >= 500 {
				return retryErr(err) // list again before another POST
			}
			return err
		}
		url = c.GetHTMLURL()
		return nil
	})
	return url, edited, err
}

// findComment returns the first comment of the pull request that starts
// with Marker and is mine, nil when there is none.
func findComment(ctx context.Context, gh *github.Client, owner, repo string, number int, mine func(*github.User) bool) (*github.IssueComment, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		cs, resp, err := gh.Issues.ListComments(ctx, owner, repo, number, opts)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if strings.HasPrefix(strings.TrimSpace(c.GetBody()), Marker) && mine(c.GetUser()) {
				return c, nil
			}
		}
		if resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
}
