// Package generated checks files the tests generate (Go source or data
// built from a dependency or the project's own analysis) against what is
// committed, and rewrites them on request.
package generated

import (
	"bytes"
	"os"
	"testing"

	"github.com/ctxpack/ctxpack/internal/fsutil"
)

// Check fails t when the file at path does not hold exactly want. With
// update it writes want there instead (whole, through a temporary file)
// and skips the test, so that a run without -update checks what was
// written. rerun is the command that regenerates the file, for the
// failure message.
func Check(t testing.TB, path string, want []byte, update bool, rerun string) {
	t.Helper()
	if update {
		if err := fsutil.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skipf("%s rewritten; run again to check it", path)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: %s", err, rerun)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what its generator gives now (%d bytes, want %d): %s", path, len(got), len(want), rerun)
	}
}
