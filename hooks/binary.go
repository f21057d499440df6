package hooks

import (
	"os"
	"path/filepath"
	"strings"
)

// RunningBinary returns the absolute path of the running ctxpack binary for
// the hook to record, or "" with a note saying why none is recorded (a
// temporary build of `go run` or a test binary: the hook then looks for
// ctxpack on PATH).
func RunningBinary() (path, note string) {
	exe, err := os.Executable()
	if err != nil {
		return "", "the running ctxpack's path is unknown (" + err.Error() + "); the hook will look for ctxpack on PATH"
	}
	if temporaryBuild(exe) {
		return "", "ctxpack is running from a temporary build (" + exe + ", as with go run); the hook will look for ctxpack on PATH instead"
	}
	return exe, ""
}

// temporaryBuild recognizes the binaries `go run` and `go test` build: under
// a go-build* directory (…/go-build123/b001/exe/ctxpack), or named *.test.
func temporaryBuild(exe string) bool {
	if strings.HasSuffix(filepath.Base(exe), ".test") {
		return true
	}
	for _, part := range strings.Split(filepath.ToSlash(exe), "/") {
		if strings.HasPrefix(part, "go-build") {
			return true
		}
	}
	return false
}
