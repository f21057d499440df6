// Package source turns a repository state into a pack.Snapshot: a working
// tree, one commit, or a range base..head of a git repository, or a plain
// directory. It is the only package that knows git. A repository is read
// through one backend interface with two implementations: go-git in
// process, and the git CLI for what go-git cannot open (sparse checkouts,
// partial clones, SHA-256 repositories).
package source

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"golang.org/x/sync/singleflight"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/go-git/go-git/v5"
)

// Repo is an opened source directory: a git repository or a plain tree.
// Close it when done: a repository keeps files (go-git) or a git process
// (the git CLI) open between reads.
type Repo struct {
	// Root is the absolute path of the work tree (or plain directory); the
	// git directory for a bare repository.
	Root string
	// Name is the repository's name: the origin remote's last path element,
	// else the directory name, so that clones name themselves alike.
	Name string
	// HistoryBlobLimit is the largest blob the per-commit patches read
	// (0: no limit); a commit's change with a larger side is listed as
	// skipped instead (pack.CommitPatch.Skipped).
	HistoryBlobLimit int64
	// CommitsAside has a commit's, a range's or a push's snapshot read its
	// per-commit patches in the background (pack.Snapshot.ReadCommitsAside):
	// whatever reads them calls the snapshot's AwaitCommits first.
	CommitsAside bool
	// opts are the options the repository was opened with (to reopen it).
	opts OpenOptions
	// objectsByCLI: routeObjects sent the objects to the git CLI (a reopen
	// does it again).
	objectsByCLI bool
	// b reads the repository; nil for a plain directory. wt, when set,
	// lists the index and the untracked files instead (see routeLarge).
	b, wt             backend
	gogit             *git.Repository // the go-git backend's repository, else nil
	gitDir, commonDir string
	bare              bool
	// history answers history questions asked again; trees, commits and
	// blobs keep the objects read again (see memo).
	history memo[string, []ObjectID]
	trees   memo[ObjectID, []treeEntry]
	commits memo[ObjectID, Commit]
	blobs   memo[ObjectID, string]
	// reading joins concurrent reads of one tree or blob (see tree, blob).
	reading singleflight.Group
	// worktreeMisses holds the paths whose work-tree file once held
	// another content than the blob asked (see worktreeBlob).
	worktreeMisses sync.Map
	// worktree reads the work tree's files for worktreeBlob, through one
	// handle opened at its first read (nil when it could not be).
	worktreeOnce sync.Once
	worktree     *fsutil.Root
	// indexed is what the index recorded of the work tree's files, read
	// once by the first search that reads many (see loadIndexStats).
	indexedMu sync.Mutex
	indexed   atomic.Pointer[map[string]indexStat]
}

// ErrNoCommits is returned when a commit is asked of a repository that has none.
var ErrNoCommits = errors.New("the repository has no commits yet")

// Backends Open can choose.
const (
	// BackendAuto is go-git where it can read the repository, else the git CLI.
	BackendAuto = ""
	// BackendGoGit reads in process with go-git: no sparse checkouts
	// (extensions.worktreeConfig), partial clones or SHA-256 repositories.
	BackendGoGit = "go-git"
	// BackendCLI reads through the git CLI: whatever git opens.
	BackendCLI = "git"
)

// BackendEnv overrides the backend Open chooses (go-git or git): for
// diagnosis and measurement.
const BackendEnv = "CTXPACK_GIT_BACKEND"

// OpenOptions say how to open a repository.
type OpenOptions struct {
	// Backend is BackendAuto, BackendGoGit or BackendCLI.
	Backend string
}

// Open opens dir with the backend BackendEnv names (BackendAuto when
// unset). A directory inside a git work tree opens that repository; any
// other directory is a plain tree.
func Open(dir string) (*Repo, error) {
	return OpenWith(dir, OpenOptions{Backend: os.Getenv(BackendEnv)})
}

// OpenWith opens dir with the backend o names. BackendAuto takes go-git
// unless the repository needs what go-git cannot do: an extension it does
// not know (worktreeConfig for sparse checkouts, objectFormat for SHA-256)
// or a promisor remote (a partial clone, whose missing objects git fetches
// on demand).
func OpenWith(dir string, o OpenOptions) (*Repo, error) {
	switch o.Backend {
	case BackendAuto, BackendGoGit, BackendCLI:
	default:
		return nil, fmt.Errorf("%s=%q: use %s or %s", BackendEnv, o.Backend, BackendGoGit, BackendCLI)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open %s: not a directory", dir)
	}
	r, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) { // or a bare repository: dir itself
		r, err = git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	}
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return &Repo{Root: abs, Name: filepath.Base(abs)}, nil
	}
	why := "" // why go-git cannot read this repository
	if err != nil {
		why = err.Error()
	} else if remotes := promisorRemotes(r); len(remotes) > 0 {
		why = "a partial clone (promisor remote " + strings.Join(remotes, ", ") + "): go-git cannot fetch its missing objects"
	}
	if why == "" && o.Backend != BackendCLI {
		repo, err := openGoGitRepo(r)
		if err != nil {
			return nil, err
		}
		if o.Backend == BackendAuto {
			repo.routeLarge(largeObjectCount, largeIndex)
		}
		repo.opts = o
		return repo, nil
	}
	if o.Backend == BackendGoGit {
		return nil, fmt.Errorf("open git repository at %s with go-git: %s; unset %s to read it through the git CLI", dir, why, BackendEnv)
	}
	repo, cerr := openCLI(context.Background(), abs)
	if cerr != nil {
		if why == "" {
			return nil, fmt.Errorf("open git repository at %s: %w", dir, cerr)
		}
		return nil, fmt.Errorf("open git repository at %s: go-git cannot read it (%s), and the git CLI failed: %w", dir, why, cerr)
	}
	repo.opts = o
	return repo, nil
}

func openGoGitRepo(r *git.Repository) (*Repo, error) {
	b, err := openGoGit(r)
	if err != nil {
		return nil, fmt.Errorf("open git repository: %w", err)
	}
	repo := &Repo{Root: b.root, b: b, gogit: b.repo, bare: b.root == ""}
	if repo.bare {
		fs, ok := b.storage.Filesystem().(interface{ Root() string })
		if ok {
			repo.Root = fs.Root()
		}
	}
	if repo.gitDir, repo.commonDir, err = gitDirs(repo.Root, repo.bare); err != nil {
		b.close()
		return nil, err
	}
	repo.Name = filepath.Base(repo.Root)
	if name := originName(r); name != "" {
		repo.Name = name
	} else if hasIncludes(filepath.Join(repo.commonDir, "config")) {
		// go-git does not follow include.path and includeIf: ask git.
		if name := cliOriginName(context.Background(), repo.Root); name != "" {
			repo.Name = name
		}
	}
	return repo, nil
}

// Where go-git's costs pass git's (measured: BenchmarkSnapshots and
// bench/range/run.sh): go-git builds an in-memory map of every object of a
// pack index before its first read (~0.7 µs an object: 0.25 s for a
// 360,000-object repository), where git's commands start in a few
// milliseconds each; and git status lists a work tree of 10,000 files in
// half of go-git's index read and ignore-aware walk.
const (
	largeObjectCount = 50000
	largeIndex       = 2000
)

// routedObjectCount: see routeObjects (a variable: tests lower it).
var routedObjectCount = 10000

// routeLarge sends what git does faster to the git CLI, when it is
// installed: objects, history and notes in a repository of more than
// maxObjects packed objects, else the work-tree listing of an index of more
// than maxIndex entries.
func (r *Repo) routeLarge(maxObjects, maxIndex int) {
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	cli := &cliBackend{gitDir: r.gitDir, commonDir: r.commonDir, root: r.Root, format: "sha1"}
	if r.bare {
		cli.root = ""
	}
	cli.batch = &catFile{b: cli, args: []string{"cat-file", "--batch"}}
	cli.check = &catFile{b: cli, args: []string{"cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"}}
	switch {
	case packedObjects(r.commonDir) > maxObjects:
		// The work tree and the notes too: go-git is not read at all.
		r.b, r.gogit = &routedBackend{cliBackend: cli, gogit: r.b}, nil
	case !r.bare && indexEntries(r.gitDir) > maxIndex:
		r.wt = cli
	}
}

// routedBackend is the git CLI, closing go-git too.
type routedBackend struct {
	*cliBackend
	gogit backend
}

func (b *routedBackend) close() error { return errors.Join(b.cliBackend.close(), b.gogit.close()) }

func (r *Repo) worktreeBackend() backend {
	if r.wt != nil {
		return r.wt
	}
	return r.b
}

// packedObjects counts the objects of a repository's pack indexes (the
// last fan-out entry of each version-2 .idx).
func packedObjects(commonDir string) int {
	idxs, _ := filepath.Glob(filepath.Join(commonDir, "objects", "pack", "*.idx"))
	n := 0
	for _, p := range idxs {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		var head [8 + 256*4]byte
		if _, err := io.ReadFull(f, head[:]); err == nil && string(head[:4]) == "\xfftOc" {
			n += int(binary.BigEndian.Uint32(head[len(head)-4:]))
		}
		f.Close()
	}
	return n
}

// indexEntries is the number of entries the index header declares.
func indexEntries(gitDir string) int {
	f, err := os.Open(filepath.Join(gitDir, "index"))
	if err != nil {
		return 0
	}
	defer f.Close()
	var head [12]byte
	if _, err := io.ReadFull(f, head[:]); err != nil || string(head[:4]) != "DIRC" {
		return 0
	}
	return int(binary.BigEndian.Uint32(head[8:]))
}

// promisorRemotes lists the remotes a partial clone fetches missing
// objects from (remote.<name>.promisor, extensions.partialClone).
func promisorRemotes(r *git.Repository) []string {
	cfg, err := r.Config()
	if err != nil || cfg.Raw == nil {
		return nil
	}
	set := map[string]bool{}
	if name := cfg.Raw.Section("extensions").Option("partialclone"); name != "" {
		set[name] = true
	}
	for _, sub := range cfg.Raw.Section("remote").Subsections {
		if truthy(sub.Option("promisor")) {
			set[sub.Name] = true
		}
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}

// openCLI opens the repository around dir through the git CLI.
func openCLI(ctx context.Context, dir string) (*Repo, error) {
	env := gitEnv()
	out, err := runGit(ctx, env, dir, nil, "rev-parse", "--is-bare-repository", "--absolute-git-dir", "--git-common-dir")
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, errors.New("git is not installed or not on PATH: install git (ctxpack reads this repository through it)")
		}
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 3 {
		return nil, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	b := &cliBackend{gitDir: lines[1], format: "sha1"}
	bare := lines[0] == "true"
	common := lines[2]
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	b.commonDir = filepath.Clean(common)
	repo := &Repo{Root: b.gitDir, b: b, gitDir: b.gitDir, commonDir: b.commonDir, bare: bare}
	args := []string{"rev-parse", "--show-object-format"}
	if !bare {
		args = append(args, "--show-toplevel")
	}
	if out, err = runGit(ctx, env, dir, nil, args...); err != nil {
		return nil, err
	}
	lines = strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(args)-1 {
		return nil, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	b.format = lines[0]
	if b.format != "sha1" && b.format != "sha256" {
		return nil, fmt.Errorf("object format %q: ctxpack reads sha1 and sha256 repositories", b.format)
	}
	if !bare {
		b.root = filepath.Clean(lines[1])
		repo.Root = b.root
	}
	b.batch = &catFile{b: b, args: []string{"cat-file", "--batch"}}
	b.check = &catFile{b: b, args: []string{"cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"}}
	repo.Name = filepath.Base(repo.Root)
	// The origin's URL and the promisor remotes, from every config file
	// git reads (includes and includeIf too).
	out, err = b.run(ctx, nil, "config", "--get-regexp", `^(remote\..*\.promisor|extensions\.partialclone|remote\.origin\.url)$`)
	if err != nil && exitCode(err) != 1 {
		return nil, err
	}
	set := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		key, value, _ := strings.Cut(line, " ")
		switch {
		case key == "remote.origin.url":
			if name := urlName(value); name != "" {
				repo.Name = name
			}
		case key == "extensions.partialclone" && value != "":
			set[value] = true
		case strings.HasSuffix(key, ".promisor") && truthy(value):
			set[strings.TrimSuffix(strings.TrimPrefix(key, "remote."), ".promisor")] = true
		}
	}
	for n := range set {
		b.promisors = append(b.promisors, n)
	}
	sort.Strings(b.promisors)
	return repo, nil
}

// Prestart readies the repository for a run that reads objects (a
// commit's, a range's or a push's pack), which calls it first: with the
// auto backend its objects are read through the git CLI wherever git is
// installed, from routedObjectCount packed objects (routeObjects), and the
// processes that read them start now, on other goroutines, so that git's
// start-up overlaps the run's own (see catFile.prestart).
func (r *Repo) Prestart() {
	r.routeObjects()
	if b, ok := r.cli(); ok {
		b.prestart()
	}
}

// routeObjects sends the object reads of a repository go-git reads to the
// git CLI, as routeLarge does for a large one, when it was opened with the
// auto backend and git is installed. go-git reads a pack index whole
// before its first object (its checksum through the collision-detecting
// sha1cd, then a map of its offsets: ~4–6 ms of CPU on gin or flask) and
// resolves each delta chain in process, one read at a time; a cat-file
// started beside the run's start-up answers sooner, from
// routedObjectCount packed objects. Ranges of gin, cobra and flask (25,141,
// 13,044 and 46,705 objects), 5 rounds of 10 alternating runs: CPU 50.2 →
// 48.0, 46.8 → 44.8, 53.2 → 50.4 ms; wall 41.2 → 40.6, 42.1 → 38.5, 43.2
// → 43.4 ms. Below, go-git's index costs little and the processes more:
// this repository's 3-file commit (3,738 packed objects, 633 loose) took
// 44.4 → 49.8 ms routed. The work tree too, then (a run that reads
// objects lists none).
func (r *Repo) routeObjects() {
	if r.opts.Backend != BackendAuto {
		return
	}
	if _, ok := r.b.(*gogitBackend); !ok {
		return // the CLI already, or a plain directory
	}
	if packedObjects(r.commonDir) < routedObjectCount {
		return
	}
	r.routeLarge(-1, -1) // every repository counts as large
	if _, ok := r.b.(*routedBackend); ok {
		r.objectsByCLI = true
	}
}

// Close releases what the repository keeps open.
func (r *Repo) Close() error {
	if r == nil || r.b == nil {
		return nil
	}
	err := r.b.close()
	if r.wt != nil {
		err = errors.Join(err, r.wt.close())
	}
	if r.worktree != nil {
		err = errors.Join(err, r.worktree.Close())
	}
	return err
}

// IsGit reports whether the source is a git repository.
func (r *Repo) IsGit() bool { return r.b != nil }

// Backend names the backend that reads the repository (BackendGoGit or
// BackendCLI), "" for a plain directory.
func (r *Repo) Backend() string {
	if r.b == nil {
		return ""
	}
	return r.b.name()
}

// ObjectFormat is the repository's hash: "sha1" or "sha256" ("" for a
// plain directory).
func (r *Repo) ObjectFormat() string {
	if r.b == nil {
		return ""
	}
	return r.b.objectFormat()
}

// Git returns the go-git repository when go-git reads this repository,
// nil otherwise (a plain directory, or a repository the git CLI reads).
func (r *Repo) Git() *git.Repository { return r.gogit }

func originName(r *git.Repository) string {
	rem, err := r.Remote("origin")
	if err != nil || len(rem.Config().URLs) == 0 {
		return ""
	}
	return urlName(rem.Config().URLs[0])
}

// urlName is the repository a remote URL names: its path on the host
// ("owner/name" on GitHub, "group/sub/name" on GitLab) without ".git", or,
// for a local path or file:// URL (no owner), its last element.
func urlName(u string) string {
	u = strings.TrimSpace(u)
	hosted := false
	if parsed, err := url.Parse(u); err == nil && parsed.Scheme != "" && len(parsed.Scheme) > 1 {
		hosted = parsed.Host != "" && parsed.Scheme != "file"
		u = parsed.Path
	} else if i := strings.Index(u, ":"); i > 1 && !strings.ContainsAny(u[:i], "/\\") { // scp-like git@host:org/repo.git
		hosted = true
		u = u[i+1:]
	}
	u = strings.TrimSuffix(strings.TrimRight(filepath.ToSlash(u), "/"), ".git")
	if hosted {
		if p := strings.Trim(path.Clean("/"+u), "/"); p != "" && p != "." {
			return p
		}
		return ""
	}
	if u == "" {
		return ""
	}
	return path.Base(u)
}

// NameFromEnv names the repository owner/name (GITHUB_REPOSITORY) when its
// remote did not: a checkout without an origin, or one whose origin is a
// local path.
func (r *Repo) NameFromEnv(ownerName string) {
	if ownerName != "" && !strings.Contains(r.Name, "/") {
		r.Name = ownerName
	}
}

// Resolve turns a revision (branch, tag, full or short SHA, HEAD~N) into a
// commit id.
func (r *Repo) Resolve(rev string) (ObjectID, error) {
	return r.ResolveContext(context.Background(), rev)
}

// ResolveContext is Resolve with a context.
func (r *Repo) ResolveContext(ctx context.Context, rev string) (ObjectID, error) {
	if r.b == nil {
		return "", fmt.Errorf("revision %q: %s is not a git repository", rev, r.Root)
	}
	if rev == "" {
		return "", errors.New("empty revision")
	}
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("revision %q: a revision cannot start with '-'", rev)
	}
	id, err := r.b.resolve(ctx, rev)
	switch {
	case err == nil:
		return id, nil
	case errors.Is(err, ErrNoCommits):
		return "", fmt.Errorf("revision %q: %w", rev, ErrNoCommits)
	case errors.Is(err, errUnknownRevision):
		return "", fmt.Errorf("unknown revision %q: check the branch, tag or commit exists (git log --oneline)", rev)
	case errors.Is(err, errNotCommit):
		return "", fmt.Errorf("revision %q is not a commit", rev)
	case errors.Is(err, errMissing):
		return "", fmt.Errorf("revision %q names an object that is not in the repository: fetch it (git fetch)", rev)
	case errors.Is(err, errDamaged):
		return "", fmt.Errorf("revision %q names an object that is damaged in the object store: %s: %w", rev, damagedHelp, err)
	}
	return "", fmt.Errorf("revision %q: %w", rev, err)
}

// epoch returns SOURCE_DATE_EPOCH when set, else fallback.
func epoch(fallback time.Time) (time.Time, error) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds", s)
		}
		return time.Unix(n, 0).UTC(), nil
	}
	return fallback.UTC(), nil
}

func sortFiles(files []pack.File) {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
}

func sortChanges(changes []pack.Change) {
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
}

// StateDir is where ctxpack keeps local state (packs, records, scan cache):
// <common dir>/ctxpack, shared by linked worktrees; "" for a plain directory.
func (r *Repo) StateDir() string {
	if r.b == nil {
		return ""
	}
	return filepath.Join(r.commonDir, "ctxpack")
}

// MakeStateDir makes the directory name of the state directory (StateDir),
// and the state directory, when absent, and returns its path. Neither is
// followed where it is a symlink: a repository from elsewhere (a tarball, a
// restored CI cache, a shared workspace) brings what is in its git
// directory, and ctxpack writes into a link planted there nowhere; such a
// link, or a file, is an error that names it (fsutil.MkdirNoFollow).
func (r *Repo) MakeStateDir(name string) (string, error) {
	if r.b == nil {
		return "", fmt.Errorf("%s is not a git repository: no state directory", r.Root)
	}
	return fsutil.MkdirNoFollow(r.commonDir, 0o755, "ctxpack", name)
}

// safePath makes a path valid UTF-8 for JSON, reversibly (RawPath undoes
// it): each byte of an invalid sequence becomes a visible \xNN escape, and
// so does the backslash of a name that could otherwise be read as holding
// such an escape (\x5c). Any other name — every valid UTF-8 name without
// a "\xNN" in it — is itself, so distinct names stay distinct and none
// collapses into U+FFFD.
func safePath(p string) string {
	if utf8.ValidString(p) && !hexEscape.MatchString(p) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\\':
			fmt.Fprintf(&b, `\x%02x`, p[i])
		default:
			b.WriteString(p[i : i+size])
		}
		i += size
	}
	return b.String()
}

// hexEscape is what safePath writes for one byte.
var hexEscape = regexp.MustCompile(`\\x[0-9a-fA-F]{2}`)

// RawPath returns the name git holds for a path of a snapshot or a pack
// (the inverse of the escaping of names that are not valid UTF-8).
func RawPath(p string) string {
	if !hexEscape.MatchString(p) {
		return p
	}
	return hexEscape.ReplaceAllStringFunc(p, func(m string) string {
		n, _ := strconv.ParseUint(m[2:], 16, 8)
		return string([]byte{byte(n)})
	})
}
