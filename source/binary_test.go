package source

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/utils/binary"
)

// TestIsBinaryAsGoGit: isBinary answers as go-git's binary.IsBinary, whose
// heuristic is git's, at the edges of the bytes it looks at.
func TestIsBinaryAsGoGit(t *testing.T) {
	texts := []string{"", "\x00", "a", "a\x00b", "é\x00"}
	for _, at := range []int{0, 1, binarySniff - 1, binarySniff, binarySniff + 1} {
		texts = append(texts, strings.Repeat("x", at)+"\x00"+"tail", strings.Repeat("x", at))
	}
	for _, text := range texts {
		want, err := binary.IsBinary(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		if got := isBinary(text); got != want {
			t.Errorf("isBinary of %d bytes (NUL at %d) = %v, go-git says %v", len(text), strings.IndexByte(text, 0), got, want)
		}
	}
}
