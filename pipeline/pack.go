// Package pipeline runs ctxpack's stages end to end — source, policy, secret
// scan, build, audit, record, publish — for the CLI, the hook and the Action.
// Each caller builds a PackOptions and gets an Outcome; nothing here prints.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/lang"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pack/schema"
	"github.com/ctxpack/ctxpack/policy"
	"github.com/ctxpack/ctxpack/source"
)

// Version is the tool version stamped in packs and records (set at link time).
var Version = "0.1.0-dev"

// PackOptions say what to pack and how.
type PackOptions struct {
	// Dir is a directory inside the repository (or a plain directory).
	Dir string
	// Commit packs one commit; Base and Head pack a range; neither packs the
	// working tree.
	Commit string
	Base   string
	Head   string
	// PolicyFile is an operator's policy file (on disk, outside the
	// repository's control): it replaces the repository's .ctxpack.yml.
	PolicyFile string
	// PolicyPath is the repository's policy file, relative to its root
	// (default .ctxpack.yml), read from wherever the configuration is read
	// (the base of a change, or the work tree).
	PolicyPath string
	// Overrides applied on top of the policy (zero values leave it alone).
	Type string
	Tier string
	// Scope overrides pack.scope: what a commit or range pack lists of the
	// head tree (change or tree).
	Scope           string
	Include         []string
	Exclude         []string
	MaxContentBytes int64
	MaxFiles        int
	MaxFileBytes    int64
	// MaxTokens overrides limits.max_tokens, a change pack's token budget.
	MaxTokens     int
	SecretsAction string
	// Goal, Task and PullRequest are the change's intent beyond its commit
	// messages (--goal, --task, the Action's pull request).
	Goal        string
	Task        *pack.Task
	PullRequest *pack.PullRequest
	// Trigger overrides the source's trigger (push, pull_request, pre-push).
	Trigger string
	// Repository is the repository's owner/name (GITHUB_REPOSITORY) for
	// when its remote does not say it (no origin, or a local path).
	Repository string
	// Progress, when set, is told when a stage starts (nil: nobody asks).
	Progress func(Progress)
	// Built, when set, is given the pack once its bytes are final, before
	// the history scan and the audit: a caller that writes the pack can
	// start writing it then (fsutil.Prepare), beside the audit. The pack is
	// written whatever the verdict; the verdict decides what may leave.
	Built func(*pack.Result)
}

// Progress is where a run is: the stage that starts and the files and bytes
// of the snapshot it works on (0 before the snapshot is read).
type Progress struct {
	Stage string
	Files int
	Bytes int64
}

func (o PackOptions) progress(stage string, snap *pack.Snapshot) {
	if o.Progress == nil {
		return
	}
	p := Progress{Stage: stage}
	if snap != nil {
		p.Files = len(snap.Files)
		for _, f := range snap.Files {
			p.Bytes += f.Size
		}
	}
	o.Progress(p)
}

// UsageError is a problem with what was asked (exit 2), not with the run.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Outcome is everything a run produced. Close it when done with its
// repository (its notes are written through it).
type Outcome struct {
	Repo       *source.Repo
	Config     *Config
	Policy     *policy.Policy
	PolicyFile string
	Snapshot   *pack.Snapshot
	Result     *pack.Result
	Scanner    *audit.Scanner
	// progress reports the stages after the build (nil: nobody asks).
	progress func(stage string, snap *pack.Snapshot)
	// built is PackOptions.Built.
	built func(*pack.Result)
}

// Close releases the repository.
func (o *Outcome) Close() error { return o.Repo.Close() }

// LoadPolicy finds the effective policy for opts: the named file, else the
// repository's .ctxpack.yml, else the defaults; then the overrides.
func LoadPolicy(root string, opts PackOptions) (*policy.Policy, string, error) {
	var pol *policy.Policy
	var file string
	var err error
	if opts.PolicyFile != "" {
		file = opts.PolicyFile
		pol, err = policy.LoadFile(opts.PolicyFile)
	} else {
		pol, file, err = policy.Find(root)
	}
	if err != nil {
		return nil, "", err
	}
	if err := applyOverrides(pol, opts); err != nil {
		return nil, "", &UsageError{err}
	}
	return pol, file, nil
}

func applyOverrides(pol *policy.Policy, opts PackOptions) error {
	if opts.Type != "" {
		switch opts.Type {
		case policy.TypeAuto, policy.TypeFull, policy.TypeSummary:
			pol.Pack.Type = opts.Type
		default:
			return fmt.Errorf("--type %q: use auto, full or summary", opts.Type)
		}
	}
	if opts.Scope != "" {
		if opts.Scope != policy.ScopeChange && opts.Scope != policy.ScopeTree {
			return fmt.Errorf("--scope %q: use change or tree", opts.Scope)
		}
		pol.Pack.Scope = opts.Scope
	}
	if opts.Tier != "" {
		if _, ok := policy.TierChars[opts.Tier]; !ok && opts.Tier != policy.TierNone {
			return fmt.Errorf("--tier %q: use strong, default, cheap or none", opts.Tier)
		}
		pol.Pack.Tier = opts.Tier
	}
	for _, g := range append(append([]string{}, opts.Include...), opts.Exclude...) {
		if err := policy.CheckGlob(g); err != nil {
			return fmt.Errorf("--include/--exclude: %w", err)
		}
	}
	pol.Pack.Include = append(pol.Pack.Include, opts.Include...)
	pol.Pack.Exclude = append(pol.Pack.Exclude, opts.Exclude...)
	if opts.MaxContentBytes < 0 || opts.MaxFiles < 0 || opts.MaxFileBytes < 0 {
		return errors.New("--max-content-bytes, --max-files and --max-file-bytes must be positive")
	}
	if opts.MaxContentBytes > 0 {
		pol.Limits.MaxContentBytes = opts.MaxContentBytes
	}
	if opts.MaxTokens < 0 || opts.MaxTokens > policy.MaxTokenBudget {
		return fmt.Errorf("--max-tokens %d: a number of tokens from 1 to %d (0 sizes the budget to the change)", opts.MaxTokens, policy.MaxTokenBudget)
	}
	if opts.MaxTokens > 0 {
		pol.Limits.MaxTokens = opts.MaxTokens
	}
	if opts.MaxFiles > 0 {
		pol.Limits.MaxFiles = opts.MaxFiles
	}
	if opts.MaxFileBytes > 0 {
		pol.Limits.MaxFileBytes = opts.MaxFileBytes
	}
	if opts.SecretsAction != "" {
		switch opts.SecretsAction {
		case policy.ActionRedact, policy.ActionExclude, policy.ActionFail:
			pol.Secrets.Action = opts.SecretsAction
		default:
			return fmt.Errorf("--secrets-action %q: use redact, exclude or fail", opts.SecretsAction)
		}
	}
	return nil
}

// checkSource refuses source options that do not name one source.
func checkSource(opts PackOptions) error {
	if opts.Commit != "" && (opts.Base != "" || opts.Head != "") {
		return &UsageError{errors.New("--commit cannot be combined with --base/--head")}
	}
	if opts.Head != "" && opts.Base == "" {
		return &UsageError{errors.New("--head needs --base (the range is base..head)")}
	}
	return nil
}

// Snapshot snapshots the source named by opts: a commit, a range or the
// working tree of repo. scope (policy.ScopeChange or policy.ScopeTree) is
// what a commit or range snapshot lists of the head tree.
func Snapshot(ctx context.Context, repo *source.Repo, opts PackOptions, scope string) (*pack.Snapshot, error) {
	if err := checkSource(opts); err != nil {
		return nil, err
	}
	var snap *pack.Snapshot
	var err error
	switch {
	case opts.Commit != "":
		snap, err = repo.Commit(ctx, opts.Commit, scope)
	case opts.Base != "":
		snap, err = repo.Range(ctx, opts.Base, headOf(opts), scope)
	default:
		snap, err = repo.Worktree(ctx)
	}
	if err != nil {
		return nil, err
	}
	if opts.Trigger != "" {
		snap.Source.Trigger = opts.Trigger
	}
	ApplyIntent(snap, opts)
	return snap, nil
}

// ApplyIntent adds what the caller knows of the change's intent to the
// snapshot's (its commit messages).
func ApplyIntent(snap *pack.Snapshot, opts PackOptions) {
	if opts.Goal != "" {
		snap.Intent.Goal = opts.Goal
	}
	if opts.Task != nil {
		snap.Intent.Task = opts.Task
	}
	if opts.PullRequest != nil {
		snap.Intent.PullRequest = opts.PullRequest
	}
}

func headOf(opts PackOptions) string {
	if opts.Head == "" {
		return "HEAD"
	}
	return opts.Head
}

// ResolveConfig finds the configuration opts apply in repo: the work
// tree's for a work-tree pack; for a commit or range, the base's (see
// ChangeConfig), with the base and head resolved as the snapshot will.
func ResolveConfig(ctx context.Context, repo *source.Repo, opts PackOptions) (*Config, error) {
	if err := checkSource(opts); err != nil {
		return nil, err
	}
	if opts.Commit == "" && opts.Base == "" {
		return WorktreeConfig(repo, opts)
	}
	headRev := opts.Commit
	if headRev == "" {
		headRev = headOf(opts)
	}
	head, err := repo.Resolve(headRev)
	if err != nil {
		return nil, err
	}
	base, err := repo.DiffBase(opts.Commit, opts.Base, headRev)
	if err != nil {
		return nil, err
	}
	return ChangeConfig(ctx, opts, GitTree(repo, base), GitTree(repo, head.String()))
}

// Pack runs source → policy → scan → build.
func Pack(ctx context.Context, opts PackOptions) (*Outcome, error) {
	dir := opts.Dir
	if dir == "" {
		dir = "."
	}
	repo, err := source.Open(dir)
	if err != nil {
		return nil, err
	}
	repo.NameFromEnv(opts.Repository)
	out, err := packRepo(ctx, repo, opts)
	if err != nil {
		repo.Close()
		return nil, err
	}
	return out, nil
}

// packRepo is Pack on an opened repository.
func packRepo(ctx context.Context, repo *source.Repo, opts PackOptions) (*Outcome, error) {
	if readsCommits(opts) {
		repo.Prestart() // not for a tree, which reads no object but HEAD's id
	}
	Preload()
	cfg, err := ResolveConfig(ctx, repo, opts)
	if err != nil {
		return nil, err
	}
	// The scanner is built while the source is read, with the collector
	// paused (go run ./bench/cmd/startup).
	defer pauseGC(heapLimitFor(opts))()
	var scanner *audit.Scanner
	var scanErr error
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		scanner, scanErr = NewScanner(ctx, repo, cfg)
	}()
	repo.HistoryBlobLimit = historyBlobLimit(cfg.Policy)
	repo.CommitsAside = true // the build awaits them (pack.RedactNames)
	opts.progress("reading the repository", nil)
	snap, err := Snapshot(ctx, repo, opts, cfg.Policy.Pack.Scope)
	<-loaded
	if err != nil {
		return nil, err
	}
	if scanErr != nil {
		snap.StopCommits()
		return nil, scanErr
	}
	snap.Source.Config = cfg.Origin
	opts.progress("scanning and packing", snap)
	out, err := build(ctx, repo, snap, cfg, scanner)
	if err != nil {
		snap.StopCommits()
		return nil, err
	}
	out.progress, out.built = opts.progress, opts.Built
	return out, nil
}

// Preload prepares on another core what most runs need whatever their
// configuration (gitleaks' default rules, the packages' patterns, the pack
// schema: ~5 ms of a small change's ~40), while the run reads the
// repository; what is not ready when needed is prepared then. Pack and a
// push's Run call it; a caller that reads the repository first (the
// pre-push hook's plan) can call it before. A run that reads commits calls
// source.Repo.Prestart beside it.
func Preload() {
	go func() {
		audit.Preload()
		lang.Preload()
		schema.PreloadPack()
	}()
}

// build packs a snapshot under a configuration with a scanner.
func build(ctx context.Context, repo *source.Repo, snap *pack.Snapshot, cfg *Config, scanner *audit.Scanner) (*Outcome, error) {
	res, err := pack.Build(ctx, snap, pack.Options{
		Policy:      cfg.Policy,
		Scanner:     scanner,
		Sensitive:   audit.SensitiveFile,
		ToolVersion: Version,
	})
	if err != nil {
		return nil, err
	}
	return &Outcome{Repo: repo, Config: cfg, Policy: cfg.Policy, PolicyFile: cfg.PolicyFile, Snapshot: snap, Result: res, Scanner: scanner}, nil
}

// NewScanner builds the gitleaks scanner for a repository and its
// configuration, with the scan cache under the repository's .git/ctxpack
// when there is one (scanCache). Where the configuration is the base's (a commit, a
// range, a push, a pull request), so is the right to an inline
// gitleaks:allow: it is honoured for a finding whose lines the base
// already has, not for one with a line the change brings.
func NewScanner(ctx context.Context, repo *source.Repo, cfg *Config) (*audit.Scanner, error) {
	opts := audit.ScannerOptions{RepoRoot: repo.Root, Files: cfg.Gitleaks}
	if o := cfg.Origin; o != nil && o.From == policy.ConfigFromBase {
		opts.InlineAllow = baseLines(ctx, repo, o.Commit)
	}
	if cfg.Gitleaks == nil && cfg.Policy.Secrets.Config != "" {
		opts.ConfigPath = filepath.Join(repo.Root, filepath.FromSlash(cfg.Policy.Secrets.Config))
	}
	if repo.StateDir() != "" {
		if dir, key, ok := scanCache(repo); ok {
			opts.CacheDir, opts.CacheKey = dir, key
		}
	}
	s, err := audit.NewScanner(opts)
	if err != nil {
		return nil, fmt.Errorf("start secret scanner: %w", err)
	}
	return s, nil
}

// baseLines says whether commit's version of a file has a line (as
// audit.AllowLine spells it). A file's base version is read the first
// time the scan asks about it (only about the lines of a finding an allow
// comment lies in), never the whole tree: in a partial clone that would
// fetch every blob. A file that cannot be read there (absent, not a
// regular file, over 16 MiB, a base not in a shallow checkout) has no
// lines: no comment is honoured, the strict way.
func baseLines(ctx context.Context, repo *source.Repo, commit string) func(path, line string) bool {
	const maxBaseFile = 16 << 20
	var mu sync.Mutex
	lines := map[string]map[string]bool{}
	present := repo.HasCommit(commit)
	return func(path, line string) bool {
		mu.Lock()
		defer mu.Unlock()
		set, ok := lines[path]
		if !ok {
			set = map[string]bool{}
			if present && source.TreePath(path) {
				if b, err := repo.FileAt(ctx, commit, path, maxBaseFile); err == nil {
					for l := range strings.SplitSeq(string(b.Data), "\n") {
						set[audit.AllowLine(l)] = true
					}
				}
			}
			lines[path] = set
		}
		return set[line]
	}
}

// historyBlobLimit is the largest blob the per-commit secret scan reads:
// secrets.history_max_blob_bytes (100 MiB by default), far above what a
// pack may carry, since history is scanned, not sent. A larger one is not
// read (history_blob_skipped fails the verdict, unless
// secrets.history_unavailable is warn): a blob of gigabytes would cost
// minutes and as many gigabytes of memory.
func historyBlobLimit(pol *policy.Policy) int64 { return pol.HistoryBlobLimit() }

// Query builds the query pack (seed 003) of text over the tree opts names:
// a commit's (--commit) or the working tree's. What it returns has been
// scanned once more whole, after the chunks were: a finding there is an
// error, never a pack.
func Query(ctx context.Context, opts PackOptions, text string, maxChars int) (*pack.QueryPack, []byte, error) {
	if opts.Base != "" || opts.Head != "" {
		return nil, nil, &UsageError{errors.New("--query searches one tree: the working tree, or --commit REV")}
	}
	if maxChars < 0 {
		return nil, nil, &UsageError{fmt.Errorf("--max-chars %d: a positive number of characters", maxChars)}
	}
	dir := opts.Dir
	if dir == "" {
		dir = "."
	}
	repo, err := source.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := ResolveConfig(ctx, repo, opts)
	if err != nil {
		return nil, nil, err
	}
	scanner, err := NewScanner(ctx, repo, cfg)
	if err != nil {
		return nil, nil, err
	}
	snap, err := Snapshot(ctx, repo, opts, cfg.Policy.Pack.Scope)
	if err != nil {
		return nil, nil, err
	}
	qp, data, err := pack.Query(ctx, snap, pack.Options{Policy: cfg.Policy, Scanner: scanner, Sensitive: audit.SensitiveFile, ToolVersion: Version},
		pack.QueryOptions{Text: text, MaxChars: maxChars})
	if err != nil {
		return nil, nil, err
	}
	docs := [][2]string{{"(query)", qp.Query}}
	for _, it := range qp.Items {
		docs = append(docs, [2]string{it.File, it.Content})
	}
	for i, d := range docs {
		scan := scanner.Scan
		if i == 0 {
			scan = scanner.ScanText // the query is no file: no allow comment in it counts
		}
		findings, err := scan(ctx, d[0], []byte(d[1]))
		if err != nil {
			return nil, nil, fmt.Errorf("secret scan of the query pack: %w", err)
		}
		if len(findings) > 0 {
			return nil, nil, fmt.Errorf("the query pack still holds a secret in %s after redaction (rule %s): nothing written", d[0], findings[0].RuleID)
		}
	}
	_ = scanner.Flush()
	return qp, data, nil
}

// gcPaused counts the runs in pauseGC's window; old and oldLimit are the
// GC percent and memory limit to restore when it ends, on whether it has
// not ended yet, and gen numbers the windows. After the window, watching
// says the collections are watched for a large live heap (watchHeap), and
// lowered that the percent was lowered for it.
var gcPaused struct {
	sync.Mutex
	n, old            int
	oldLimit          int64
	on                bool
	watching, lowered bool
	gen               int
}

// largeLiveHeap and largeHeapGCPercent: a run whose live heap reaches
// largeLiveHeap collects at largeHeapGCPercent instead of the runtime's
// default (unless GOGC says otherwise), for the rest of the run. A large
// pack's whole document is live at its end (the audit decodes its bytes
// beside them), and at 100 the heap grows to twice that before a
// collection: on 10,000 generated files (live heap ~75 MB at its end)
// peak RSS ~200 MB, on 100,000 files 1.6 GB, whose page faults cost
// more than the collections saved (sys 9.5 of 23.7 s of CPU). Set for
// every run, 50 cost 5–10% of the wall time of trees whose live heap
// stays under ~55 MB (1,000 files, gin, hugo, prometheus): the
// threshold leaves most of them at 100. 35 rather than 50 since the audit
// holds less (10,000 files, ~60 MB live at its end): peak RSS 165 -> 156
// MB for ~4% more wall time; 100,000 files 1.06–1.23 -> 1.00–1.10 GB, no
// slower. 48 MB rather than 64: 10,000 files' live heap was 63 MB at the
// collection before the audit, just under 64, and at 100 the heap grew to
// 124 MB while the audit decoded the pack beside the builder's garbage
// (peak RSS 150–168 MB, median 159; at 48: 145–150, median 148, the same
// CPU time, 5 alternating runs); prometheus' full tree, whose live heap
// reaches ~51 MB only in its audit, 139 -> 133 MB for ~2% more CPU time
// (1.255 -> 1.28 s, medians of 8 alternating runs); hugo (35 MB) and the
// smaller trees never reach it.
const (
	largeLiveHeap      = 48 << 20
	largeHeapGCPercent = 35
)

// treeHeapLimit and changeHeapLimit bound the heap while the collector is
// paused (pauseGC): the first collection the limit forces ends the pause.
// A commit's or a range's pack allocates ~10–25 MB in all and stays under
// 64 MB (gin's 1-file range reached 32 MB's and collected once at its end:
// 45.0 → 43.4 ms of CPU, flask 41.8 → 39.7, 21 alternating runs, peak RSS
// the same); a large change reaches it and goes on at its own GC percent.
// A tree's pack (a work tree, a directory) is as large as the tree and
// reaches 32 MB early: at 64 MB its peak RSS was 14–22 MB higher on gin,
// flask and 1,000 generated files, where the full-tree RSS target is a
// third of repomix's.
const (
	treeHeapLimit   = 32 << 20
	changeHeapLimit = 64 << 20
)

// heapLimitFor is the paused heap limit of a run packing what opts name.
func heapLimitFor(opts PackOptions) int64 {
	if readsCommits(opts) {
		return changeHeapLimit
	}
	return treeHeapLimit
}

// readsCommits reports whether a pack of what opts name is a commit's or a
// range's, read from the object store (else a tree's).
func readsCommits(opts PackOptions) bool {
	return opts.Commit != "" || opts.Base != ""
}

// pauseGC turns the garbage collector off until resume is called (once is
// enough; more calls do nothing) or the heap reaches limit, whichever
// comes first: what a small run allocates is either kept for the whole
// run or garbage at once, and collecting meanwhile only marks it again and
// again. Runs may overlap (ctxpack serve): the collector comes back when
// the last of them resumes. From the end of the window to the resume, the
// collections are watched for a large live heap (watchHeap).
func pauseGC(limit int64) (resume func()) {
	gcPaused.Lock()
	if gcPaused.n == 0 {
		gcPaused.old = debug.SetGCPercent(-1)
		gcPaused.oldLimit = debug.SetMemoryLimit(-1) // -1 only reads it
		debug.SetMemoryLimit(min(gcPaused.oldLimit, limit))
		gcPaused.on = true
		gcPaused.gen++
		// With the percent off, only the limit starts a collection; the
		// first one finds the sentinel unreachable and ends the window.
		gen := gcPaused.gen
		runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { go restoreGC(gen) })
	}
	gcPaused.n++
	gcPaused.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			gcPaused.Lock()
			gcPaused.n--
			if gcPaused.n == 0 {
				restoreGCLocked()
			}
			gcPaused.Unlock()
		})
	}
}

// gcSentinel is allocated unreachable at each pause: its finalizer runs
// after the first collection that follows (it holds a pointer, so the
// allocator does not batch it with other small objects).
type gcSentinel struct{ _ *int }

// restoreGC ends pause window gen, if it is still the one in force, and
// watches the collections that follow until the runs resume.
func restoreGC(gen int) {
	gcPaused.Lock()
	defer gcPaused.Unlock()
	if gcPaused.gen != gen || !gcPaused.on {
		return
	}
	restoreGCLocked()
	if os.Getenv("GOGC") == "" && gcPaused.old > largeHeapGCPercent {
		gcPaused.watching = true
		watchNext(gen)
	}
}

// watchNext calls watchHeap after the next collection.
func watchNext(gen int) {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { go watchHeap(gen) })
}

// watchHeap lowers the GC percent to largeHeapGCPercent when the live
// heap has reached largeLiveHeap, else watches the next collection; only
// while window gen's runs have not resumed.
func watchHeap(gen int) {
	gcPaused.Lock()
	defer gcPaused.Unlock()
	if gcPaused.gen != gen || !gcPaused.watching {
		return
	}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	if live[0].Value.Kind() == metrics.KindUint64 && live[0].Value.Uint64() >= largeLiveHeap {
		debug.SetGCPercent(largeHeapGCPercent)
		gcPaused.watching, gcPaused.lowered = false, true
		return
	}
	watchNext(gen)
}

// restoreGCLocked puts back the GC percent and memory limit the runs found,
// ending the pause window and the watch.
func restoreGCLocked() {
	if gcPaused.on {
		debug.SetGCPercent(gcPaused.old)
		debug.SetMemoryLimit(gcPaused.oldLimit)
		gcPaused.on = false
	}
	if gcPaused.lowered {
		debug.SetGCPercent(gcPaused.old)
		gcPaused.lowered = false
	}
	gcPaused.watching = false
}
