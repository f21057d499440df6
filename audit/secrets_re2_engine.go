//go:build ctxpack_re2

package audit

import re2 "github.com/wasilibs/go-re2"

// Builds with the ctxpack_re2 tag prune rules with RE2 (rulePruner).
func init() {
	compileRE2 = func(pattern string) (ruleMatcher, error) {
		re, err := re2.Compile(pattern)
		if err != nil {
			return nil, err
		}
		return re, nil
	}
}
