package lang

import "github.com/ctxpack/ctxpack/internal/lazyre"

// regexps are the package's patterns, compiled on first use or by Preload
// (lazyre), not in every process's init.
var regexps lazyre.Set

// Preload compiles the package's patterns, so that a caller can have it
// done on another core before a manifest is read or a file extracted.
func Preload() { regexps.CompileAll() }
