package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
)

// cacheFormat is the version of the on-disk entry format; entries of another
// format are misses.
const cacheFormat = 1

// Cache is a content-addressed store of JSON values under a directory, one
// file per key (dir/ab/abcdef….json). Writes are atomic (temp file in the
// same directory, then rename), so readers see a whole entry or none, and
// concurrent writers of one key are harmless (same key, same value). A
// missing, unreadable, corrupt or mismatched entry is a miss, never an error:
// the caller recomputes. It is safe for concurrent use within and across
// processes.
type Cache struct {
	dir string

	hits, misses, corrupt atomic.Int64
	invalid               atomic.Int64 // entries the caller rejected after Load
	// made remembers the fan-out directories already created, saving a
	// stat and a mkdir per stored entry.
	made sync.Map
}

// cacheEntry is the file format: the key is stored too, so a file that was
// copied, renamed or truncated to another key's name is not trusted.
type cacheEntry struct {
	Format int             `json:"format"`
	Key    string          `json:"key"`
	Sum    string          `json:"sum"` // hex sha256 of Value, against bit rot
	Value  json.RawMessage `json:"value"`
}

func valueSum(v []byte) string {
	s := sha256.Sum256(v)
	return hex.EncodeToString(s[:])
}

var cacheKeyRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// OpenCache creates dir if needed.
func OpenCache(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("scan cache: %w", err)
	}
	return &Cache{dir: dir}, nil
}

// Dir is the cache directory.
func (c *Cache) Dir() string { return c.dir }

// CacheStats counts cache lookups.
type CacheStats struct {
	Hits, Misses int64
	// Corrupt counts entries that existed but could not be decoded or did
	// not match their key; Invalid counts decoded entries whose content
	// failed validation. Both are also counted as misses.
	Corrupt, Invalid int64
}

// Stats returns the lookup counters.
func (c *Cache) Stats() CacheStats {
	return CacheStats{
		Hits:    c.hits.Load() - c.invalid.Load(),
		Misses:  c.misses.Load() + c.invalid.Load(),
		Corrupt: c.corrupt.Load(),
		Invalid: c.invalid.Load(),
	}
}

func (c *Cache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key+".json")
}

// Load decodes the entry for key (64 lowercase hex digits, e.g. a sha256)
// into v and reports whether it was found and valid.
func (c *Cache) Load(key string, v any) bool {
	if !cacheKeyRe.MatchString(key) {
		c.misses.Add(1)
		return false
	}
	b, err := os.ReadFile(c.path(key))
	if err != nil {
		c.misses.Add(1)
		return false
	}
	var e cacheEntry
	if err := json.Unmarshal(b, &e); err != nil || e.Format != cacheFormat || e.Key != key || len(e.Value) == 0 || e.Sum != valueSum(e.Value) {
		c.corrupt.Add(1)
		c.misses.Add(1)
		return false
	}
	if err := json.Unmarshal(e.Value, v); err != nil {
		c.corrupt.Add(1)
		c.misses.Add(1)
		return false
	}
	c.hits.Add(1)
	return true
}

// Store writes v as the entry for key, atomically.
func (c *Cache) Store(key string, v any) error {
	if !cacheKeyRe.MatchString(key) {
		return fmt.Errorf("scan cache: bad key %q", key)
	}
	val, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("scan cache: %w", err)
	}
	b, err := json.Marshal(cacheEntry{Format: cacheFormat, Key: key, Sum: valueSum(val), Value: val})
	if err != nil {
		return fmt.Errorf("scan cache: %w", err)
	}
	dst := c.path(key)
	dir := filepath.Dir(dst)
	if _, ok := c.made.Load(dir); !ok {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("scan cache: %w", err)
		}
		c.made.Store(dir, true)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-"+key[:8]+"-*")
	if err != nil {
		return fmt.Errorf("scan cache: %w", err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), dst)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("scan cache: %w", werr)
	}
	return nil
}
