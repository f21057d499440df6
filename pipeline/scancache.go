package pipeline

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/safetext"
	"github.com/ctxpack/ctxpack/source"
)

// cacheWarnings is where a run says why it does without the scan cache.
var cacheWarnings io.Writer = os.Stderr

// cacheWarned are the warnings said: once each in a process (a push's
// refs, a server's requests open one scanner each).
var cacheWarned sync.Map

// scanCache is repo's scan cache: its directory, .git/ctxpack/scan-cache,
// and the user's key that authenticates its entries (audit.UserCacheKey).
// Without either (no user cache directory for the key, a key file others
// can read, a link or a file planted where a state directory should be)
// the run goes without the cache, and says why: the cache only saves
// time, and one that could be another's is not trusted.
func scanCache(repo *source.Repo) (dir string, key []byte, ok bool) {
	key, err := audit.UserCacheKey()
	if err == nil {
		dir, err = repo.MakeStateDir("scan-cache")
	}
	if err != nil {
		msg := "ctxpack: warning: the scan cache is not used (every file is scanned): " + safetext.Line(err.Error())
		if _, said := cacheWarned.LoadOrStore(msg, true); !said {
			fmt.Fprintln(cacheWarnings, msg)
		}
		return "", nil, false
	}
	return dir, key, true
}
