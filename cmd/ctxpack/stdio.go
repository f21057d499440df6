package main

import (
	"fmt"
	stdio "io"

	"github.com/ctxpack/ctxpack/internal/fsutil"
)

// maxStdin bounds what one command reads from standard input (a pack, a
// record or a document).
const maxStdin = 256 << 20

// file reads the file argument arg names: standard input for "-", else
// path; either way at most max bytes.
func (s *stdinOnce) file(io ioStreams, arg, path string, max int64) ([]byte, error) {
	if path == "-" {
		return s.readMax(io, arg, max)
	}
	return fsutil.ReadFile(path, max)
}

// stdinOnce hands standard input to at most one file argument ("-").
type stdinOnce struct{ owner string }

// read reads standard input for the argument named arg; a second argument
// that asks for it is a usage error.
func (s *stdinOnce) read(io ioStreams, arg string) ([]byte, error) {
	return s.readMax(io, arg, maxStdin)
}

// readMax is read with a bound of its own.
func (s *stdinOnce) readMax(io ioStreams, arg string, max int64) ([]byte, error) {
	if s.owner != "" {
		return nil, usageErr("%s and %s both read standard input (-): give one of them a file", s.owner, arg)
	}
	s.owner = arg
	data, err := stdio.ReadAll(stdio.LimitReader(io.In, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read standard input: %w", arg, err)
	}
	if int64(len(data)) > max {
		return nil, usageErr("%s: standard input is over %d bytes", arg, max)
	}
	if len(data) == 0 {
		return nil, usageErr("%s: standard input is empty (pipe a file into it, or name the file)", arg)
	}
	return data, nil
}
