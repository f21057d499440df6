package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ctxpack/ctxpack/internal/fsutil"
)

// cacheFormat is the version of the on-disk entry format; entries of another
// format are misses. Format 1 had a plain sha256 where 2 has a MAC.
const cacheFormat = 2

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
// that cannot be read, does not decode, fails its MAC or names another key
// is a miss, never an error: the caller recomputes. Call Flush before the
// process ends; entries not flushed only cost a rescan next time.
//
// Every entry carries an HMAC-SHA256 of its key and value under the user's
// key (UserCacheKey): the directory is in the repository's git directory,
// which a repository from elsewhere fills as it likes, and an entry is
// trusted (no secret in a file; a token count under a limit) only when this
// user's ctxpack wrote it.
type Cache struct {
	dir  string
	macs sync.Pool // of hash.Hash: HMAC-SHA256 under the user's key

	mu      sync.Mutex
	loaded  bool
	entries map[string]json.RawMessage // verified values by key
	// lines are the segments' lines not verified yet, the last one read
	// by the key it names (the last valid one of a key is its entry), and
	// older the ones before it of a key named more than once, in order.
	// Keys are the digests the hex names: a line filed costs no
	// allocation of its own.
	lines    map[cacheDigest][]byte
	older    map[cacheDigest][][]byte
	segments []string // the segment files read
	pending  []cacheEntry

	hits, misses, corrupt atomic.Int64
	invalid               atomic.Int64 // entries the caller rejected after Load
}

// cacheEntry is one line of a segment: the key is stored with its value and
// their MAC.
type cacheEntry struct {
	Format int             `json:"format"`
	Key    string          `json:"key"`
	MAC    string          `json:"mac"` // hex HMAC-SHA256 of Key and Value (Cache.entryMAC)
	Value  json.RawMessage `json:"value"`
}

// entryMAC authenticates an entry: it binds the value to its key, so
// neither a value nor a genuine entry of another key can stand in.
func (c *Cache) entryMAC(key string, value []byte) []byte {
	h := c.macs.Get().(hash.Hash)
	h.Reset()
	h.Write([]byte("ctxpack scan cache 2\x00"))
	h.Write([]byte(key)) // 64 hex digits: where the value starts is not in doubt
	h.Write(value)
	sum := h.Sum(nil)
	c.macs.Put(h)
	return sum
}

// newEntry is the line of key and value, with their MAC.
func (c *Cache) newEntry(key string, value json.RawMessage) cacheEntry {
	return cacheEntry{Format: cacheFormat, Key: key, MAC: hex.EncodeToString(c.entryMAC(key, value)), Value: value}
}

var cacheKeyRe = regexps.MustCompile(`^[0-9a-f]{64}$`)

// OpenCache opens the cache in dir, making the directory when it is
// absent; key (CacheKeySize bytes, UserCacheKey) authenticates its entries.
// dir's last component is not followed: a symlink or anything but a
// directory there is an error (fsutil.MkdirNoFollow).
func OpenCache(dir string, key []byte) (*Cache, error) {
	if len(key) != CacheKeySize {
		return nil, fmt.Errorf("scan cache: a key of %d bytes, not %d", len(key), CacheKeySize)
	}
	if _, err := fsutil.MkdirNoFollow(filepath.Dir(dir), 0o755, filepath.Base(dir)); err != nil {
		return nil, fmt.Errorf("scan cache: %w", err)
	}
	key = bytes.Clone(key)
	c := &Cache{dir: dir, entries: map[string]json.RawMessage{}, lines: map[cacheDigest][]byte{}, older: map[cacheDigest][][]byte{}}
	c.macs.New = func() any { return hmac.New(sha256.New, key) }
	return c, nil
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

// load reads every segment once, and files each line under the key it
// names without verifying it: a line is decoded and checked when its key
// is looked up (entry), so a run looks at what it asks for. Decoding
// every line on first use made a warm cache cost what the whole tree's
// scan results cost, however small the run: a 3-file commit of 10,000
// generated files took ~35 ms cold and ~120 ms with the cache its
// full-tree pack left (10,491 entries, 1.8 MB).
// The caller holds c.mu.
func (c *Cache) load() {
	if c.loaded {
		return
	}
	c.loaded = true
	names, _ := filepath.Glob(filepath.Join(c.dir, "*"+segmentExt))
	for _, name := range names {
		data, err := fsutil.ReadNoFollow(name) // a link or a FIFO planted there is no segment
		if err != nil {
			continue
		}
		c.segments = append(c.segments, name)
		if otherFormat(data) {
			continue // a segment an older ctxpack wrote: dropped at the next merge
		}
		for line := range bytes.Lines(data) {
			line = bytes.TrimSuffix(line, []byte("\n"))
			key, ok := lineKey(line)
			if !ok {
				c.corrupt.Add(1)
				continue
			}
			if prev, ok := c.lines[key]; ok {
				c.older[key] = append(c.older[key], prev)
			}
			c.lines[key] = line
		}
	}
}

// linePrefix begins every line writeSegment writes (encoding/json writes
// cacheEntry's fields in order), the key after it.
const linePrefix = `{"format":2,"key":"`

// otherFormat reports whether a segment was written in another format (every
// line of a segment is of its writer's format): its lines are not filed,
// which would decode each of them at every load.
func otherFormat(data []byte) bool {
	const format = `{"format":`
	return bytes.HasPrefix(data, []byte(format)) && !bytes.HasPrefix(data, []byte(linePrefix))
}

// cacheDigest is a key's 32 bytes (its 64 hex digits decoded).
type cacheDigest [32]byte

// digestOf decodes a key; ok is false when it is not 64 hex digits.
func digestOf(key []byte) (d cacheDigest, ok bool) {
	if len(key) != 2*len(d) {
		return d, false
	}
	_, err := hex.Decode(d[:], key)
	return d, err == nil
}

// lineKey is the key a segment line names: read from its prefix, or, for a
// line written otherwise, from its decoding; ok is false when it names
// none (a line that does not decode, or whose key is not a digest), which
// is a miss for every key.
func lineKey(line []byte) (cacheDigest, bool) {
	const n = len(linePrefix)
	if len(line) > n+64 && string(line[:n]) == linePrefix && line[n+64] == '"' {
		return digestOf(line[n : n+64])
	}
	var e cacheEntry
	if err := json.Unmarshal(line, &e); err != nil {
		return cacheDigest{}, false
	}
	return digestOf([]byte(e.Key))
}

// linesOf returns the lines filed under d, oldest first. The caller
// holds c.mu.
func (c *Cache) linesOf(d cacheDigest) [][]byte {
	last, ok := c.lines[d]
	if !ok {
		return nil
	}
	return append(c.older[d][:len(c.older[d]):len(c.older[d])], last)
}

// dropLines forgets the lines filed under d. The caller holds c.mu.
func (c *Cache) dropLines(d cacheDigest) {
	delete(c.lines, d)
	delete(c.older, d)
}

// newestValid is the value of the last of lines that verifies for key;
// each after it is counted corrupt.
func (c *Cache) newestValid(lines [][]byte, key string) json.RawMessage {
	for i := len(lines) - 1; i >= 0; i-- {
		if v, ok := c.verifyLine(lines[i], key); ok {
			return v
		}
		c.corrupt.Add(1)
	}
	return nil
}

// verifyLine decodes a segment line and returns its value when it is an
// entry of this format for key that this user's ctxpack wrote (its MAC
// holds).
func (c *Cache) verifyLine(line []byte, key string) (json.RawMessage, bool) {
	var e cacheEntry
	if err := json.Unmarshal(line, &e); err != nil || e.Format != cacheFormat || e.Key != key ||
		!cacheKeyRe().MatchString(e.Key) || len(e.Value) == 0 {
		return nil, false
	}
	mac, err := hex.DecodeString(e.MAC)
	if err != nil || !hmac.Equal(mac, c.entryMAC(e.Key, e.Value)) {
		return nil, false
	}
	return e.Value, true
}

// entry is the verified value for key: remembered, or the last of its
// lines that verifies (those after it are counted corrupt), which is then
// remembered. The lines are verified without c.mu held: workers look up
// their files' entries at once.
func (c *Cache) entry(key string) (json.RawMessage, bool) {
	d, _ := digestOf([]byte(key)) // a key is 64 hex digits (Load)
	c.mu.Lock()
	c.load()
	val, ok := c.entries[key]
	var lines [][]byte
	if !ok {
		lines = c.linesOf(d)
	}
	c.mu.Unlock()
	if ok || len(lines) == 0 {
		return val, ok
	}
	val = c.newestValid(lines, key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.entries[key]; ok { // stored, or verified by another worker, meanwhile
		return v, true
	}
	c.dropLines(d)
	if val == nil {
		return nil, false
	}
	c.entries[key] = val
	return val, true
}

// Load decodes the entry for key (64 lowercase hex digits, e.g. a sha256)
// into v and reports whether it was found and valid.
func (c *Cache) Load(key string, v any) bool {
	if !cacheKeyRe().MatchString(key) {
		c.misses.Add(1)
		return false
	}
	val, ok := c.entry(key)
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
	if d, ok := digestOf([]byte(key)); ok {
		c.dropLines(d) // superseded
	}
	c.pending = append(c.pending, c.newEntry(key, val))
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
	// Merge: one segment with every verified entry (the lines not looked
	// up are verified now), then drop the old ones. A concurrent reader
	// that misses an entry meanwhile only rescans.
	for d := range c.lines {
		key := hex.EncodeToString(d[:])
		if v := c.newestValid(c.linesOf(d), key); v != nil {
			c.entries[key] = v
		}
		c.dropLines(d)
	}
	all := make([]cacheEntry, 0, len(c.entries))
	for k, v := range c.entries {
		all = append(all, c.newEntry(k, v))
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
	// Created exclusively: a link planted at the temporary name is not
	// followed, and the rename replaces whatever is at the segment's name
	// (a link too) instead of writing through it.
	if err := writeNew(tmp, buf.Bytes()); err != nil {
		if !errors.Is(err, os.ErrExist) {
			os.Remove(tmp)
		}
		return "", fmt.Errorf("scan cache: %w", err)
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("scan cache: %w", err)
	}
	return name, nil
}

// writeNew writes data to the new file name (O_EXCL: not through a link).
func writeNew(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
