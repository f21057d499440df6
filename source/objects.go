package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// ObjectID is a git object id in lowercase hex: 40 digits in a SHA-1
// repository, 64 in a SHA-256 one. The zero value is no object.
type ObjectID string

func (id ObjectID) String() string { return string(id) }

// IsZero reports whether id names no object.
func (id ObjectID) IsZero() bool { return id == "" }

// Short is the 12-digit abbreviation used in messages.
func (id ObjectID) Short() string {
	if len(id) > 12 {
		return string(id[:12])
	}
	return string(id)
}

// ParseID checks that s is a full object id (40 or 64 hex digits) and
// returns it lowercased.
func ParseID(s string) (ObjectID, error) {
	if len(s) != 40 && len(s) != 64 {
		return "", fmt.Errorf("object id %q: want 40 (SHA-1) or 64 (SHA-256) hex digits", s)
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return "", fmt.Errorf("object id %q: not hexadecimal", s)
		}
	}
	return ObjectID(strings.ToLower(s)), nil
}

// Commit is what the snapshots need of a commit object.
type Commit struct {
	ID      ObjectID
	Tree    ObjectID
	Parents []ObjectID
	// Committer is the committer time.
	Committer time.Time
	// Message is the commit message as git stores it.
	Message string
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	Name string
	Mode filemode.FileMode
	ID   ObjectID
}

// indexEntry is one entry of the index, with what the backend knows of
// the work tree's copy.
type indexEntry struct {
	Path  string
	Mode  filemode.FileMode
	ID    ObjectID
	Stage int
	// SkipWorktree is set for a file outside a sparse checkout: git does
	// not keep it in the work tree.
	SkipWorktree bool
	// Clean is set when the backend knows the work tree's file has the
	// index's content and mode (git status, or matching stat data), so it
	// need not be read and hashed.
	Clean bool
	// Info is the work tree's file as the backend found it (os.Lstat,
	// for the comparison with the index's stat data), nil when it did
	// not look or found none: the snapshot's entry takes its size and
	// mode from it instead of asking again.
	Info fs.FileInfo
}

// ref is a reference that names an object directly.
type ref struct {
	Name string
	ID   ObjectID
}

// Object kinds Peel reports.
const (
	KindCommit  = "commit"
	KindTree    = "tree"
	KindBlob    = "blob"
	KindTag     = "tag"
	KindMissing = "missing"
)

// backend reads one repository's objects, refs and index. There are two:
// go-git in process (gogitBackend) and the git CLI (cliBackend), chosen per
// repository by Open; every snapshot is built from these calls, so the
// two give the same snapshot of the same repository. Methods are safe for
// concurrent use.
type backend interface {
	// name is "go-git" or "git".
	name() string
	// objectFormat is "sha1" or "sha256".
	objectFormat() string
	// resolve turns a revision into the commit it names (tags peeled).
	// Errors: errUnknownRevision, errNotCommit, ErrNoCommits.
	resolve(ctx context.Context, rev string) (ObjectID, error)
	// commit, tree, blob and size read one object. A missing object is
	// errMissing, or a *NotFetchedError in a partial clone whose promisor
	// could not provide it. blob's bytes are the caller's: made for the
	// call, held and changed by nothing else (Repo.blob keeps them as its
	// string).
	commit(ctx context.Context, id ObjectID) (*Commit, error)
	tree(ctx context.Context, id ObjectID) ([]treeEntry, error)
	blob(ctx context.Context, id ObjectID) ([]byte, error)
	size(ctx context.Context, id ObjectID) (int64, error)
	// has reports whether the object store holds id, without fetching it
	// (errPresenceUnknown when it cannot tell).
	has(ctx context.Context, id ObjectID) (bool, error)
	// kind says what id is (KindCommit, …, KindMissing); for a tag, target
	// is the object it names.
	kind(ctx context.Context, id ObjectID) (kind string, target ObjectID, err error)
	// head is HEAD: the branch it is on ("" when detached) and its commit
	// ("" on an unborn branch).
	head(ctx context.Context) (branch string, id ObjectID, err error)
	// refs lists the references under prefix that name an object directly.
	refs(ctx context.Context, prefix string) ([]ref, error)
	// mergeBases is `git merge-base --all a b`.
	mergeBases(ctx context.Context, a, b ObjectID) ([]ObjectID, error)
	// revList is `git rev-list head --not exclude…`, in no particular
	// order; exclude must name commits present in the repository.
	revList(ctx context.Context, head ObjectID, exclude []ObjectID) ([]ObjectID, error)
	// worktree lists the index, and the untracked files: those git neither
	// tracks nor ignores (a nested repository as "dir/").
	worktree(ctx context.Context) (index []indexEntry, untracked []string, err error)
	// hashBlob is the object id of a blob with this content.
	hashBlob(data []byte) ObjectID
	close() error
}

// blobBatcher is a backend that reads many blobs in one exchange (the git
// CLI's cat-file): blobs reads the blobs asked for on asks, as they come,
// until asks is closed, and calls each, in the order asked, with an ask's
// key and its blob's bytes, or the error blob would give for it; an error
// of each ends the exchange and is returned (the asks still sent are
// taken and left unread). each runs while the exchange holds the process:
// it must not read objects, nor wait for what is sent on asks.
type blobBatcher interface {
	blobs(ctx context.Context, asks <-chan blobAsk, each func(key int, data []byte, err error) error) error
}

// blobAsk asks a blobBatcher for blob id, under a key of the caller's.
type blobAsk struct {
	key int
	id  ObjectID
}

var (
	errUnknownRevision = errors.New("unknown revision")
	errNotCommit       = errors.New("not a commit")
	errMissing         = errors.New("object not in the repository")
	// errDamaged is an object the object store holds but cannot read (a
	// corrupt loose object or pack).
	errDamaged = errors.New("object is damaged")
)

// damagedHelp says what to do about an object the store cannot read.
const damagedHelp = "list the damaged objects with git fsck, then restore them from another clone or clone the repository again"

// NotFetchedError is a blob missing from a partial clone (git clone
// --filter) that its promisor remote could not provide.
type NotFetchedError struct {
	ID ObjectID
	// Remote names the promisor remote, and Detail is what git said.
	Remote, Detail string
}

func (e *NotFetchedError) Error() string {
	msg := fmt.Sprintf("object %s is not in this partial clone and could not be fetched from its promisor remote", e.ID)
	if e.Remote != "" {
		msg += " " + e.Remote
	}
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}
