package transparency

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/source"
)

// chainReaders are the readers of the chain of records of the repository
// at dir: go-git directly, and source.Repo with each of its backends.
func chainReaders(t testing.TB, dir string) map[string]Objects {
	t.Helper()
	out := map[string]Objects{"go-git": GoGit(openGit(t, dir))}
	for _, backend := range []string{source.BackendGoGit, source.BackendCLI} {
		repo, err := source.OpenWith(dir, source.OpenOptions{Backend: backend})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { repo.Close() })
		out["source "+backend] = repo
	}
	return out
}

// sameChain checks that every reader of the repository at dir gives the
// log and the chain report want of from.
func sameChain(t *testing.T, dir string, from string, want *ChainReport) {
	t.Helper()
	ctx := context.Background()
	var wantLog []LogEntry
	for name, objs := range chainReaders(t, dir) {
		rep, err := VerifyChainWith(ctx, objs, source.ObjectID(from))
		if err != nil {
			t.Fatalf("%s: verify: %v", name, err)
		}
		if !reflect.DeepEqual(rep, want) {
			t.Errorf("%s: verify gives\n%+v\nwant\n%+v", name, rep, want)
		}
		log, err := LogWith(ctx, objs, source.ObjectID(from), 0)
		if err != nil {
			t.Fatalf("%s: log: %v", name, err)
		}
		if wantLog == nil {
			wantLog = log
		} else if !reflect.DeepEqual(log, wantLog) {
			t.Errorf("%s: log gives\n%+v\nwant\n%+v", name, log, wantLog)
		}
	}
}

// A damaged note is an error that says what to do, through every backend.
func TestChainWithDamagedNote(t *testing.T) {
	c := newChain(t, 2)
	blob := c.r.Git("notes", "--ref=ctxpack", "list", c.commits[1])
	f := filepath.Join(c.r.Dir, ".git", "objects", blob[:2], blob[2:])
	if err := os.Chmod(f, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte("not zlib"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{source.BackendGoGit, source.BackendCLI} {
		repo, err := source.OpenWith(c.r.Dir, source.OpenOptions{Backend: backend})
		if err != nil {
			t.Fatal(err)
		}
		defer repo.Close()
		_, err = VerifyChainWith(context.Background(), repo, source.ObjectID(c.commits[1]))
		if err == nil || !strings.Contains(err.Error(), blob) || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "git fsck") {
			t.Errorf("%s: verify over a damaged note: %v", backend, err)
		}
	}
}
