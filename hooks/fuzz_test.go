package hooks

import (
	"strings"
	"testing"
)

// FuzzParseUpdates reads git's pre-push input (what a push names): four
// fields with two object ids a line, or an error, never a panic.
func FuzzParseUpdates(f *testing.F) {
	a := strings.Repeat("a", 40)
	z := strings.Repeat("0", 40)
	f.Add("refs/heads/main " + a + " refs/heads/main " + z + "\n")
	f.Add("\n\r\n refs/tags/v1 " + a + " refs/tags/v1 " + a + "\r\n")
	f.Add("a b c d\n")
	f.Add(strings.Repeat("x", 2<<20))
	f.Fuzz(func(t *testing.T, in string) {
		us, err := ParseUpdates(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, u := range us {
			if !isHex(u.LocalSHA) || !isHex(u.RemoteSHA) || u.LocalRef == "" || u.RemoteRef == "" {
				t.Fatalf("update %+v", u)
			}
		}
	})
}
