package audit

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ctxpack/ctxpack/internal/fsutil"
)

// CacheKeySize is the size in bytes of the key the scan cache's entries
// are authenticated with.
const CacheKeySize = 32

// cacheKeyFile is the key's file in the user's cache directory.
const cacheKeyFile = "scan-cache.key"

// UserCacheKey is the user's key for the scan cache (OpenCache): 32 random
// bytes in <user cache directory>/ctxpack/scan-cache.key (on Linux
// $XDG_CACHE_HOME or ~/.cache), made on first use. It is kept outside
// every repository because the cache is inside one (.git/ctxpack), where a
// repository from elsewhere brings what it likes: an entry this user's
// ctxpack did not write fails its MAC and is a miss. The file must be a
// regular file, not a link, the user's and readable by nobody else, in a
// directory nobody else can write to; else it is refused, and the caller
// runs without the cache. Removing it makes a new key (every cached
// entry is then a miss once).
func UserCacheKey() ([]byte, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("scan cache key: %w", err)
	}
	dir := filepath.Join(base, "ctxpack")
	if err := fsutil.PrivateDir(dir); err != nil {
		return nil, fmt.Errorf("scan cache key: %w", err)
	}
	return loadCacheKey(filepath.Join(dir, cacheKeyFile))
}

// loadCacheKey reads the key at path, making it when there is none.
func loadCacheKey(path string) ([]byte, error) {
	key, err := readCacheKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		fresh := make([]byte, CacheKeySize)
		if _, err := rand.Read(fresh); err != nil {
			return nil, fmt.Errorf("scan cache key: %w", err)
		}
		// Another process may make it meanwhile: its key is the one read.
		if err := fsutil.CreatePrivate(path, fresh); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("scan cache key: %w", err)
		}
		key, err = readCacheKey(path)
	}
	return key, err
}

func readCacheKey(path string) ([]byte, error) {
	key, err := fsutil.ReadPrivate(path, CacheKeySize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("scan cache key: %w", err)
	}
	if len(key) != CacheKeySize {
		return nil, fmt.Errorf("scan cache key: %s is %d bytes, not %d (remove it, and ctxpack makes a new one)", path, len(key), CacheKeySize)
	}
	return key, nil
}
