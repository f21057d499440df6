package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Fetching what a checkout lacks, with the git CLI: go-git cannot fetch
// into a shallow or partial clone the way actions/checkout leaves it, and
// the CLI uses the checkout's own remote and credentials (actions/checkout
// persists its token in the repository's config).

// fetchTimeout bounds one git fetch.
const fetchTimeout = 5 * time.Minute

// deepenSteps are the --deepen values tried, in turn, when the merge base of
// a range is still beyond a shallow clone's boundary; the last resort is
// --unshallow.
var deepenSteps = []int{50, 500}

// Remote is the remote the checkout fetches from: origin, else its only
// remote; "" when there is none (or git cannot be asked).
func (r *Repo) Remote() string {
	if r.b == nil {
		return ""
	}
	out, err := r.fetchGit(context.Background(), nil, "remote")
	if err != nil {
		return ""
	}
	remotes := strings.Fields(string(out))
	for _, name := range remotes {
		if name == "origin" {
			return "origin"
		}
	}
	if len(remotes) == 1 {
		return remotes[0]
	}
	return ""
}

// Promisor reports whether the repository is a partial clone: objects it
// lacks may be fetched from a promisor remote on demand.
func (r *Repo) Promisor() bool {
	b, ok := r.cli()
	return ok && len(b.promisors) > 0
}

// FetchReport says what FetchHistory did, for the log and the record.
type FetchReport struct {
	// Remote is the remote fetched from.
	Remote string
	// Commands are the git commands run, without credentials.
	Commands []string
}

// FetchHistory brings the commits of base..head (base "" for one commit
// and its first parent) into the checkout from its own remote: commits and
// trees only (--filter=blob:none, so a partial clone; blobs come later, by
// need, see FetchBlobs), then deeper history while the merge base is still
// beyond a shallow boundary. It returns an error when the history is still
// not there afterwards.
func (r *Repo) FetchHistory(ctx context.Context, base, head string) (*FetchReport, error) {
	if r.b == nil {
		return nil, fmt.Errorf("%s is not a git repository", r.Root)
	}
	remote := r.Remote()
	if remote == "" {
		return nil, errors.New("the checkout has no remote to fetch the missing commits from (origin, or a single remote)")
	}
	rep := &FetchReport{Remote: remote}
	available := func() bool {
		if base == "" {
			return r.CommitAvailable(head)
		}
		return r.RangeAvailable(base, head)
	}
	revs := []string{head}
	if base != "" {
		revs = append(revs, base)
	}
	fetch := func(extra ...string) error {
		args := append([]string{"fetch", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none"}, extra...)
		args = append(append(args, remote), revs...)
		rep.Commands = append(rep.Commands, "git "+strings.Join(args, " "))
		if _, err := r.fetchGit(ctx, nil, args...); err != nil {
			return err
		}
		return r.reopen()
	}
	if err := fetch(); err != nil {
		return rep, fmt.Errorf("fetch %s from %s: %w", strings.Join(revs, " "), remote, err)
	}
	if available() {
		return rep, nil
	}
	if !r.Shallow() {
		return rep, fmt.Errorf("fetched %s from %s, but the history between them is still incomplete", strings.Join(revs, " "), remote)
	}
	for _, n := range deepenSteps {
		if err := fetch("--deepen=" + strconv.Itoa(n)); err != nil {
			return rep, fmt.Errorf("deepen the clone by %d commits: %w", n, err)
		}
		if available() {
			return rep, nil
		}
	}
	if err := fetch("--unshallow"); err != nil {
		return rep, fmt.Errorf("unshallow the clone: %w", err)
	}
	if !available() {
		return rep, fmt.Errorf("fetched the whole history of %s from %s, and the range is still not there", strings.Join(revs, " "), remote)
	}
	return rep, nil
}

// FetchBlobs fetches, in one request, the blobs of ids a partial clone
// lacks. A repository that is not a partial clone has nothing to fetch.
func (r *Repo) FetchBlobs(ctx context.Context, ids []ObjectID) error {
	if len(ids) == 0 || !r.Promisor() {
		return nil
	}
	remote := r.Remote()
	if remote == "" {
		return errors.New("the partial clone has no remote to fetch its missing blobs from")
	}
	var in bytes.Buffer
	for _, id := range ids {
		in.WriteString(id.String() + "\n")
	}
	if _, err := r.fetchGit(ctx, in.Bytes(), "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--no-tags", "--no-write-fetch-head",
		"--recurse-submodules=no", "--filter=blob:none", "--stdin", remote); err != nil {
		return fmt.Errorf("fetch %d missing blobs from %s: %w", len(ids), remote, err)
	}
	return r.reopen()
}

// errPresenceUnknown: the object store cannot be asked whether it holds an
// object without git fetching it (a SHA-256 partial clone).
var errPresenceUnknown = errors.New("object presence cannot be checked without fetching")

// MissingBlobs lists the blobs that diffing from..to and each of commits
// against its first parent (a merge: what its patch reads against each
// parent, see mergeMissing) would read and that the object store lacks
// (a partial clone). It reads trees, never blobs.
func (r *Repo) MissingBlobs(ctx context.Context, from, to *Commit, commits []*Commit) ([]ObjectID, error) {
	seen := map[ObjectID]bool{}
	var missing []ObjectID
	check := func(changes []rawChange) error {
		for _, c := range changes {
			for _, e := range []*entryAt{c.from, c.to} {
				if e == nil || !e.mode.IsFile() || seen[e.id] {
					continue
				}
				seen[e.id] = true
				has, err := r.b.has(ctx, e.id)
				if err != nil {
					return err
				}
				if !has {
					missing = append(missing, e.id)
				}
			}
		}
		return nil
	}
	diff := func(a, b *Commit) error {
		var at ObjectID
		if a != nil {
			at = a.Tree
		}
		changes, err := r.diffTrees(ctx, at, b.Tree, b.ID)
		if err != nil {
			return err
		}
		return check(changes)
	}
	if to != nil {
		if err := diff(from, to); err != nil {
			return nil, err
		}
	}
	for _, c := range commits {
		if len(c.Parents) > 1 {
			if err := r.mergeMissing(ctx, c, check); err != nil {
				return nil, err
			}
			continue
		}
		var parent *Commit
		if len(c.Parents) > 0 {
			p, err := r.commit(ctx, c.Parents[0])
			if err != nil {
				return nil, err
			}
			parent = p
		}
		if err := diff(parent, c); err != nil {
			return nil, err
		}
	}
	return missing, nil
}

// mergeMissing checks, with check, the blobs merge c's patch may read
// (mergePatch): of the files that differ from every parent, both sides
// against each parent, and the files a parent has under an old name.
func (r *Repo) mergeMissing(ctx context.Context, c *Commit, check func([]rawChange) error) error {
	raws, candidate, err := r.mergeDiffs(ctx, c)
	if err != nil {
		return err
	}
	for _, raw := range raws {
		if err := check(mergeChanges(raw, func(p string) bool { return candidate[p] })); err != nil {
			return err
		}
	}
	return nil
}

// reopen reloads the repository after the CLI changed it (go-git keeps the
// list of pack files it opened; a fetch with a filter makes a partial
// clone, which only the git CLI reads).
func (r *Repo) reopen() error {
	dir := r.Root
	nr, err := OpenWith(dir, r.opts)
	if err != nil {
		return fmt.Errorf("reopen %s: %w", dir, err)
	}
	old := r.b
	oldWT := r.wt
	r.b, r.wt, r.gogit = nr.b, nr.wt, nr.gogit
	r.gitDir, r.commonDir, r.bare = nr.gitDir, nr.commonDir, nr.bare
	r.history.reset() // a fetch can deepen a shallow history
	if r.objectsByCLI {
		r.routeObjects()
	}
	if err := old.close(); err != nil {
		return err
	}
	if oldWT != nil {
		return oldWT.close()
	}
	return nil
}

// fetchGit runs git on the repository with no prompt for credentials (a
// job has no terminal), bounded by fetchTimeout, and returns its standard
// output; an error carries the last lines of its standard error, with any
// credentials of a URL masked.
func (r *Repo) fetchGit(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	env := append(gitEnv(), "GIT_DIR="+r.gitDir, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true", "LC_ALL=C")
	if !r.bare {
		env = append(env, "GIT_WORK_TREE="+r.Root)
	}
	out, err := runGit(ctx, env, r.Root, stdin, args...)
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) {
			return nil, fmt.Errorf("git %s: %w: %s", args[0], ge.err, maskCredentials(lastLines(ge.stderr, 3)))
		}
		if errors.Is(err, exec.ErrNotFound) {
			return nil, errors.New("git is not installed or not on PATH: install git to fetch the missing history")
		}
		return nil, err
	}
	return out, nil
}

// urlCredentials matches the user and password of a URL in git's messages.
var urlCredentials = regexp.MustCompile(`://[^/@\s]+@`)

func maskCredentials(s string) string { return urlCredentials.ReplaceAllString(s, "://***@") }

// FetchBranch fetches a branch of the checkout's remote into its
// remote-tracking ref (refs/remotes/<remote>/<branch>), commits and trees
// only, at depth 1 (FetchHistory deepens from there when it must).
func (r *Repo) FetchBranch(ctx context.Context, branch string) error {
	remote := r.Remote()
	if remote == "" {
		return errors.New("the checkout has no remote")
	}
	if branch == "" || strings.HasPrefix(branch, "-") || strings.ContainsAny(branch, " ~^:?*[\\\x00") {
		return fmt.Errorf("%q is not a branch name", branch)
	}
	spec := "+refs/heads/" + branch + ":refs/remotes/" + remote + "/" + branch
	if _, err := r.fetchGit(ctx, nil, "fetch", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--depth=1", remote, spec); err != nil {
		return err
	}
	return r.reopen()
}

// PrefetchChange fetches, in one request, the blobs a partial clone lacks
// for packing base..head (base "" for head against its first parent) and
// scanning its commits, and returns how many it fetched. Where presence
// cannot be checked without fetching (a SHA-256 partial clone), nothing is
// prefetched: each blob is fetched when it is read.
func (r *Repo) PrefetchChange(ctx context.Context, base, head string) (int, error) {
	if !r.Promisor() {
		return 0, nil
	}
	hh, err := r.ResolveContext(ctx, head)
	if err != nil {
		return 0, err
	}
	hc, err := r.commit(ctx, hh)
	if err != nil {
		return 0, err
	}
	var from *Commit
	commits := []*Commit{hc}
	if base == "" {
		if len(hc.Parents) > 0 {
			if from, err = r.commit(ctx, hc.Parents[0]); err != nil {
				return 0, err
			}
		}
	} else {
		bh, err := r.ResolveContext(ctx, base)
		if err != nil {
			return 0, err
		}
		if from, err = r.mergeBase(ctx, bh, hh); err != nil {
			return 0, err
		}
		if commits, err = r.commitsBetween(ctx, bh, hh); err != nil {
			return 0, err
		}
	}
	missing, err := r.MissingBlobs(ctx, from, hc, commits)
	if errors.Is(err, errPresenceUnknown) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return len(missing), r.FetchBlobs(ctx, missing)
}
