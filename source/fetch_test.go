package source

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/policy"
)

const fetchSecret = "TOKEN=history-only-value"

func TestFetchHistoryOfAShallowPullRequest(t *testing.T) {
	pr := gittest.NewPullRequest(t, fetchSecret, nil, nil)
	r := open(t, pr.Checkout.Dir)
	if !r.Shallow() || r.HasCommit(pr.Head) || r.RangeAvailable(pr.Base, pr.Head) {
		t.Fatal("the checkout is not a depth-1 clone of the merge commit")
	}
	rep, err := r.FetchHistory(context.Background(), pr.Base, pr.Head)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Remote != "origin" || len(rep.Commands) == 0 || !strings.Contains(rep.Commands[0], "--filter=blob:none") {
		t.Fatalf("report %+v", rep)
	}
	if !r.RangeAvailable(pr.Base, pr.Head) || !r.Promisor() {
		t.Fatal("the range is still not available, or the clone is not partial")
	}
	ctx := context.Background()
	hh, _ := r.Resolve(pr.Head)
	bh, _ := r.Resolve(pr.Base)
	head, _ := r.commit(ctx, hh)
	mb, err := r.mergeBase(ctx, bh, hh)
	if err != nil || mb == nil {
		t.Fatalf("merge base: %v", err)
	}
	commits, err := r.commitsBetween(ctx, bh, hh)
	if err != nil || len(commits) != 3 {
		t.Fatalf("commits %d %v", len(commits), err)
	}
	missing, err := r.MissingBlobs(ctx, mb, head, commits)
	if err != nil || len(missing) == 0 {
		t.Fatalf("missing blobs %v %v", missing, err)
	}
	if err := r.FetchBlobs(ctx, missing); err != nil {
		t.Fatal(err)
	}
	if again, _ := r.MissingBlobs(ctx, mb, head, commits); len(again) != 0 {
		t.Fatalf("still missing after one batch: %v", again)
	}
	snap, err := r.Range(ctx, pr.Base, pr.Head, policy.ScopeChange)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range snap.Commits {
		for _, f := range c.Files {
			for _, l := range f.Lines {
				found = found || (c.Commit == pr.Adds && f.Path == "config.env" && l.Text == fetchSecret && l.Number == 2)
			}
		}
	}
	if !found {
		t.Fatalf("the line the first commit added is not in its patch: %+v", snap.Commits)
	}
}

// TestBlobsOfAPartialCloneAreFetchedOnDemand reads a blob the partial clone
// lacks without a prefetch: the CLI fetches it from the promisor remote.
func TestBlobsOfAPartialCloneAreFetchedOnDemand(t *testing.T) {
	pr := gittest.NewPullRequest(t, fetchSecret, nil, nil)
	r := open(t, pr.Checkout.Dir)
	if _, err := r.FetchHistory(context.Background(), pr.Base, pr.Head); err != nil {
		t.Fatal(err)
	}
	b, err := r.FileAt(context.Background(), pr.Adds, "config.env", 1<<20)
	if err != nil || !strings.Contains(string(b.Data), fetchSecret) {
		t.Fatalf("FileAt: %q %v", b.Data, err)
	}
}

func TestFetchHistoryWithoutARemote(t *testing.T) {
	g := gittest.New(t)
	g.Write("a", "a\n")
	h := g.Commit("a")
	if _, err := open(t, g.Dir).FetchHistory(context.Background(), "", h); err == nil || !strings.Contains(err.Error(), "no remote") {
		t.Fatalf("err = %v", err)
	}
}

// TestFetchHistoryDeepens: when the base is itself a shallow tip, fetching
// the two commits is not enough; the clone is deepened until the merge base
// is there.
func TestFetchHistoryDeepens(t *testing.T) {
	pr := gittest.NewPullRequest(t, fetchSecret, nil, nil)
	pr.Checkout.Git("fetch", "-q", "--depth=1", "origin", pr.Base, pr.Head)
	r := open(t, pr.Checkout.Dir)
	if !r.HasCommit(pr.Base) || !r.HasCommit(pr.Head) || r.RangeAvailable(pr.Base, pr.Head) {
		t.Fatal("fixture: both tips present, merge base missing")
	}
	rep, err := r.FetchHistory(context.Background(), pr.Base, pr.Head)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Commands) < 2 || !strings.Contains(rep.Commands[1], "--deepen=") {
		t.Fatalf("commands %v", rep.Commands)
	}
	if !r.RangeAvailable(pr.Base, pr.Head) {
		t.Fatal("range not available after deepening")
	}
}
