package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxpack/ctxpack/pack"
)

// testCacheKey is the tests' scan cache key (UserCacheKey's in a run).
var testCacheKey = []byte("ctxpack scan cache key for tests")

func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, segmentExt) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func cachedFixture() (string, []byte) {
	f := secrettest.Make(41)
	return "svc/config.yaml", []byte("db:\n  password: " + f.DBPassword + "\nstripe: " + f.Stripe + "\n" + f.RSAKey + "\n")
}

func TestCacheHitAvoidsRescan(t *testing.T) {
	dir := t.TempDir()
	path, content := cachedFixture()
	ctx := context.Background()

	s1, err := NewScanner(ScannerOptions{CacheDir: dir, CacheKey: testCacheKey})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s1.Scan(ctx, path, content)
	if err != nil || len(first) != 3 {
		t.Fatalf("first scan: %v:%s", err, describe(string(content), first))
	}
	if n := s1.scans.Load(); n != 1 {
		t.Fatalf("scans %d", n)
	}
	if files := cacheFiles(t, dir); len(files) != 0 {
		t.Fatalf("entries reached the disk before Flush: %v", files)
	}
	if err := s1.Flush(); err != nil {
		t.Fatal(err)
	}
	if files := cacheFiles(t, dir); len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}

	// A new scanner (a new process) with the same cache: no scan at all.
	s2, err := NewScanner(ScannerOptions{CacheDir: dir, CacheKey: testCacheKey})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		again, err := s2.Scan(ctx, path, content)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("cached findings differ:\n%+v\n%+v", first, again)
		}
	}
	if n := s2.scans.Load(); n != 0 {
		t.Errorf("cache hit still scanned %d times", n)
	}
	if st := s2.cache.Stats(); st.Hits != 3 || st.Misses != 0 {
		t.Errorf("stats %+v", st)
	}

	// Another path with the same bytes is another key (path allowlists and
	// fingerprints depend on it); a changed byte is another key.
	if _, err := s2.Scan(ctx, "other/config.yaml", content); err != nil {
		t.Fatal(err)
	}
	changed := append([]byte(nil), content...)
	changed[0] = 'D'
	if _, err := s2.Scan(ctx, path, changed); err != nil {
		t.Fatal(err)
	}
	if n := s2.scans.Load(); n != 2 {
		t.Errorf("scans %d, want 2", n)
	}

	// .gitleaksignore is applied after the cache: adding an entry takes
	// effect on a cache hit.
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".gitleaksignore"), fmt.Sprintf("%s:%s:%d\n", path, first[0].RuleID, first[0].StartLine))
	s3, err := NewScanner(ScannerOptions{RepoRoot: root, CacheDir: dir, CacheKey: testCacheKey})
	if err != nil {
		t.Fatal(err)
	}
	ign, _ := s3.Scan(ctx, path, content)
	if s3.scans.Load() != 0 || !reflect.DeepEqual(ign, first[1:]) {
		t.Errorf("ignore on cache hit: scans %d, got %+v", s3.scans.Load(), ign)
	}

	// Other rules, other key.
	writeFile(t, filepath.Join(root, ".gitleaks.toml"), "[extend]\nuseDefault = true\n[[rules]]\nid = \"x\"\nregex = '''xyzzy[0-9]{8}'''\n")
	s4, err := NewScanner(ScannerOptions{RepoRoot: root, CacheDir: dir, CacheKey: testCacheKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s4.Scan(ctx, path, content); err != nil || s4.scans.Load() != 1 {
		t.Errorf("rules change must miss: scans %d err %v", s4.scans.Load(), err)
	}
}

func TestCacheCommitFragments(t *testing.T) {
	dir := t.TempDir()
	f := secrettest.Make(43)
	lines := []pack.Line{{Number: 5, Text: "token = '" + f.GitHub + "'"}, {Number: 9, Text: "password = '" + f.DBPassword + "'"}}
	s1, _ := NewScanner(ScannerOptions{CacheDir: dir, CacheKey: testCacheKey})
	a, err := s1.ScanCommit(context.Background(), "aaaa1111", "x.py", lines)
	if err != nil || len(a) != 2 {
		t.Fatalf("%v %+v", err, a)
	}
	s1.Flush()
	s2, _ := NewScanner(ScannerOptions{CacheDir: dir, CacheKey: testCacheKey})
	b, _ := s2.ScanCommit(context.Background(), "aaaa1111", "x.py", lines)
	if !reflect.DeepEqual(a, b) || s2.scans.Load() != 0 {
		t.Errorf("commit cache: scans %d\n%+v\n%+v", s2.scans.Load(), a, b)
	}
}

func TestCacheCorruptEntryRescans(t *testing.T) {
	path, content := cachedFixture()
	ctx := context.Background()
	corruptions := []struct {
		name   string
		mutate func(t *testing.T, file string, b []byte) []byte
	}{
		{"garbage", func(t *testing.T, _ string, _ []byte) []byte { return []byte("\x00\x01not json") }},
		{"truncated", func(t *testing.T, _ string, b []byte) []byte { return b[:len(b)/2] }},
		{"empty", func(t *testing.T, _ string, _ []byte) []byte { return nil }},
		{"wrong key", func(t *testing.T, _ string, b []byte) []byte {
			other := sha256.Sum256([]byte("other"))
			return []byte(strings.Replace(string(b), `"key":"`, `"key":"`+hex.EncodeToString(other[:])+`","x":"`, 1))
		}},
		{"wrong format", func(t *testing.T, _ string, b []byte) []byte {
			return []byte(strings.Replace(string(b), `"format":2`, `"format":99`, 1))
		}},
		{"span out of range", func(t *testing.T, _ string, b []byte) []byte {
			return []byte(strings.Replace(string(b), `"end":`, `"end":9999999`, 1))
		}},
		// Forgeries: the findings taken out of a cached result, the way
		// a repository from elsewhere would bring a cache that hides
		// its secrets. None is the user's ctxpack's: each is a miss.
		{"forged: findings emptied", func(t *testing.T, _ string, b []byte) []byte {
			return forgeLines(t, b, func(e map[string]any) { e["value"] = []any{} })
		}},
		{"forged: findings emptied, sha256 for a MAC", func(t *testing.T, _ string, b []byte) []byte {
			return forgeLines(t, b, func(e map[string]any) {
				e["value"] = []any{}
				e["mac"] = fmt.Sprintf("%x", sha256.Sum256([]byte("[]")))
			})
		}},
		{"forged: format 1 with its checksum", func(t *testing.T, _ string, b []byte) []byte {
			return forgeLines(t, b, func(e map[string]any) {
				e["format"], e["value"], e["sum"] = 1, []any{}, fmt.Sprintf("%x", sha256.Sum256([]byte("[]")))
				delete(e, "mac")
			})
		}},
		{"forged: written under another user's key", func(t *testing.T, _ string, b []byte) []byte {
			other, err := OpenCache(t.TempDir(), []byte("another user's scan cache key..."))
			if err != nil {
				t.Fatal(err)
			}
			return forgeLines(t, b, func(e map[string]any) {
				e["value"] = []any{}
				e["mac"] = fmt.Sprintf("%x", other.entryMAC(e["key"].(string), []byte("[]")))
			})
		}},
		{"bit flip in value", func(t *testing.T, _ string, b []byte) []byte {
			// still valid JSON, still in range: caught by the MAC
			i := strings.Index(string(b), `"start":`) + len(`"start":`)
			d := b[i]
			if d == '9' {
				d = '8'
			} else {
				d++
			}
			b[i] = d
			return b
		}},
	}
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s1, _ := NewScanner(ScannerOptions{CacheDir: dir, CacheKey: testCacheKey})
			want, _ := s1.Scan(ctx, path, content)
			s1.Flush()
			files := cacheFiles(t, dir)
			if len(files) != 1 {
				t.Fatalf("files %v", files)
			}
			b, _ := os.ReadFile(files[0])
			if err := os.WriteFile(files[0], c.mutate(t, files[0], b), 0o644); err != nil {
				t.Fatal(err)
			}
			s2, _ := NewScanner(ScannerOptions{CacheDir: dir, CacheKey: testCacheKey})
			got, err := s2.Scan(ctx, path, content)
			if err != nil {
				t.Fatalf("corrupt cache must not be an error: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("findings after corruption differ:\n%+v\n%+v", got, want)
			}
			if s2.scans.Load() != 1 {
				t.Errorf("corrupt entry not rescanned (scans %d)", s2.scans.Load())
			}
			// The entry was rewritten and is good again.
			s2.Flush()
			s3, _ := NewScanner(ScannerOptions{CacheDir: dir, CacheKey: testCacheKey})
			if again, _ := s3.Scan(ctx, path, content); !reflect.DeepEqual(again, want) || s3.scans.Load() != 0 {
				t.Errorf("entry not repaired (scans %d)", s3.scans.Load())
			}
		})
	}
}

// forgeLines rewrites each entry of a segment that holds findings with
// forge.
func forgeLines(t *testing.T, b []byte, forge func(e map[string]any)) []byte {
	t.Helper()
	var out []byte
	forged := 0
	for line := range strings.Lines(string(b)) {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if v, ok := e["value"].([]any); ok && len(v) > 0 {
			forge(e)
			forged++
		}
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, data...), '\n')
	}
	if forged == 0 {
		t.Fatal("no entry with findings to forge")
	}
	return out
}

// A cache entry is the user's only: one written under another key, or a
// genuine entry of another key moved to this one, is a miss; so is a
// token count (pack.TokenCounts) whose value was changed, which would
// otherwise let a pack over a token limit pass.
func TestCacheEntriesAreTheUsers(t *testing.T) {
	dir := t.TempDir()
	mine, err := OpenCache(dir, testCacheKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := mine.Store(cacheKey(1), []int{1}); err != nil {
		t.Fatal(err)
	}
	if err := mine.Store(cacheKey(2), 5000); err != nil {
		t.Fatal(err)
	}
	if err := mine.Flush(); err != nil {
		t.Fatal(err)
	}
	var n int
	if again, _ := OpenCache(dir, testCacheKey); !again.Load(cacheKey(2), &n) || n != 5000 {
		t.Fatalf("the user's own entry: %d", n)
	}
	if other, _ := OpenCache(dir, []byte("another user's scan cache key...")); other.Load(cacheKey(2), &n) {
		t.Fatal("an entry of another user's key was trusted")
	}

	files := cacheFiles(t, dir)
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var lines []map[string]any
	for line := range strings.Lines(string(data)) {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, e)
	}
	var forged []byte
	for _, e := range lines {
		switch e["key"] {
		case cacheKey(1): // key 1's genuine line, as key 3's
			e["key"] = cacheKey(3)
		case cacheKey(2): // a count under any limit
			e["value"] = 1
		}
		line, _ := json.Marshal(e)
		forged = append(append(forged, line...), '\n')
	}
	if err := os.WriteFile(files[0], forged, 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := OpenCache(dir, testCacheKey)
	var v []int
	if c.Load(cacheKey(3), &v) {
		t.Errorf("another key's entry stood in: %v", v)
	}
	if c.Load(cacheKey(2), &n) {
		t.Errorf("a changed token count was trusted: %d", n)
	}
	if st := c.Stats(); st.Corrupt != 2 || st.Hits != 0 {
		t.Errorf("stats %+v, want 2 corrupt, no hit", st)
	}
	s, err := NewScanner(ScannerOptions{CacheDir: dir, CacheKey: testCacheKey})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := s.TokenCount(cacheKey(2)); ok {
		t.Errorf("the scanner's token count: %d from a forged entry", n)
	}
	if _, err := OpenCache(dir, testCacheKey[:16]); err == nil {
		t.Error("a short key opened the cache")
	}
}

// The cache's directory and its files are the repository's to plant: a
// link where the directory should be is refused (nothing is written where
// it points), and a link or a FIFO named as a segment is no segment
// (read without following it or blocking on it).
func TestCacheFollowsNoLink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	link := filepath.Join(root, "scan-cache")
	if err := os.Symlink(outside, link); err != nil {
		t.Skip(err)
	}
	if _, err := OpenCache(link, testCacheKey); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("a linked cache directory: %v", err)
	}
	if _, err := NewScanner(ScannerOptions{CacheDir: link, CacheKey: testCacheKey}); err == nil {
		t.Fatal("a scanner opened a linked cache directory")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("wrote %s where the link points", entries[0].Name())
	}

	dir := filepath.Join(root, "real")
	genuine, _ := OpenCache(filepath.Join(root, "elsewhere"), testCacheKey)
	genuine.Store(cacheKey(1), []int{1})
	if err := genuine.Flush(); err != nil {
		t.Fatal(err)
	}
	c, err := OpenCache(dir, testCacheKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cacheFiles(t, genuine.Dir())[0], filepath.Join(dir, "linked"+segmentExt)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"+segmentExt), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	go func() {
		var v []int
		done <- c.Load(cacheKey(1), &v)
	}()
	select {
	case hit := <-done:
		if hit {
			t.Error("an entry was read through a link")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cache blocked on a FIFO named as a segment")
	}
}

func TestCacheConcurrent(t *testing.T) {
	c, err := OpenCache(t.TempDir(), testCacheKey)
	if err != nil {
		t.Fatal(err)
	}
	type val struct{ N []int }
	keys := make([]string, 8)
	for i := range keys {
		sum := sha256.Sum256([]byte{byte(i)})
		keys[i] = hex.EncodeToString(sum[:])
	}
	var wg sync.WaitGroup
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				k := (g + i) % len(keys)
				want := val{N: []int{k, k * k, 1000 + k}}
				if err := c.Store(keys[k], want); err != nil {
					t.Error(err)
					return
				}
				var got val
				if c.Load(keys[k], &got) && !reflect.DeepEqual(got, want) {
					t.Errorf("key %d: got %+v", k, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	var v val
	if c.Load("not-a-key", &v) {
		t.Error("bad key loaded")
	}
	if err := c.Store("../../etc/x", v); err == nil {
		t.Error("bad key stored")
	}
	// no temp files left behind
	err = filepath.WalkDir(c.Dir(), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temp file left: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCacheMergesSegments(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenCache(dir, testCacheKey)
	if err != nil {
		t.Fatal(err)
	}
	storeSegments(t, c, 0, cacheMaxSegments+1)
	if files := cacheFiles(t, dir); len(files) != 1 {
		t.Fatalf("%d segments after merging, want 1", len(files))
	}
	fresh, _ := OpenCache(dir, testCacheKey)
	for i := 0; i <= cacheMaxSegments; i++ {
		var got []int
		if !fresh.Load(cacheKey(i), &got) || len(got) != 1 || got[0] != i {
			t.Fatalf("entry %d lost in the merge: %v", i, got)
		}
	}
}

// ScanSum keys the scan cache by the digest it is given, which is the one
// Scan takes of the same bytes: each finds the other's entry, with the same
// findings. A text an untrusted gitleaks:allow is masked in is another
// text, keyed by its own digest whatever the caller's.
func TestScanSumSharesScanKey(t *testing.T) {
	ctx := context.Background()
	path, content := cachedFixture()
	f := secrettest.Make(42)
	allowed := []byte("package x\n\nb := \"" + f.Stripe + "\" // gitleaks:allow\n")
	plain, err := NewScanner(ScannerOptions{InlineAllow: func(string, string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		content []byte
	}{{"as is", content}, {"masked", allowed}} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := plain.Scan(ctx, path, tc.content)
			if err != nil || len(want) == 0 {
				t.Fatalf("findings %v %v, want some", want, err)
			}
			s, err := NewScanner(ScannerOptions{CacheDir: t.TempDir(), CacheKey: testCacheKey, InlineAllow: func(string, string) bool { return false }})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.ScanSum(ctx, path, tc.content, sha256.Sum256(tc.content))
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("ScanSum: %+v %v, want %+v", got, err, want)
			}
			again, err := s.Scan(ctx, path, tc.content)
			if err != nil || !reflect.DeepEqual(again, want) {
				t.Fatalf("Scan after ScanSum: %+v %v, want %+v", again, err, want)
			}
			if n := s.scans.Load(); n != 1 {
				t.Errorf("%d scans: Scan did not find ScanSum's entry", n)
			}
		})
	}
}

// cacheKey is a key of the cache's form for i.
func cacheKey(i int) string {
	s := sha256.Sum256([]byte{byte(i)})
	return hex.EncodeToString(s[:])
}

// storeSegments stores []int{i} under cacheKey(i) for i from from to
// to-1, each flushed to a segment of its own.
func storeSegments(t *testing.T, c *Cache, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := c.Store(cacheKey(i), []int{i}); err != nil {
			t.Fatal(err)
		}
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}

// A cache read from disk verifies a line when its key is looked up, not
// before: a run that asks for one entry decodes one, however many the
// segments hold. The last line of a key that verifies is its entry, those
// after it count as corrupt; keys never looked up survive a merge.
func TestCacheVerifiesOnLookup(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenCache(dir, testCacheKey)
	if err != nil {
		t.Fatal(err)
	}
	const n = 10
	for i := range n {
		if err := c.Store(cacheKey(i), []int{i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	files := cacheFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("segments %v", files)
	}
	// A newer line for key 3 whose value does not match its MAC, and a
	// line that names no key.
	bad := fmt.Sprintf(`{"format":2,"key":"%s","mac":"%x","value":[33]}`+"\n", cacheKey(3), c.entryMAC(cacheKey(3), []byte("[3]")))
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(bad + "not json\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()

	fresh, _ := OpenCache(dir, testCacheKey)
	var got []int
	if !fresh.Load(cacheKey(0), &got) || !reflect.DeepEqual(got, []int{0}) {
		t.Fatalf("key 0: %v", got)
	}
	if len(fresh.entries) != 1 || len(fresh.lines) != n-1 {
		t.Errorf("after one lookup: %d entries verified, %d keys' lines left; want 1 and %d", len(fresh.entries), len(fresh.lines), n-1)
	}
	if st := fresh.Stats(); st.Corrupt != 1 { // the line without a key
		t.Errorf("corrupt %d before key 3 is looked up, want 1", st.Corrupt)
	}
	got = nil
	if !fresh.Load(cacheKey(3), &got) || !reflect.DeepEqual(got, []int{3}) {
		t.Errorf("key 3: %v, want the older line's [3]", got)
	}
	if st := fresh.Stats(); st.Corrupt != 2 || st.Hits != 2 {
		t.Errorf("stats %+v, want 2 corrupt, 2 hits", st)
	}

	// Keys a process never looked up are kept when it merges.
	merging, _ := OpenCache(dir, testCacheKey)
	storeSegments(t, merging, n, n+cacheMaxSegments) // with the segment read, one over the most
	if files := cacheFiles(t, dir); len(files) != 1 {
		t.Fatalf("%d segments after merging, want 1", len(files))
	}
	after, _ := OpenCache(dir, testCacheKey)
	for i := 0; i < n+cacheMaxSegments; i++ {
		got = nil
		if !after.Load(cacheKey(i), &got) || !reflect.DeepEqual(got, []int{i}) {
			t.Errorf("key %d after the merge: %v", i, got)
		}
	}
}

// FuzzCacheSegment reads any bytes as a segment: nothing panics, and an
// entry found is one a line holds whole for its key.
func FuzzCacheSegment(f *testing.F) {
	c, err := OpenCache(f.TempDir(), testCacheKey)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(fmt.Sprintf(`{"format":2,"key":"%s","mac":"%x","value":[1]}`+"\n", cacheKey(1), c.entryMAC(cacheKey(1), []byte("[1]")))))
	f.Add([]byte(`{"format":2,"key":"` + strings.Repeat("a", 64) + "\"\n\n{}\n"))
	f.Add([]byte("{\"key\":\"" + cacheKey(2) + "\",\"format\":2}"))
	f.Add([]byte(fmt.Sprintf(`{"format":1,"key":"%s","sum":"%x","value":[1]}`+"\n", cacheKey(1), sha256.Sum256([]byte("[1]")))))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "x"+segmentExt), data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := OpenCache(dir, testCacheKey)
		if err != nil {
			t.Fatal(err)
		}
		keys := []string{cacheKey(1), cacheKey(2), strings.Repeat("a", 64)}
		c.mu.Lock()
		c.load()
		for d := range c.lines {
			keys = append(keys, hex.EncodeToString(d[:]))
		}
		c.mu.Unlock()
		for _, k := range keys {
			var v any
			if c.Load(k, &v) && !strings.Contains(string(data), k) {
				t.Errorf("key %s found in a segment that does not hold it", k)
			}
		}
	})
}

// BenchmarkCacheFirstLookups is a process's first lookups in a warm
// cache: a small change's 3 files, in a cache a full tree's scan left
// (10,000 entries of scan results). It reads the segments and verifies
// the 3 entries asked for, not all of them (TestCacheVerifiesOnLookup).
func BenchmarkCacheFirstLookups(b *testing.B) {
	dir := b.TempDir()
	c, err := OpenCache(dir, testCacheKey)
	if err != nil {
		b.Fatal(err)
	}
	type result struct {
		Findings []pack.Finding `json:"findings"`
		Tokens   int            `json:"tokens"`
	}
	const n = 10000
	for i := range n {
		s := sha256.Sum256([]byte(fmt.Sprint(i)))
		v := result{Tokens: i}
		if i%50 == 0 {
			v.Findings = []pack.Finding{{RuleID: "generic-api-key", Start: i, End: i + 40}}
		}
		if err := c.Store(hex.EncodeToString(s[:]), v); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		b.Fatal(err)
	}
	keys := make([]string, 3)
	for i := range keys {
		s := sha256.Sum256([]byte(fmt.Sprint(i * 1000)))
		keys[i] = hex.EncodeToString(s[:])
	}
	b.ReportAllocs()
	for b.Loop() {
		fresh, err := OpenCache(dir, testCacheKey)
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range keys {
			var v result
			if !fresh.Load(k, &v) {
				b.Fatalf("%s not found", k)
			}
		}
	}
}
