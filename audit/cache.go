package audit

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// cacheFormat is the version of the on-disk entry format; entries of another
// format are misses.
const cacheFormat = 1

// Segment tuning: new entries are written in batches, one segment file per
// batch, and the segments are merged when there are many.
const (
	cacheFlushEntries = 4096
	cacheMaxSegments  = 32
	segmentExt        = ".seg"
)

// Cache is a content-addressed store of JSON values under a directory. New
// entries are kept in memory and written in batches as append-only segment
// files (JSON lines, one entry each), because one file per entry costs a
// handful of syscalls per scanned file. Segments are written atomically
// (temp file, then rename) under unique names, so concurrent processes never
// clash; every process reads all segments on first use. A segment or a line
// that cannot be read, does not decode, fails its checksum or names another
// key is a miss, never an error: the caller recomputes. Call Flush before the
// process ends; entries not flushed only cost a rescan next time.
type Cache struct {
	dir string

	mu       sync.Mutex
	loaded   bool
	entries  map[string]json.RawMessage // verified values by key
	segments []string                   // the segment files read
	pending  []cacheEntry

	hits, misses, corrupt atomic.Int64
	invalid               atomic.Int64 // entries the caller rejected after Load
}

// cacheEntry is one line of a segment: the key is stored with its value and
// a checksum of the value.
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

var cacheKeyRe = regexps.MustCompile(`^[0-9a-f]{64}$`)

// OpenCache creates dir if needed.
func OpenCache(dir string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("scan cache: %w", err)
	}
	return &Cache{dir: dir, entries: map[string]json.RawMessage{}}, nil
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

// load reads every segment once. The caller holds c.mu.
func (c *Cache) load() {
	if c.loaded {
		return
	}
	c.loaded = true
	names, _ := filepath.Glob(filepath.Join(c.dir, "*"+segmentExt))
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		c.segments = append(c.segments, name)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
		for sc.Scan() {
			var e cacheEntry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Format != cacheFormat ||
				!cacheKeyRe().MatchString(e.Key) || len(e.Value) == 0 || e.Sum != valueSum(e.Value) {
				c.corrupt.Add(1)
				continue
			}
			c.entries[e.Key] = e.Value
		}
	}
}

// Load decodes the entry for key (64 lowercase hex digits, e.g. a sha256)
// into v and reports whether it was found and valid.
func (c *Cache) Load(key string, v any) bool {
	if !cacheKeyRe().MatchString(key) {
		c.misses.Add(1)
		return false
	}
	c.mu.Lock()
	c.load()
	val, ok := c.entries[key]
	c.mu.Unlock()
	if !ok {
		c.misses.Add(1)
		return false
	}
	if err := json.Unmarshal(val, v); err != nil {
		c.corrupt.Add(1)
		c.misses.Add(1)
		return false
	}
	c.hits.Add(1)
	return true
}

// Store records v as the entry for key; it reaches the disk with the next
// batch (every cacheFlushEntries entries) or Flush.
func (c *Cache) Store(key string, v any) error {
	if !cacheKeyRe().MatchString(key) {
		return fmt.Errorf("scan cache: bad key %q", key)
	}
	val, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("scan cache: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.load()
	c.entries[key] = val
	c.pending = append(c.pending, cacheEntry{Format: cacheFormat, Key: key, Sum: valueSum(val), Value: val})
	if len(c.pending) >= cacheFlushEntries {
		return c.flush()
	}
	return nil
}

// Flush writes the entries stored since the last flush as one segment, and
// merges the segments when there are more than cacheMaxSegments.
func (c *Cache) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flush()
}

func (c *Cache) flush() error {
	if len(c.pending) == 0 {
		return nil
	}
	name, err := c.writeSegment(c.pending)
	if err != nil {
		return err
	}
	c.pending = nil
	c.segments = append(c.segments, name)
	if len(c.segments) <= cacheMaxSegments {
		return nil
	}
	// Merge: one segment with every verified entry, then drop the old ones.
	// A concurrent reader that misses an entry meanwhile only rescans.
	all := make([]cacheEntry, 0, len(c.entries))
	for k, v := range c.entries {
		all = append(all, cacheEntry{Format: cacheFormat, Key: k, Sum: valueSum(v), Value: v})
	}
	merged, err := c.writeSegment(all)
	if err != nil {
		return err
	}
	for _, s := range c.segments {
		os.Remove(s)
	}
	c.segments = []string{merged}
	return nil
}

// writeSegment writes entries as JSON lines to a new uniquely named segment.
func (c *Cache) writeSegment(entries []cacheEntry) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return "", fmt.Errorf("scan cache: %w", err)
		}
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", fmt.Errorf("scan cache: %w", err)
	}
	name := filepath.Join(c.dir, fmt.Sprintf("%d-%s%s", os.Getpid(), hex.EncodeToString(id[:]), segmentExt))
	tmp := strings.TrimSuffix(name, segmentExt) + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("scan cache: %w", err)
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("scan cache: %w", err)
	}
	return name, nil
}
