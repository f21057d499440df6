package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
)

// privateCache gives the test a user cache directory of its own (the scan
// cache's key, audit.UserCacheKey).
func privateCache(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("LocalAppData", filepath.Join(home, "cache"))
}

// forgeScanCache rewrites every scan cache entry of the repository at dir
// that holds findings to hold none, as a repository brought from elsewhere
// (a tarball, a restored CI cache) could: the value emptied, its sha256
// beside it. It returns how many it forged.
func forgeScanCache(t *testing.T, dir string) int {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, ".git", "ctxpack", "scan-cache", "*.seg"))
	forged := 0
	for _, seg := range segs {
		data, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		for line := range bytes.Lines(data) {
			var e map[string]any
			if err := json.Unmarshal(line, &e); err != nil {
				t.Fatal(err)
			}
			if v, ok := e["value"].([]any); ok && len(v) > 0 {
				if f, ok := v[0].(map[string]any); ok && f["rule"] != nil {
					e["value"], e["sum"] = []any{}, fmt.Sprintf("%x", sha256.Sum256([]byte("[]")))
					forged++
				}
			}
			line, _ := json.Marshal(e)
			out.Write(append(line, '\n'))
		}
		if err := os.WriteFile(seg, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return forged
}

// A scan cache the repository brings is not trusted: entries forged to
// hide a secret are misses, so the pack still fails and keeps the token
// out, and so does the audit of a pack holding it with --repo (which scans
// with the same cache).
func TestForgedScanCacheIsNotTrusted(t *testing.T) {
	privateCache(t)
	token := fakeGitHubToken(5)
	g := gittest.New(t)
	g.Write("README.md", "# demo\n")
	base := g.Commit("base")
	content := "package cfg\n\nvar tok = \"" + token + "\"\n"
	g.Write("cfg.go", content)
	g.Commit("token")
	opts := PackOptions{Dir: g.Dir, Base: base, Head: "HEAD"}
	first, err := Execute(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if first.Verdict.Status != audit.StatusFail {
		t.Fatalf("first run: %+v", first.Verdict)
	}
	if n := forgeScanCache(t, g.Dir); n == 0 {
		t.Fatal("no cache entry with findings to forge")
	}
	run, err := Execute(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict.Status != audit.StatusFail || !strings.Contains(codes(run.Verdict.Failed), audit.CodeSecretInHistory) {
		t.Fatalf("with a forged cache: verdict %s, failed %s", run.Verdict.Status, codes(run.Verdict.Failed))
	}
	assertNoFragment(t, "pack", run.Result.JSON, []string{token})

	// The pack with the file's text as it is, as a forged cache let it be
	// built.
	var p pack.Pack
	if err := json.Unmarshal(first.Result.JSON, &p); err != nil {
		t.Fatal(err)
	}
	for i := range p.Contents {
		if it := &p.Contents[i]; it.Path == "cfg.go" {
			it.Content, it.SHA256 = content, sha(content)
		}
	}
	forgeScanCache(t, g.Dir) // what the second run wrote, when it scanned
	v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, refinalize(t, &p)), RepoDir: g.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(codes(v.Failed), audit.CodeSecretUnredacted) {
		t.Fatalf("audit with a forged cache: failed %s, want %s: %+v", codes(v.Failed), audit.CodeSecretUnredacted, v.Failed)
	}
}

// A link planted where the scan cache's directory should be is not
// followed: the run goes without the cache, says why, and writes nothing
// where the link points.
func TestLinkedStateDirIsNotFollowed(t *testing.T) {
	privateCache(t)
	var warned bytes.Buffer
	cacheWarnings = &warned
	t.Cleanup(func() { cacheWarnings = os.Stderr })
	for _, link := range []string{"ctxpack", "ctxpack/scan-cache"} {
		t.Run(link, func(t *testing.T) {
			warned.Reset()
			g := repoWithChange(t)
			outside := t.TempDir()
			if err := os.MkdirAll(filepath.Dir(filepath.Join(g.Dir, ".git", link)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(g.Dir, ".git", filepath.FromSlash(link))); err != nil {
				t.Skip(err)
			}
			run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Commit: "HEAD"})
			if err != nil {
				t.Fatal(err)
			}
			if run.Verdict.Status != audit.StatusPass {
				t.Fatalf("verdict %+v", run.Verdict.Failed)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Fatalf("wrote %s where .git/%s points", entries[0].Name(), link)
			}
			if w := warned.String(); !strings.Contains(w, "scan cache is not used") || !strings.Contains(w, "symbolic link") {
				t.Fatalf("warning %q", w)
			}
		})
	}
}
