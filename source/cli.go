package source

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"golang.org/x/sync/errgroup"
)

// cliBackend reads a repository through the git CLI: objects through one
// long-lived `git cat-file --batch` (and --batch-check) process, history
// through `git merge-base` and `git rev-list`, the work tree through
// `git ls-files` and `git status`. It opens whatever git opens: sparse
// checkouts (extensions.worktreeConfig), partial clones (git fetches a
// missing object from the promisor remote when it is read), SHA-256
// repositories.
type cliBackend struct {
	gitDir, root string // root is "" when bare
	commonDir    string
	format       string // sha1 or sha256
	promisors    []string

	batch, check *catFile

	mu sync.Mutex
	// promisorDown is set once the promisor remote failed to provide an
	// object: later reads do not try again (GIT_NO_LAZY_FETCH, git ≥ 2.44).
	promisorDown bool
	// store answers has, opened on first use.
	store *filesystem.Storage
}

func (b *cliBackend) name() string         { return "git" }
func (b *cliBackend) objectFormat() string { return b.format }

// env is the environment of every git command: the repository named
// explicitly, no prompt for credentials (a lazy fetch must fail, not
// hang), no optional lock taken by a read.
func (b *cliBackend) env() []string {
	env := append(gitEnv(), "GIT_DIR="+b.gitDir, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	if b.root != "" {
		env = append(env, "GIT_WORK_TREE="+b.root)
	}
	b.mu.Lock()
	if b.promisorDown {
		env = append(env, "GIT_NO_LAZY_FETCH=1")
	}
	b.mu.Unlock()
	return env
}

// gitError is a git command that failed, with what it printed.
type gitError struct {
	args   []string
	err    error
	stderr string
}

func (e *gitError) Error() string {
	msg := "git " + strings.Join(e.args, " ") + ": " + e.err.Error()
	if s := strings.TrimSpace(e.stderr); s != "" {
		msg += ": " + lastLines(s, 3)
	}
	return msg
}

func (e *gitError) Unwrap() error { return e.err }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// run runs git with args (and stdin when not nil) and returns its stdout.
func (b *cliBackend) run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return runGit(ctx, b.env(), "", stdin, args...)
}

func runGit(ctx context.Context, env []string, dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env, cmd.Dir = env, dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return stdout.Bytes(), &gitError{args: args, err: err, stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

// exitCode is the exit status of a failed git command, -1 when it did not run.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// prestart starts both cat-file processes (see catFile.prestart).
func (b *cliBackend) prestart() {
	b.batch.prestart()
	b.check.prestart()
}

func (b *cliBackend) close() error {
	// Both processes are told to end at once, and waited for together: each
	// takes ~1 ms to exit, the last thing a range's run waits for.
	batchErr := make(chan error, 1)
	go func() { batchErr <- b.batch.close() }()
	err := b.check.close()
	err = errors.Join(<-batchErr, err)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.store != nil {
		err = errors.Join(err, b.store.Close())
		b.store = nil
	}
	return err
}

func (b *cliBackend) hashBlob(data []byte) ObjectID { return blobID(b.format, data) }

// blobID is git's id of a blob with this content in an object format
// ("sha256", else SHA-1). SHA-1 without collision detection (go-git hashes
// through sha1cd, at a third of the speed): the id only tells whether a
// file holds a blob the repository names, and bytes that collide with it
// are scanned and sent as what they are.
func blobID(format string, data []byte) ObjectID {
	var h hash.Hash
	if format == "sha256" {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return ObjectID(hex.EncodeToString(h.Sum(nil)))
}

// object reads one object through cat-file --batch.
func (b *cliBackend) object(ctx context.Context, id ObjectID) (string, []byte, error) {
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	typ, data, err := b.batch.read(ctx, id, true)
	return typ, data, b.objectErr(id, err)
}

// objectErr turns a missing object of a partial clone into a
// *NotFetchedError.
func (b *cliBackend) objectErr(id ObjectID, err error) error {
	var pe *promisorError
	switch {
	case errors.Is(err, errMissing) && b.looseFile(id):
		// git says "missing" of an object whose file it could not read.
		return fmt.Errorf("%w (git cat-file cannot read objects/%s/%s)", errDamaged, id[:2], id[2:])
	case errors.As(err, &pe):
		b.mu.Lock()
		b.promisorDown = true
		b.mu.Unlock()
		return &NotFetchedError{ID: id, Remote: strings.Join(b.promisors, ", "), Detail: pe.detail}
	case errors.Is(err, errMissing) && len(b.promisors) > 0:
		detail := ""
		b.mu.Lock()
		if b.promisorDown {
			detail = "the promisor remote could not be reached earlier in this run"
		}
		b.mu.Unlock()
		return &NotFetchedError{ID: id, Remote: strings.Join(b.promisors, ", "), Detail: detail}
	}
	return err
}

// looseFile reports whether the object store holds id as a loose object.
func (b *cliBackend) looseFile(id ObjectID) bool {
	if _, err := ParseID(string(id)); err != nil {
		return false
	}
	_, err := os.Stat(filepath.Join(b.commonDir, "objects", string(id[:2]), string(id[2:])))
	return err == nil
}

func (b *cliBackend) commit(ctx context.Context, id ObjectID) (*Commit, error) {
	typ, data, err := b.object(ctx, id)
	if err != nil {
		return nil, err
	}
	if typ != "commit" {
		return nil, fmt.Errorf("object %s is a %s, not a commit", id, typ)
	}
	return parseCommit(id, data)
}

// parseCommit reads the header of a raw commit object.
func parseCommit(id ObjectID, data []byte) (*Commit, error) {
	c := &Commit{ID: id}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			c.Message = string(data) // after the header's blank line
			break
		}
		key, value, _ := strings.Cut(string(line), " ")
		switch key {
		case "tree":
			c.Tree = ObjectID(value)
		case "parent":
			c.Parents = append(c.Parents, ObjectID(value))
		case "committer":
			t, err := signatureTime(value)
			if err != nil {
				return nil, fmt.Errorf("commit %s: %w", id, err)
			}
			c.Committer = t
		}
	}
	if c.Tree == "" {
		return nil, fmt.Errorf("commit %s has no tree", id)
	}
	return c, nil
}

// signatureTime parses the "<unix seconds> <±hhmm>" end of a signature.
func signatureTime(sig string) (time.Time, error) {
	i := strings.LastIndexByte(sig, '>')
	fields := strings.Fields(sig[i+1:])
	if len(fields) != 2 {
		return time.Time{}, fmt.Errorf("committer %q has no time", sig)
	}
	secs, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("committer time %q: %w", fields[0], err)
	}
	tz := fields[1]
	offset := 0
	if len(tz) == 5 && (tz[0] == '+' || tz[0] == '-') {
		hh, _ := strconv.Atoi(tz[1:3])
		mm, _ := strconv.Atoi(tz[3:5])
		offset = hh*3600 + mm*60
		if tz[0] == '-' {
			offset = -offset
		}
	}
	return time.Unix(secs, 0).In(time.FixedZone("", offset)), nil
}

func (b *cliBackend) tree(ctx context.Context, id ObjectID) ([]treeEntry, error) {
	typ, data, err := b.object(ctx, id)
	if err != nil {
		return nil, err
	}
	if typ != "tree" {
		return nil, fmt.Errorf("object %s is a %s, not a tree", id, typ)
	}
	return parseTree(id, data, len(id)/2)
}

// parseTree reads a raw tree object: "<octal mode> <name>\0<raw id>" entries.
func parseTree(id ObjectID, data []byte, idLen int) ([]treeEntry, error) {
	var out []treeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+idLen {
			return nil, fmt.Errorf("tree %s is malformed", id)
		}
		mode, err := filemode.New(string(data[:sp]))
		if err != nil {
			return nil, fmt.Errorf("tree %s: %w", id, err)
		}
		out = append(out, treeEntry{
			Name: string(data[sp+1 : nul]),
			Mode: mode,
			ID:   ObjectID(hex.EncodeToString(data[nul+1 : nul+1+idLen])),
		})
		data = data[nul+1+idLen:]
	}
	return out, nil
}

func (b *cliBackend) blob(ctx context.Context, id ObjectID) ([]byte, error) {
	typ, data, err := b.object(ctx, id)
	if err != nil {
		return nil, err
	}
	if typ != "blob" {
		return nil, fmt.Errorf("object %s is a %s, not a blob", id, typ)
	}
	return data, nil
}

// blobs reads the blobs asked for in one exchange with cat-file (see
// catFile.readStream), calling each in the order asked with one's bytes
// or the error blob would give for it. Where the exchange ends early (the
// process died: a lazy fetch a partial clone's promisor could not serve),
// the rest are read one by one, each with its own error, as blob reads
// them.
func (b *cliBackend) blobs(ctx context.Context, asks <-chan blobAsk, each func(key int, data []byte, err error) error) error {
	var eachErr error
	rest, err := b.batch.readStream(ctx, asks, func(a blobAsk, typ string, data []byte, err error) error {
		if err == nil && typ != "blob" {
			err = fmt.Errorf("object %s is a %s, not a blob", a.id, typ)
		}
		if err != nil {
			data, err = nil, b.objectErr(a.id, err)
		}
		eachErr = each(a.key, data, err)
		return eachErr
	})
	if err == nil || eachErr != nil || ctx.Err() != nil {
		return err
	}
	for _, a := range rest {
		data, err := b.blob(ctx, a.id)
		if err := each(a.key, data, err); err != nil {
			return err
		}
	}
	return nil
}

func (b *cliBackend) size(ctx context.Context, id ObjectID) (int64, error) {
	_, size, err := b.info(ctx, id)
	return size, err
}

// info asks cat-file --batch-check for an object's type and size.
func (b *cliBackend) info(ctx context.Context, id ObjectID) (string, int64, error) {
	typ, data, err := b.check.read(ctx, id, false)
	if err != nil {
		return "", 0, b.objectErr(id, err)
	}
	n, err := strconv.ParseInt(string(data), 10, 64)
	return typ, n, err
}

// has asks the object store itself (git would fetch a missing object to
// answer): go-git's storage reads SHA-1 pack indexes and loose objects
// whatever the repository's extensions.
func (b *cliBackend) has(ctx context.Context, id ObjectID) (bool, error) {
	if b.format != "sha1" {
		return false, errPresenceUnknown
	}
	b.mu.Lock()
	if b.store == nil {
		b.store = filesystem.NewStorage(bufferedIndexes{osfs.New(b.commonDir)}, cache.NewObjectLRU(0))
	}
	st := b.store
	b.mu.Unlock()
	return st.HasEncodedObject(plumbing.NewHash(string(id))) == nil, nil
}

func (b *cliBackend) kind(ctx context.Context, id ObjectID) (string, ObjectID, error) {
	typ, _, err := b.info(ctx, id)
	if errors.Is(err, errMissing) {
		return KindMissing, "", nil
	}
	var nf *NotFetchedError
	if errors.As(err, &nf) {
		return KindMissing, "", nil
	}
	if err != nil {
		return "", "", err
	}
	if typ != KindTag {
		return typ, "", nil
	}
	_, data, err := b.object(ctx, id)
	if err != nil {
		return "", "", err
	}
	target, _, _ := strings.Cut(string(data), "\n")
	if t, ok := strings.CutPrefix(target, "object "); ok {
		return KindTag, ObjectID(t), nil
	}
	return "", "", fmt.Errorf("tag %s names no object", id)
}

func (b *cliBackend) resolve(ctx context.Context, rev string) (ObjectID, error) {
	id, ok := b.lookupRevision(ctx, rev)
	if !ok {
		out, err := b.run(ctx, nil, "rev-parse", "--verify", "--quiet", rev)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			if strings.HasPrefix(rev, "HEAD") {
				if _, id, herr := b.head(ctx); herr == nil && id == "" {
					return "", ErrNoCommits
				}
			}
			return "", errUnknownRevision
		}
		id = ObjectID(strings.TrimSpace(string(out)))
	}
	for range 32 { // tags of tags, bounded
		kind, target, err := b.kind(ctx, id)
		if err != nil {
			return "", err
		}
		switch kind {
		case KindCommit:
			return id, nil
		case KindTag:
			id = target
		case KindMissing:
			return "", errMissing
		default:
			return "", errNotCommit
		}
	}
	return "", errNotCommit
}

// lookupRevision resolves rev through the running cat-file --batch-check
// instead of a `git rev-parse --verify --quiet` process of its own, when
// rev is a plainRevision, on which both run git's same name lookup
// (get_oid_with_context) and so name the same object. ok is false when
// cat-file did not find an object (unknown, ambiguous, or naming an object
// the store lacks) or rev is not plain: resolve then asks rev-parse, whose
// failure it turns into the errors it always gave.
func (b *cliBackend) lookupRevision(ctx context.Context, rev string) (ObjectID, bool) {
	if !plainRevision(rev) || ctx.Err() != nil {
		return "", false
	}
	id, _, _, err := b.check.ask(rev, false)
	if err != nil {
		// A dead promisor remote is not asked again by the rev-parse path.
		_ = b.objectErr("", err)
		return "", false
	}
	return id, true
}

// plainRevision reports whether rev is a name that `git rev-parse --verify
// --quiet` and cat-file's batch mode resolve alike. rev-parse reads some
// arguments before the name lookup both share: "A..B" and "A...B" as
// ranges, "X^@", "X^!" and "X^-N" as parent shorthands, "^X" as an
// exclusion; and with --quiet a reflog entry past the log's end ("@{N}")
// exits where cat-file dies. Those, any "<rev>:<path>" or ":/<text>" (the
// path may be relative to a working directory), anything cat-file's line
// cannot carry (a blank or control byte), and a backslash (no ref name
// holds one) go to rev-parse. What is left — refs, full or short hex ids,
// "~N", "^N", "^{type}" and "^{/text}" suffixes — is looked up by the same
// code with the same flags but for messages.
func plainRevision(rev string) bool {
	if rev == "" || rev[0] == '^' || rev[0] == '-' {
		return false
	}
	for _, bad := range []string{"..", "^@", "^!", "^-", "@{", ":"} {
		if strings.Contains(rev, bad) {
			return false
		}
	}
	for i := 0; i < len(rev); i++ {
		if c := rev[i]; c <= ' ' || c == 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

func (b *cliBackend) head(ctx context.Context) (string, ObjectID, error) {
	branch := ""
	if out, err := b.run(ctx, nil, "symbolic-ref", "-q", "HEAD"); err == nil {
		branch = strings.TrimPrefix(strings.TrimSpace(string(out)), "refs/heads/")
	} else if exitCode(err) != 1 { // 1: detached
		return "", "", err
	}
	out, err := b.run(ctx, nil, "rev-parse", "--verify", "--quiet", "HEAD")
	if err != nil {
		if exitCode(err) == 1 {
			return branch, "", nil // unborn branch
		}
		return "", "", err
	}
	return branch, ObjectID(strings.TrimSpace(string(out))), nil
}

func (b *cliBackend) refs(ctx context.Context, prefix string) ([]ref, error) {
	out, err := b.run(ctx, nil, "for-each-ref", "--format=%(objectname)%09%(symref)%09%(refname)", prefix)
	if err != nil {
		return nil, err
	}
	var refs []ref
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || f[1] != "" || !strings.HasPrefix(f[2], prefix) {
			continue // symbolic refs are skipped: their targets are listed
		}
		refs = append(refs, ref{Name: f[2], ID: ObjectID(f[0])})
	}
	return refs, nil
}

func (b *cliBackend) mergeBases(ctx context.Context, x, y ObjectID) ([]ObjectID, error) {
	out, err := b.run(ctx, nil, "merge-base", "--all", string(x), string(y))
	if err != nil {
		if exitCode(err) == 1 && len(bytes.TrimSpace(out)) == 0 {
			return nil, nil // unrelated histories
		}
		return nil, err
	}
	ids := idLines(out)
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

func (b *cliBackend) revList(ctx context.Context, head ObjectID, exclude []ObjectID) ([]ObjectID, error) {
	var in bytes.Buffer // git < 2.42 takes no --not on stdin: ^id excludes
	in.WriteString(string(head) + "\n")
	for _, x := range exclude {
		in.WriteString("^" + string(x) + "\n")
	}
	out, err := b.run(ctx, in.Bytes(), "rev-list", "--stdin")
	if err != nil {
		return nil, err
	}
	ids := idLines(out)
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

func idLines(out []byte) []ObjectID {
	var ids []ObjectID
	for _, f := range strings.Fields(string(out)) {
		ids = append(ids, ObjectID(f))
	}
	return ids
}

// worktree lists the index (git ls-files -s -t) with each entry's
// work-tree state from git status (an entry status does not report is
// clean), and the untracked files git status lists.
func (b *cliBackend) worktree(ctx context.Context) ([]indexEntry, []string, error) {
	// The index's listing and the status (which walks the work tree for
	// untracked files: ~150 ms of 100,000 files) run side by side.
	var out []byte
	var dirty *worktreeStatus
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		out, err = b.run(gctx, nil, "ls-files", "-s", "-t", "-z")
		return err
	})
	g.Go(func() (err error) {
		dirty, err = b.status(gctx)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	var entries []indexEntry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		// "<tag> <mode> <id> <stage>\t<path>"
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 4 {
			return nil, nil, fmt.Errorf("git ls-files: unexpected line %q", rec)
		}
		mode, err := filemode.New(f[1])
		if err != nil {
			return nil, nil, fmt.Errorf("git ls-files: %q: %w", rec, err)
		}
		stage, _ := strconv.Atoi(f[3])
		p := string(path)
		e := indexEntry{Path: p, Mode: mode, ID: ObjectID(f[2]), Stage: stage, SkipWorktree: f[0] == "S"}
		e.Clean = stage == 0 && !e.SkipWorktree && !dirty.modified[p]
		entries = append(entries, e)
	}
	return entries, dirty.untracked, nil
}

type worktreeStatus struct {
	modified  map[string]bool
	untracked []string
}

// status runs git status --porcelain=v2 -z: tracked paths whose work-tree
// copy differs from the index, and untracked paths (all of them, not
// collapsed into directories; a nested repository as "dir/").
func (b *cliBackend) status(ctx context.Context) (*worktreeStatus, error) {
	out, err := b.run(ctx, nil, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=none")
	if err != nil {
		return nil, err
	}
	st := &worktreeStatus{modified: map[string]bool{}}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) < 2 {
			continue
		}
		switch rec[0] {
		case '?':
			st.untracked = append(st.untracked, string(rec[2:]))
		case '1': // 1 XY sub mH mI mW hH hI path
			f := bytes.SplitN(rec, []byte{' '}, 9)
			if len(f) == 9 && len(f[1]) == 2 && f[1][1] != '.' {
				st.modified[string(f[8])] = true
			}
		case 'u': // unmerged: u XY sub m1 m2 m3 mW h1 h2 h3 path
			f := bytes.SplitN(rec, []byte{' '}, 11)
			if len(f) == 11 {
				st.modified[string(f[10])] = true
			}
		}
	}
	return st, nil
}

// catFile is one long-lived `git cat-file --batch` (or --batch-check)
// process. A process that dies (git exits when a lazy fetch from the
// promisor remote fails) is restarted on the next read.
type catFile struct {
	b    *cliBackend
	args []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *tailBuffer
	// starting is closed when prestart's goroutine is done; closed, set
	// by close, keeps that goroutine from starting a process after it.
	starting chan struct{}
	closed   bool
}

// promisorError is a cat-file process that died because a lazy fetch failed.
type promisorError struct{ detail string }

func (e *promisorError) Error() string {
	return "could not fetch from the promisor remote: " + e.detail
}

func (c *catFile) start() error {
	cmd := exec.Command("git", c.args...)
	cmd.Env = c.b.env()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	c.stderr = &tailBuffer{max: 4096}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start git %s: %w (is git installed and on PATH?)", strings.Join(c.args, " "), err)
	}
	c.cmd, c.stdin, c.stdout = cmd, stdin, bufio.NewReaderSize(stdout, 64<<10)
	return nil
}

// prestart starts the process on another goroutine, so that git's own
// start-up (~1–3 ms) overlaps the caller's work instead of delaying the
// first read (a range's two processes, started one after the other by
// their first reads, were ~4 ms of a 40 ms run). A failure to start is
// met again, and reported, by the first read.
func (c *catFile) prestart() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil || c.closed || c.starting != nil {
		return
	}
	done := make(chan struct{})
	c.starting = done
	go func() {
		defer close(done)
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.cmd == nil && !c.closed {
			_ = c.start()
		}
	}()
}

// stop ends the process; its exit status is of no interest once a read failed.
func (c *catFile) stop() {
	if c.cmd == nil {
		return
	}
	c.stdin.Close()
	_ = c.cmd.Wait()
	c.cmd = nil
}

func (c *catFile) close() error {
	c.mu.Lock()
	c.closed = true
	starting := c.starting
	c.mu.Unlock()
	if starting != nil {
		<-starting // a process it started is stopped below
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stop()
	return nil
}

// read asks for one object: its type and, with contents, its bytes (else
// its size in decimal).
func (c *catFile) read(ctx context.Context, id ObjectID, contents bool) (string, []byte, error) {
	_, typ, data, err := c.ask(string(id), contents)
	return typ, data, err
}

// errAmbiguous is cat-file's answer for a short object name that more
// than one object starts with.
var errAmbiguous = errors.New("ambiguous object name")

// ask sends one object name (an id, or a revision the caller has checked
// holds nothing git would read differently on this line) and returns the
// object id git found, its type and, with contents, its bytes (else its
// size in decimal).
func (c *catFile) ask(name string, contents bool) (ObjectID, string, []byte, error) {
	if !askable(name) {
		// git takes the whole line as the name and answers "<name>
		// missing": a blank would split that answer differently.
		return "", "", nil, fmt.Errorf("bad object id %q", name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		if err := c.start(); err != nil {
			return "", "", nil, err
		}
	}
	if _, err := io.WriteString(c.stdin, name+"\n"); err != nil {
		return "", "", nil, c.died(err)
	}
	return c.answer(name, contents)
}

// askable reports whether name may be sent on a line of its own.
func askable(name string) bool {
	return name != "" && !strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// answer reads git's answer for name (see ask). errMissing and
// errAmbiguous are the object's; any other error stopped the process.
func (c *catFile) answer(name string, contents bool) (ObjectID, string, []byte, error) {
	header, err := c.stdout.ReadString('\n')
	if err != nil {
		return "", "", nil, c.died(err)
	}
	f := strings.Fields(header)
	if len(f) == 2 && f[1] == "missing" {
		return "", "", nil, errMissing
	}
	if len(f) == 2 && f[1] == "ambiguous" {
		return "", "", nil, errAmbiguous
	}
	if len(f) != 3 {
		c.stop()
		return "", "", nil, fmt.Errorf("git cat-file: unexpected reply %q for %s", strings.TrimSpace(header), name)
	}
	if !contents {
		return ObjectID(f[0]), f[1], []byte(f[2]), nil
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		c.stop()
		return "", "", nil, fmt.Errorf("git cat-file: bad size in %q", strings.TrimSpace(header))
	}
	data := make([]byte, size+1)
	if _, err := io.ReadFull(c.stdout, data); err != nil {
		return "", "", nil, c.died(err)
	}
	return ObjectID(f[0]), f[1], data[:size], nil
}

// readStream reads the objects asked for on asks in one exchange, until
// asks is closed: each name is written as it comes while the answers are
// read, so that git inflates the next object while the last one is read
// instead of waiting for each name, and a caller can ask while it still
// finds what to ask for (hugo's 64 blobs a search reads from the store:
// ~9 ms one at a time, ~5 ms in one exchange, overlapped with the search
// of the work tree's files since). each gets the objects in the order
// asked, with errMissing for one git does not have. An error of each, of
// ctx or of the process ends the exchange and is returned, with the asks
// the process did not answer (an error of the process: the caller may
// read them otherwise); every ask is taken from asks all the same, so that
// a sender never blocks. The process is then stopped: answers were left
// unread.
func (c *catFile) readStream(ctx context.Context, asks <-chan blobAsk, each func(a blobAsk, typ string, data []byte, err error) error) ([]blobAsk, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var err error
	if c.cmd == nil {
		err = c.start()
	}
	// died: the process is gone, and the asks it did not answer may be
	// read otherwise (rest).
	died := err != nil
	// sent holds the asks written (or, once writing failed, taken), in order.
	sent := make(chan blobAsk, 256)
	go func(w io.Writer, werr error) {
		defer close(sent)
		bw := bufio.NewWriter(w)
		for a := range asks {
			if werr == nil && askable(string(a.id)) {
				_, werr = bw.WriteString(string(a.id) + "\n")
				// Flushed when no other ask is waiting (git answers what
				// it has while the caller looks for more), and before
				// waiting for the reader (which may wait for this answer).
				if werr == nil && (len(asks) == 0 || len(sent) == cap(sent)) {
					werr = bw.Flush()
				}
			}
			sent <- a
		}
	}(c.stdin, err)
	var rest []blobAsk
	// fail ends the exchange at once: the process is killed, not asked to
	// end (its answers are out of step with the names asked, and it may be
	// blocked writing one nobody reads, the writer above blocked behind it).
	fail := func(e error) {
		err = e
		if c.cmd != nil {
			_ = c.cmd.Process.Kill()
			c.stop()
		}
	}
	for a := range sent {
		switch {
		case err != nil:
		case ctx.Err() != nil:
			fail(ctx.Err())
		case !askable(string(a.id)):
			fail(fmt.Errorf("bad object id %q", a.id))
		}
		if err != nil {
			if died {
				rest = append(rest, a)
			}
			continue
		}
		_, typ, data, aerr := c.answer(string(a.id), true)
		if aerr != nil && !errors.Is(aerr, errMissing) && !errors.Is(aerr, errAmbiguous) {
			err, died = aerr, true // the process stopped
			rest = append(rest, a)
			continue
		}
		if e := each(a, typ, data, aerr); e != nil {
			fail(e)
		}
	}
	return rest, err
}

// died stops a process that stopped answering and says why.
func (c *catFile) died(err error) error {
	c.stop()
	msg := strings.TrimSpace(c.stderr.String())
	if strings.Contains(msg, "promisor") || strings.Contains(msg, "could not fetch") {
		return &promisorError{detail: lastLines(msg, 2)}
	}
	if msg != "" {
		return fmt.Errorf("git %s: %s", strings.Join(c.args, " "), lastLines(msg, 3))
	}
	return fmt.Errorf("git %s: %w", strings.Join(c.args, " "), err)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
