package hooks

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/ctxpack/ctxpack/source"
)

// Update is one line of git's pre-push input:
// <local ref> SP <local sha> SP <remote ref> SP <remote sha>.
type Update struct {
	LocalRef, LocalSHA, RemoteRef, RemoteSHA string
}

// Deleted reports a ref deletion (the local sha is all zeros).
func (u Update) Deleted() bool { return isZero(u.LocalSHA) }

// New reports a ref the remote does not have yet (remote sha all zeros).
func (u Update) New() bool { return isZero(u.RemoteSHA) }

func isZero(sha string) bool { return strings.Trim(sha, "0") == "" }

func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ParseUpdates reads git's pre-push input. Blank lines are skipped; any other
// line that is not four fields with two object names is an error (the push
// cannot be checked, so it must not pass).
func ParseUpdates(r io.Reader) ([]Update, error) {
	var out []Update
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 || !isHex(f[1]) || !isHex(f[3]) {
			return nil, fmt.Errorf("pre-push input line %d: %q is not <local ref> <local sha> <remote ref> <remote sha>", n, line)
		}
		out = append(out, Update{LocalRef: f[0], LocalSHA: strings.ToLower(f[1]), RemoteRef: f[2], RemoteSHA: strings.ToLower(f[3])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read pre-push input: %w", err)
	}
	return out, nil
}

// Options configure PrePush.
type Options struct {
	// Pack carries Dir, PolicyFile and policy overrides.
	Pack pipeline.PackOptions
	// Remote and URL are git's two hook arguments (the remote's name, or its
	// URL twice when pushing to a URL).
	Remote, URL string
	Updates     []Update
	// NoNotes skips storing records as git notes.
	NoNotes bool
}

// Ref outcomes.
const (
	StatusPass    = "pass"
	StatusFail    = "fail"
	StatusSkipped = "skipped" // deletion, or nothing new to publish
	StatusBlocked = "blocked" // cannot be checked (e.g. a tag of a tree)
)

// RefResult is the outcome for one pushed ref.
type RefResult struct {
	Update
	Status string
	// Why explains a skip or a block, or how the range was chosen.
	Why string
	// Run is the pipeline run (nil when skipped or blocked).
	Run *pipeline.PushRun
	// SameAs names an earlier ref of this push with the same range, whose run
	// this one shares.
	SameAs string
	// PackFile and RecordFile are where the pack and record were written.
	PackFile, RecordFile string
	// Noted is true when the record was stored as the head commit's git note;
	// NoteErr is a failure to store it (reported, not fatal: the record file
	// is written).
	Noted   bool
	NoteErr error
}

// Report is the outcome of one pre-push run.
type Report struct {
	Remote, URL string
	Root        string
	Refs        []RefResult
}

// Failed reports whether the push must be blocked.
func (r *Report) Failed() bool {
	for _, ref := range r.Refs {
		if ref.Status == StatusFail || ref.Status == StatusBlocked {
			return true
		}
	}
	return false
}

// PrePush checks every ref of a push: a deleted ref is skipped; an update
// covers the commits reachable from the new value and not from the old one
// (remote..local; for a force push the diff starts at the merge base); a new
// ref covers the commits not reachable from any of the remote's tracking refs
// (refs/remotes/<remote>/*) nor from the old values of this push's other
// refs. A tag is peeled to its commit. Each range is packed, scanned commit
// by commit, audited and recorded under <common dir>/ctxpack/prepush/ and as
// a git note. Refs pushed at the same commit share one run (the note holds one
// record per commit): the widest range runs, and the others are covered by
// it. An error means the push could not be checked.
func PrePush(ctx context.Context, opts Options) (*Report, error) {
	dir := opts.Pack.Dir
	if dir == "" {
		dir = "."
	}
	repo, err := source.Open(dir)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	if !repo.IsGit() {
		return nil, fmt.Errorf("%s is not a git repository", repo.Root)
	}
	repo.Prestart()    // the plan walks commits
	pipeline.Preload() // beside the plan's walks, which come first
	defer pipeline.PauseGC()()
	rep := &Report{Remote: opts.Remote, URL: opts.URL, Root: repo.Root}

	// Old values of updated refs that this repository has: the remote has them.
	var remoteHas []source.ObjectID
	for _, u := range opts.Updates {
		if !u.New() && !u.Deleted() {
			if h, kind, err := repo.Peel(source.ObjectID(u.RemoteSHA)); err == nil && kind == source.KindCommit {
				remoteHas = append(remoteHas, h)
			}
		}
	}
	var tracking []source.ObjectID
	trackingLoaded := false

	// 1. What each ref publishes.
	type target struct {
		index int
		head  source.ObjectID
		known []source.ObjectID
		set   map[source.ObjectID]bool
	}
	var targets []*target
	for i, u := range opts.Updates {
		res := RefResult{Update: u}
		if u.Deleted() {
			res.Status, res.Why = StatusSkipped, "deleted: nothing is published"
			rep.Refs = append(rep.Refs, res)
			continue
		}
		head, kind, err := repo.Peel(source.ObjectID(u.LocalSHA))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u.LocalRef, err)
		}
		if kind != source.KindCommit {
			res.Status = StatusBlocked
			res.Why = fmt.Sprintf("%s %s names a %s, not a commit: ctxpack checks commits only", u.LocalRef, pipeline.ShortSHA(u.LocalSHA), kind)
			rep.Refs = append(rep.Refs, res)
			continue
		}
		var known []source.ObjectID
		if !u.New() {
			old, okind, err := repo.Peel(source.ObjectID(u.RemoteSHA))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", u.RemoteRef, err)
			}
			if okind == source.KindCommit {
				known = []source.ObjectID{old}
			} else {
				res.Why = fmt.Sprintf("the remote's %s is not in this repository (git fetch %s?): checking the commits not on %s's tracking refs",
					pipeline.ShortSHA(u.RemoteSHA), opts.Remote, opts.Remote)
			}
		}
		if known == nil {
			if !trackingLoaded {
				if tracking, err = repo.TrackingRefs(opts.Remote); err != nil {
					return nil, err
				}
				trackingLoaded = true
			}
			known = append(append([]source.ObjectID{}, tracking...), remoteHas...)
			if res.Why == "" {
				if len(tracking) == 0 {
					res.Why = fmt.Sprintf("new ref, no tracking refs for %s: checking every commit it reaches", opts.Remote)
				} else {
					res.Why = fmt.Sprintf("new ref: checking the commits not on %s's %s", opts.Remote, plural(len(tracking), "tracking ref"))
				}
			}
		}
		un, err := repo.Unpublished(ctx, head, known)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u.LocalRef, err)
		}
		t := &target{index: i, head: head, known: known, set: map[source.ObjectID]bool{}}
		for _, c := range un.Commits {
			t.set[c.ID] = true
		}
		targets = append(targets, t)
		rep.Refs = append(rep.Refs, res)
	}
	// rep.Refs[i] is the result of opts.Updates[i].
	byIndex := func(i int) *RefResult { return &rep.Refs[i] }

	// 2. One run per commit: the widest range first; refs at the same commit
	// whose commits it covers share it.
	sort.SliceStable(targets, func(i, j int) bool {
		if targets[i].head != targets[j].head {
			return targets[i].index < targets[j].index
		}
		return len(targets[i].set) > len(targets[j].set)
	})
	var pusher *pipeline.Pusher // built on first need: deletions load no rules
	done := map[source.ObjectID][]*target{}
	for _, t := range targets {
		res := byIndex(t.index)
		if len(t.set) == 0 {
			res.Status, res.Why = StatusSkipped, fmt.Sprintf("no new commits: %s already has %s", opts.Remote, pipeline.ShortSHA(t.head.String()))
			continue
		}
		covered := false
		for _, prev := range done[t.head] {
			if subset(t.set, prev.set) {
				p := byIndex(prev.index)
				res.Status, res.Run, res.SameAs = p.Status, p.Run, p.RemoteRef
				res.PackFile, res.RecordFile, res.Noted, res.NoteErr = p.PackFile, p.RecordFile, p.Noted, p.NoteErr
				covered = true
				break
			}
		}
		if covered {
			continue
		}
		if pusher == nil {
			if pusher, err = pipeline.NewPusher(repo, opts.Pack); err != nil {
				return nil, err
			}
		}
		// A second, different range at the same commit (two refs updated from
		// unrelated old values) gets its own files and no note.
		suffix := ""
		if n := len(done[t.head]); n > 0 {
			suffix = fmt.Sprintf(".%d", n+1)
		}
		if err := keptFiles(repo, t.head, suffix, res); err != nil {
			return nil, err
		}
		// The pack is written (to its temporary file) while it is audited.
		var written *fsutil.Prepared
		built := func(r *pack.Result) { written = fsutil.Prepare(res.PackFile, r.JSON, 0o644) }
		run, err := pusher.Run(ctx, pipeline.PushTarget{Head: t.head, Known: t.known, Ref: res.RemoteRef, Built: built})
		if err == nil && run.Run == nil { // cannot happen: the walk found new commits
			err = errors.New("no new commits on the second walk")
		}
		if err != nil {
			if written != nil {
				written.Discard()
			}
			return nil, fmt.Errorf("%s: %w", res.LocalRef, err)
		}
		res.Run = run
		res.Status = StatusPass
		if run.Verdict.Status != audit.StatusPass {
			res.Status = StatusFail
		}
		// A note on a notes commit would move the notes ref being pushed
		// (and every push of the notes would then leave a new one behind).
		notesRef := strings.HasPrefix(res.LocalRef, "refs/notes/") || strings.HasPrefix(res.RemoteRef, "refs/notes/")
		if err := keep(ctx, res, written, opts.NoNotes || suffix != "" || notesRef); err != nil {
			return nil, err
		}
		done[t.head] = append(done[t.head], t)
	}
	return rep, nil
}

func subset(a, b map[source.ObjectID]bool) bool {
	for h := range a {
		if !b[h] {
			return false
		}
	}
	return true
}

// keptFiles names the pack and record files of head's run (suffix tells a
// second range at one commit from the first) under <common dir>/ctxpack/prepush/,
// which it creates; a link or a file there is an error, never followed
// (source.Repo.MakeStateDir). The files themselves replace whatever is at
// their names, a link too (fsutil.Batch).
func keptFiles(repo *source.Repo, head source.ObjectID, suffix string, res *RefResult) error {
	dir, err := repo.MakeStateDir("prepush")
	if err != nil {
		return err
	}
	name := pipeline.ShortSHA(head.String()) + suffix
	res.PackFile = filepath.Join(dir, name+".pack.json")
	res.RecordFile = filepath.Join(dir, name+".record.json")
	return nil
}

// keep writes the pack (written, when the run started writing it) and the
// record to the files keptFiles named, and the record as the head commit's
// note.
func keep(ctx context.Context, res *RefResult, written *fsutil.Prepared, noNotes bool) error {
	run := res.Run
	// The note first: storing it binds the record to its parent's record as
	// it is then, which the record file must carry too.
	if !noNotes {
		res.NoteErr = run.WriteNote()
		res.Noted = res.NoteErr == nil
	}
	var files fsutil.Batch // one unit: the record names the pack's digest
	files.Add(res.RecordFile, run.RecordJSON, 0o644)
	if written != nil {
		files.AddPrepared(written)
	} else {
		files.Add(res.PackFile, run.Result.JSON, 0o644)
	}
	return files.Commit(ctx)
}

// PreCommitUpdates rebuilds the push the pre-commit framework describes in its
// environment at the pre-push stage (it gives hooks no stdin, and describes
// only the first ref of a push): PRE_COMMIT_TO_REF is the local commit,
// PRE_COMMIT_FROM_REF the remote's (for a new branch, the parent of its first
// new commit), PRE_COMMIT_LOCAL_BRANCH, PRE_COMMIT_REMOTE_BRANCH,
// PRE_COMMIT_REMOTE_NAME and PRE_COMMIT_REMOTE_URL name the rest. Without
// the refs (pre-commit pushing a root commit, or `pre-commit run
// --hook-stage pre-push`), HEAD is checked as a new ref of the remote
// (origin when unnamed).
func PreCommitUpdates(dir string, getenv func(string) string) (remote, url string, updates []Update, err error) {
	repo, err := source.Open(dir)
	if err != nil {
		return "", "", nil, err
	}
	defer repo.Close()
	remote, url = getenv("PRE_COMMIT_REMOTE_NAME"), getenv("PRE_COMMIT_REMOTE_URL")
	if remote == "" {
		remote = "origin"
	}
	if url == "" {
		url = remote
	}
	zero := strings.Repeat("0", 40)
	to, from := getenv("PRE_COMMIT_TO_REF"), getenv("PRE_COMMIT_FROM_REF")
	u := Update{LocalRef: getenv("PRE_COMMIT_LOCAL_BRANCH"), RemoteRef: getenv("PRE_COMMIT_REMOTE_BRANCH"), RemoteSHA: zero}
	if to == "" {
		to = "HEAD"
	}
	h, err := repo.Resolve(to)
	if err != nil {
		return "", "", nil, fmt.Errorf("PRE_COMMIT_TO_REF: %w", err)
	}
	u.LocalSHA = h.String()
	if from != "" && !isZero(from) {
		fh, err := repo.Resolve(from)
		if err != nil {
			return "", "", nil, fmt.Errorf("PRE_COMMIT_FROM_REF: %w", err)
		}
		u.RemoteSHA = fh.String()
	}
	if u.LocalRef == "" {
		u.LocalRef = to
	}
	if u.RemoteRef == "" {
		u.RemoteRef = u.LocalRef
	}
	return remote, url, []Update{u}, nil
}
