package pack

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRuneCount: the count of utf8.RuneCount, invalid and short encodings
// included, and no copy of a large non-ASCII input.
func TestRuneCount(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"ascii", `{"a":"b"}`},
		{"multibyte", "héllo wörld → 世界 🙂"},
		{"invalid byte", "a\xffb"},
		{"lone continuation", "\x80\x80x"},
		{"short encoding at end", "abc\xe2\x82"},
		{"surrogate encoding", "\xed\xa0\x80"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := RuneCount([]byte(tc.in)), utf8.RuneCount([]byte(tc.in)); got != want {
				t.Errorf("RuneCount(%q) = %d, want %d", tc.in, got, want)
			}
		})
	}
	big := []byte("é" + strings.Repeat("x", 1<<20))
	if n := testing.AllocsPerRun(5, func() { RuneCount(big) }); n != 0 {
		t.Errorf("RuneCount of 1 MiB allocates %v times, want 0", n)
	}
}

// TestCountTokensOf counts what CountTokens counts.
func TestCountTokensOf(t *testing.T) {
	for _, in := range []string{"", "plain words here", `{"content":"func main() {}\n"}`, "caf\xe9 \xff"} {
		want, err := CountTokens(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := CountTokensOf([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("CountTokensOf(%q) = %d, want %d", in, got, want)
		}
	}
}

// FuzzRuneCount: RuneCount is utf8.RuneCount on any bytes.
func FuzzRuneCount(f *testing.F) {
	for _, s := range []string{"", "héllo → 世界 🙂 and more ascii", "a\xffb\x80\x80", "abc\xe2\x82", "\xed\xa0\x80 0123456789"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if got, want := RuneCount(p), utf8.RuneCount(p); got != want {
			t.Fatalf("RuneCount(%q) = %d, want %d", p, got, want)
		}
	})
}

func BenchmarkRuneCount(b *testing.B) {
	p := []byte(strings.Repeat("func main() { fmt.Println(\"héllo\") }\n", 1<<15))
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		RuneCount(p)
	}
}
