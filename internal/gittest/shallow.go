package gittest

import (
	"path/filepath"
	"testing"
)

// PullRequest is a pull request as a GitHub Actions job sees it with
// actions/checkout's defaults: an origin (a local file:// remote that
// serves partial fetches, as GitHub does) holding main and a pull request
// branch, and a depth-1 clone of the pull request's merge commit.
type PullRequest struct {
	Origin *Repo
	// Checkout is the shallow clone, at Merge.
	Checkout *Repo
	// Base is main's tip, Head the pull request's head, Merge the merge
	// commit refs/pull/1/merge names; Adds is the commit that adds the
	// secret and Removes the one that takes it out again.
	Base, Head, Merge, Adds, Removes string
	// URL is the origin's file:// URL.
	URL string
}

// NewPullRequest builds the pull request: main has a README (and, when
// baseFiles is given, those files); the branch adds config.env holding
// secretLine in one commit, removes it in the next and adds headFiles in a
// last one.
func NewPullRequest(t testing.TB, secretLine string, baseFiles, headFiles map[string]string) *PullRequest {
	t.Helper()
	o := New(t)
	o.Git("config", "uploadpack.allowFilter", "true")
	o.Write("README.md", "# demo\n")
	for p, c := range baseFiles {
		o.Write(p, c)
	}
	o.Commit("init")
	o.Git("checkout", "-q", "-b", "feature")
	o.Write("app.go", "package app\n")
	o.Write("config.env", "A=1\n"+secretLine+"\n")
	adds := o.Commit("add config")
	o.Write("config.env", "A=1\n")
	removes := o.Commit("take the secret out again")
	for p, c := range headFiles {
		o.Write(p, c)
	}
	head := o.Commit("head files")
	o.Git("checkout", "-q", "main")
	o.Write("main.txt", "main moved on\n")
	base := o.Commit("main moves")
	o.Git("checkout", "-q", "--detach", head)
	o.tick++
	o.Git("merge", "-q", "--no-ff", "-m", "Merge feature into main", base)
	merge := o.Git("rev-parse", "HEAD")
	o.Git("update-ref", "refs/pull/1/head", head)
	o.Git("update-ref", "refs/pull/1/merge", merge)
	o.Git("checkout", "-q", "main")

	dir := filepath.Join(t.TempDir(), "checkout")
	url := "file://" + o.Dir
	c := &Repo{t: t, Dir: dir}
	o.Git("init", "-q", dir)
	c.Git("remote", "add", "origin", url)
	c.Git("fetch", "-q", "--no-tags", "--depth=1", "origin", "+"+merge+":refs/remotes/pull/1/merge")
	c.Git("checkout", "-q", "--detach", merge)
	return &PullRequest{Origin: o, Checkout: c, Base: base, Head: head, Merge: merge, Adds: adds, Removes: removes, URL: url}
}
