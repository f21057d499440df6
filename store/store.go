// Package store keeps context packs and the documents agents write about
// them (seed 001's tool contract): entries by id (pk_ + 8 of [a-z2-7]) and
// by name (<repo>@<ref>, pr-123), with revisions, draft and finalized
// status, a TTL and freshness, deterministic name resolution and a
// fail-closed finalize checklist. It lives on disk (the repository's
// .git/ctxpack/store by default), every file written atomically, every
// operation under a lock file so that two processes can share it.
package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/ctxpack/ctxpack/internal/fsutil"
	"github.com/ctxpack/ctxpack/internal/lazyre"
	"github.com/ctxpack/ctxpack/pack"
)

// Version is the version of the entry files' shape.
const Version = 1

// Statuses of an entry.
const (
	StatusDraft     = "draft"
	StatusFinalized = "finalized"
)

// Files of the store directory.
const (
	lockFile   = ".lock"
	packsDir   = "packs"
	entryFile  = "entry.json"
	packFile   = "pack.json"
	recordFile = "record.json"
	// maxHistory is how many revisions' section digests an entry keeps
	// for revision_conflict's changed_section_keys.
	maxHistory = 100
)

// The store's patterns are compiled on first use, not in every process
// (their counted repetitions made the store's package init ~0.8 ms of any
// command's start).
var (
	idRE   = regexps.MustCompile(`^pk_[a-z2-7]{8}$`)
	nameRE = regexps.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@/+-]{0,199}$`)
	idEnc  = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
)

// regexps are the store's patterns (lazyre).
var regexps lazyre.Set

// ValidID reports whether id has the pack id format pk_[a-z2-7]{8}.
func ValidID(id string) bool { return idRE().MatchString(id) }

// Options configure a Store.
type Options struct {
	// Dir is the store directory; it is created when absent.
	Dir string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// TTL is a new entry's time to live (DefaultTTL when 0).
	TTL time.Duration
	// ExpiringSoon is how long before expiry an entry is expiring_soon
	// (DefaultExpiringSoon when 0).
	ExpiringSoon time.Duration
	// ExpiredGrace is how long an expired entry stays readable with
	// freshness=expired (DefaultExpiredGrace when 0; negative: none).
	ExpiredGrace time.Duration
	// Scanner secret-scans everything written. Required: without it every
	// write fails.
	Scanner pack.SecretScanner
	// Files reads the repository packs describe, to resolve refs; nil
	// resolves refs against the packs alone.
	Files Files
	// Rand draws new ids (crypto/rand when nil).
	Rand io.Reader
}

// Store is an opened store. It is safe for concurrent use, also by several
// processes.
type Store struct {
	dir          string
	now          func() time.Time
	ttl          time.Duration
	expiringSoon time.Duration
	grace        time.Duration
	scanner      pack.SecretScanner
	files        Files
	rand         io.Reader

	mu    sync.Mutex
	packs map[string]*pack.Pack // parsed packs by sha256 of their bytes
}

// Open opens (creating when needed) the store in opts.Dir.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("open store: no directory given")
	}
	s := &Store{dir: opts.Dir, now: opts.Now, ttl: opts.TTL, expiringSoon: opts.ExpiringSoon, grace: opts.ExpiredGrace,
		scanner: opts.Scanner, files: opts.Files, rand: opts.Rand, packs: map[string]*pack.Pack{}}
	if s.now == nil {
		s.now = time.Now
	}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.ttl < 0 || s.ttl > MaxTTL {
		return nil, fmt.Errorf("open store: ttl %s is out of 1m..%s", s.ttl, MaxTTL)
	}
	if s.expiringSoon == 0 {
		s.expiringSoon = DefaultExpiringSoon
	}
	switch {
	case s.grace == 0:
		s.grace = DefaultExpiredGrace
	case s.grace < 0:
		s.grace = 0
	}
	if s.rand == nil {
		s.rand = rand.Reader
	}
	// The directory is the operator's (--store-dir) or made without
	// following a link (source.Repo.MakeStateDir); what is in it is the
	// store's, where a link is not followed: the default store is in the
	// repository's git directory, which a repository from elsewhere fills.
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if _, err := fsutil.MkdirNoFollow(s.dir, 0o755, packsDir); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return s, nil
}

// Dir is the store directory.
func (s *Store) Dir() string { return s.dir }

// Entry is what the store keeps of one entry (entry.json).
type Entry struct {
	StoreVersion int       `json:"store_version"`
	ID           string    `json:"id"`
	Name         string    `json:"name,omitempty"`
	Revision     int       `json:"revision"`
	Status       string    `json:"status"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	ExpiresAt    time.Time `json:"expires_at"`
	// Pack describes the stored pack; nil for a document-only entry.
	Pack     *PackInfo  `json:"pack,omitempty"`
	Document Document   `json:"document"`
	History  []Revision `json:"history"`
}

// PackInfo describes an entry's stored pack.
type PackInfo struct {
	PackID     string `json:"pack_id"`
	Repository string `json:"repository"`
	Trigger    string `json:"trigger"`
	Head       string `json:"head,omitempty"`
	Base       string `json:"base,omitempty"`
	Ref        string `json:"ref,omitempty"`
	Dirty      bool   `json:"dirty,omitempty"`
	SHA256     string `json:"sha256"`
	// Verdict is the audit verdict of the stored record.
	Verdict string `json:"verdict"`
}

// Revision is what an entry keeps of one of its revisions.
type Revision struct {
	Revision  int               `json:"revision"`
	UpdatedAt time.Time         `json:"updated_at"`
	Status    string            `json:"status"`
	Sections  map[string]string `json:"sections"`
}

// lockFlags open the lock file as flock opens it, but not through a link
// (nor making the file a link names).
var lockFlags = func() int {
	switch runtime.GOOS {
	case "aix", "solaris", "illumos": // no exclusive lock of a file opened read-only
		return os.O_CREATE | os.O_RDWR | fsutil.NoFollow
	}
	return os.O_CREATE | os.O_RDONLY | fsutil.NoFollow
}()

// lock takes the store's lock file, shared or exclusive, for fn.
func (s *Store) lock(ctx context.Context, exclusive bool, fn func() error) error {
	path := filepath.Join(s.dir, lockFile)
	l := flock.New(path, flock.SetFlag(lockFlags))
	var ok bool
	var err error
	if exclusive {
		ok, err = l.TryLockContext(ctx, 10*time.Millisecond)
	} else {
		ok, err = l.TryRLockContext(ctx, 10*time.Millisecond)
	}
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("lock the store %s: %s is a symbolic link: the store follows no link in it (remove it)", s.dir, path)
		}
		return fmt.Errorf("lock the store %s: %w", s.dir, err)
	}
	if !ok {
		return fmt.Errorf("lock the store %s: not acquired", s.dir)
	}
	defer l.Unlock()
	return fn()
}

func (s *Store) entryDir(id string) string { return filepath.Join(s.dir, packsDir, id) }

// load reads one entry; a missing entry is (nil, nil). An entry's
// directory that is a link is refused: what is saved to an entry goes
// into its directory.
func (s *Store) load(id string) (*Entry, error) {
	if fi, err := os.Lstat(s.entryDir(id)); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("entry %s: %s is not a directory: the store follows no link in it (remove it)", id, s.entryDir(id))
	}
	data, err := fsutil.ReadNoFollow(filepath.Join(s.entryDir(id), entryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read entry %s: %w", id, err)
	}
	var e Entry
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("entry %s: %s is damaged: %w", id, filepath.Join(s.entryDir(id), entryFile), err)
	}
	if e.StoreVersion != Version || e.ID != id {
		return nil, fmt.Errorf("entry %s: %s has store_version %d and id %q; this ctxpack reads version %d", id, filepath.Join(s.entryDir(id), entryFile), e.StoreVersion, e.ID, Version)
	}
	return &e, nil
}

// all reads every entry, sorted by id.
func (s *Store) all() ([]*Entry, error) {
	des, err := os.ReadDir(filepath.Join(s.dir, packsDir))
	if err != nil {
		return nil, fmt.Errorf("list the store: %w", err)
	}
	var out []*Entry
	for _, de := range des {
		if !de.IsDir() || !ValidID(de.Name()) {
			continue // temporary and trashed directories
		}
		e, err := s.load(de.Name())
		if err != nil {
			return nil, err
		}
		if e != nil {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// save writes an entry's entry.json atomically.
func (s *Store) save(e *Entry) error {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("encode entry %s: %w", e.ID, err)
	}
	return fsutil.WriteFile(filepath.Join(s.entryDir(e.ID), entryFile), append(data, '\n'), 0o644)
}

// remove deletes an entry's directory: it is renamed away first, so no
// reader sees half of it.
func (s *Store) remove(id string) error {
	trash, err := os.MkdirTemp(filepath.Join(s.dir, packsDir), ".trash-")
	if err != nil {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	if err := os.Rename(s.entryDir(id), filepath.Join(trash, id)); err != nil {
		os.Remove(trash)
		return fmt.Errorf("delete %s: %w", id, err)
	}
	return os.RemoveAll(trash)
}

// purge deletes the entries past their expired grace (under the exclusive lock).
func (s *Store) purge(now time.Time) error {
	all, err := s.all()
	if err != nil {
		return err
	}
	for _, e := range all {
		if _, _, gone := s.freshness(e, now); gone {
			if err := s.remove(e.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// newID draws an id no entry has.
func (s *Store) newID() (string, error) {
	for range 16 {
		var b [5]byte
		if _, err := io.ReadFull(s.rand, b[:]); err != nil {
			return "", fmt.Errorf("draw a pack id: %w", err)
		}
		id := "pk_" + idEnc.EncodeToString(b[:])
		if _, err := os.Lstat(s.entryDir(id)); errors.Is(err, fs.ErrNotExist) {
			return id, nil
		}
	}
	return "", errors.New("draw a pack id: every id drawn is taken")
}

// readPack returns an entry's parsed pack (nil for a document-only entry)
// and its record bytes (nil when none).
func (s *Store) readPack(e *Entry) (*pack.Pack, []byte, error) {
	if e.Pack == nil {
		return nil, nil, nil
	}
	data, err := s.packBytes(e)
	if err != nil {
		return nil, nil, err
	}
	sum := e.Pack.SHA256
	rec, err := fsutil.ReadNoFollow(filepath.Join(s.entryDir(e.ID), recordFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read the record of %s: %w", e.ID, err)
	}
	s.mu.Lock()
	p := s.packs[sum]
	s.mu.Unlock()
	if p == nil {
		p = new(pack.Pack)
		if err := json.Unmarshal(data, p); err != nil {
			return nil, nil, fmt.Errorf("the pack of %s is damaged: %w", e.ID, err)
		}
		s.mu.Lock()
		if len(s.packs) >= 16 {
			clear(s.packs)
		}
		s.packs[sum] = p
		s.mu.Unlock()
	}
	return p, rec, nil
}

// packBytes reads the pack of entry e, which holds one, and checks it
// against the entry's digest. A link in its place is not followed: the
// store serves what it stored, never a file a link planted there names.
func (s *Store) packBytes(e *Entry) ([]byte, error) {
	data, err := fsutil.ReadNoFollow(filepath.Join(s.entryDir(e.ID), packFile))
	if err != nil {
		return nil, fmt.Errorf("read the pack of %s: %w", e.ID, err)
	}
	if sum := sha256Hex(data); sum != e.Pack.SHA256 {
		return nil, fmt.Errorf("the pack of %s is damaged: its sha256 is %s, the entry says %s", e.ID, sum, e.Pack.SHA256)
	}
	return data, nil
}

// PackBytes returns the stored pack of an entry exactly as stored.
func (s *Store) PackBytes(ctx context.Context, t Target) ([]byte, *View, error) {
	var data []byte
	var view *View
	err := s.lock(ctx, false, func() error {
		now := s.now()
		e, sel, err := s.resolve(t, now)
		if err != nil {
			return err
		}
		if e.Pack == nil {
			return notFound(map[string]any{"id": e.ID, "reason": "no_pack"}, "%s holds a document only, no pack", e.ID)
		}
		if data, err = s.packBytes(e); err != nil {
			return err
		}
		view = s.view(e, now, false)
		view.Selection = &sel
		return nil
	})
	return data, view, err
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// checkName validates an entry name.
func checkName(field, name string) error {
	if !nameRE().MatchString(name) {
		return invalid(map[string]any{"requested_field": field, "allowed_pattern": nameRE().String()},
			"%s must be 1 to 200 of A-Z a-z 0-9 . _ @ / + - starting with a letter or digit (for example ctxpack@main or pr-123)", field)
	}
	return nil
}

// DefaultName names a pack: pr-<n> for a pull request ref
// (refs/pull/<n>/...), else <repository>@<ref> with the ref shortened
// (refs/heads/ and refs/tags/ dropped), or the head commit's first 12
// characters when the ref is HEAD, a commit id or absent.
func DefaultName(p *pack.Pack) string {
	ref := p.Source.Ref
	if m := prRefRE().FindStringSubmatch(ref); m != nil {
		return "pr-" + m[1]
	}
	for _, prefix := range []string{"refs/heads/", "refs/tags/", "refs/remotes/"} {
		ref = strings.TrimPrefix(ref, prefix)
	}
	if ref == "" || ref == "HEAD" || hexRE().MatchString(ref) || strings.HasPrefix(ref, "HEAD~") || strings.HasPrefix(ref, "HEAD^") {
		ref = short(p.Source.Head)
	}
	if ref == "" {
		ref = p.Source.Trigger
	}
	repo := p.Source.Repository
	if repo == "" {
		repo = "repo"
	}
	name := nameSanitize().ReplaceAllString(repo+"@"+ref, "-")
	name = strings.TrimLeft(name, "._@/+-")
	if len(name) > 200 {
		name = name[:200]
	}
	if name == "" {
		name = "pack"
	}
	return name
}

var (
	prRefRE      = regexps.MustCompile(`^refs/pull/([0-9]+)/`)
	hexRE        = regexps.MustCompile(`^[0-9a-f]{7,64}$`)
	nameSanitize = regexps.MustCompile(`[^A-Za-z0-9._@/+-]`)
)
