package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
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
// remote; "" when there is none.
func (r *Repo) Remote() string {
	if r.git == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	remotes, err := r.git.Remotes()
	if err != nil || len(remotes) == 0 {
		return ""
	}
	for _, rem := range remotes {
		if rem.Config().Name == "origin" {
			return "origin"
		}
	}
	if len(remotes) == 1 {
		return remotes[0].Config().Name
	}
	return ""
}

// Promisor reports whether the repository is a partial clone: objects it
// lacks may be fetched from a promisor remote on demand.
func (r *Repo) Promisor() bool {
	if r.git == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cfg, err := r.git.Config()
	if err != nil {
		return false
	}
	if s := cfg.Raw.Section("extensions"); s.Option("partialclone") != "" {
		return true
	}
	for _, sub := range cfg.Raw.Section("remote").Subsections {
		if strings.EqualFold(sub.Option("promisor"), "true") {
			return true
		}
	}
	return false
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
	if r.git == nil {
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
		if _, err := r.runGit(ctx, nil, args...); err != nil {
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
func (r *Repo) FetchBlobs(ctx context.Context, ids []plumbing.Hash) error {
	if len(ids) == 0 || !r.Promisor() {
		return nil
	}
	remote := r.Remote()
	if remote == "" {
		return errors.New("the partial clone has no remote to fetch its missing blobs from")
	}
	var in bytes.Buffer
	for _, h := range ids {
		in.WriteString(h.String() + "\n")
	}
	if _, err := r.runGit(ctx, &in, "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--no-tags", "--no-write-fetch-head",
		"--recurse-submodules=no", "--filter=blob:none", "--stdin", remote); err != nil {
		return fmt.Errorf("fetch %d missing blobs from %s: %w", len(ids), remote, err)
	}
	return r.reopen()
}

// MissingBlobs lists the blobs that diffing from..to and each of commits
// against its first parent would read and that the object store lacks
// (a partial clone). It reads trees, never blobs.
func (r *Repo) MissingBlobs(ctx context.Context, from, to *object.Commit, commits []*object.Commit) ([]plumbing.Hash, error) {
	seen := map[plumbing.Hash]bool{}
	var missing []plumbing.Hash
	diff := func(a, b *object.Commit) error {
		var at, bt *object.Tree
		var err error
		r.mu.Lock()
		defer r.mu.Unlock()
		if a != nil {
			if at, err = a.Tree(); err != nil {
				return err
			}
		}
		if bt, err = b.Tree(); err != nil {
			return err
		}
		changes, err := r.diffTrees(ctx, at, bt)
		if err != nil {
			return err
		}
		for _, c := range changes {
			for _, e := range []object.ChangeEntry{c.From, c.To} {
				h := e.TreeEntry.Hash
				if e.Name == "" || !e.TreeEntry.Mode.IsFile() || seen[h] {
					continue
				}
				seen[h] = true
				if r.git.Storer.HasEncodedObject(h) != nil {
					missing = append(missing, h)
				}
			}
		}
		return nil
	}
	if to != nil {
		if err := diff(from, to); err != nil {
			return nil, err
		}
	}
	for _, c := range commits {
		var parent *object.Commit
		if c.NumParents() > 0 {
			p, err := r.commit(c.ParentHashes[0])
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

// catBlob reads one blob with the git CLI, which fetches it from the
// promisor remote when a partial clone lacks it.
func (r *Repo) catBlob(ctx context.Context, h plumbing.Hash) ([]byte, error) {
	out, err := r.runGit(ctx, nil, "cat-file", "blob", h.String())
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	return out, nil
}

// reopen reloads the repository after the CLI changed its object store
// (go-git keeps the list of packfiles it opened).
func (r *Repo) reopen() error {
	g, err := git.PlainOpenWithOptions(r.Root, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return fmt.Errorf("reopen %s: %w", r.Root, err)
	}
	r.mu.Lock()
	r.git = g
	r.mu.Unlock()
	return nil
}

// runGit runs git in the work tree with no prompt for credentials (a job
// has no terminal) and returns its standard output; an error carries the
// last lines of its standard error.
func (r *Repo) runGit(ctx context.Context, stdin *bytes.Buffer, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.Root
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true", "LC_ALL=C")
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, lastLines(stderr.String(), 3))
	}
	return stdout.Bytes(), nil
}

// urlCredentials matches the user and password of a URL in git's messages.
var urlCredentials = regexp.MustCompile(`://[^/@\s]+@`)

func lastLines(s string, n int) string {
	s = urlCredentials.ReplaceAllString(s, "://***@")
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

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
	if _, err := r.runGit(ctx, nil, "fetch", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--depth=1", remote, spec); err != nil {
		return err
	}
	return r.reopen()
}

// PrefetchChange fetches, in one request, the blobs a partial clone lacks
// for packing base..head (base "" for head against its first parent) and
// scanning its commits, and returns how many it fetched.
func (r *Repo) PrefetchChange(ctx context.Context, base, head string) (int, error) {
	if !r.Promisor() {
		return 0, nil
	}
	hh, err := r.Resolve(head)
	if err != nil {
		return 0, err
	}
	hc, err := r.commit(hh)
	if err != nil {
		return 0, err
	}
	var from *object.Commit
	commits := []*object.Commit{hc}
	if base == "" {
		if hc.NumParents() > 0 {
			if from, err = r.commit(hc.ParentHashes[0]); err != nil {
				return 0, err
			}
		}
	} else {
		bh, err := r.Resolve(base)
		if err != nil {
			return 0, err
		}
		bc, err := r.commit(bh)
		if err != nil {
			return 0, err
		}
		if from, err = r.mergeBase(bc, hc); err != nil {
			return 0, err
		}
		if commits, err = r.commitsBetween(ctx, bh, hh); err != nil {
			return 0, err
		}
	}
	missing, err := r.MissingBlobs(ctx, from, hc, commits)
	if err != nil {
		return 0, err
	}
	return len(missing), r.FetchBlobs(ctx, missing)
}
