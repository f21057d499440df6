package audit

import "github.com/ctxpack/ctxpack/internal/lazyre"

// regexps are the package's own patterns (the assignment rules', the scan
// cache's), compiled on first use or by Preload (lazyre), not in every
// process's init.
var regexps lazyre.Set
