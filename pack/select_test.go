package pack

import (
	"errors"
	"testing"

	"github.com/ctxpack/ctxpack/policy"
)

func TestSelect(t *testing.T) {
	base := Constraints{Requested: policy.TypeAuto, MaxContentBytes: 512000, MaxFiles: 200}
	chars := func(n int) func() (int, error) { return func() (int, error) { return n, nil } }
	cases := []struct {
		name   string
		c      Constraints
		est    Estimate
		typ    string
		reason string
	}{
		{"prefer summary", Constraints{Requested: policy.TypeSummary, MaxContentBytes: 512000, MaxFiles: 200}, Estimate{ContentBytes: 10},
			policy.TypeSummary, "summary pack requested"},
		{"full requested", Constraints{Requested: policy.TypeFull, MaxContentBytes: 1, MaxFiles: 1}, Estimate{ContentBytes: 10, Files: 5},
			policy.TypeFull, "full pack requested"},
		{"over max_content_bytes", base, Estimate{ContentBytes: 1204331, Files: 3},
			policy.TypeSummary, "full pack estimate 1,204,331 bytes exceeds max_content_bytes 512,000"},
		{"over max_files", base, Estimate{ContentBytes: 1000, Files: 1204},
			policy.TypeSummary, "1,204 packable files exceed max_files 200"},
		{"bytes before files", base, Estimate{ContentBytes: 600000, Files: 1204},
			policy.TypeSummary, "full pack estimate 600,000 bytes exceeds max_content_bytes 512,000"},
		{"fits", base, Estimate{ContentBytes: 12345, Files: 87},
			policy.TypeFull, "full pack estimate 12,345 bytes in 87 files fits max_content_bytes 512,000 and max_files 200"},
		{"one file", base, Estimate{ContentBytes: 5, Files: 1},
			policy.TypeFull, "full pack estimate 5 bytes in 1 file fits max_content_bytes 512,000 and max_files 200"},
		{"over tier", Constraints{Requested: policy.TypeAuto, MaxContentBytes: 512000, MaxFiles: 200, Tier: "cheap", TierChars: 25000},
			Estimate{ContentBytes: 30000, Files: 10, Chars: chars(41234)},
			policy.TypeSummary, "full pack estimate 41,234 characters exceeds tier cheap's ceiling of 25,000 characters"},
		{"fits tier", Constraints{Requested: policy.TypeAuto, MaxContentBytes: 512000, MaxFiles: 200, Tier: "default", TierChars: 60000},
			Estimate{ContentBytes: 30000, Files: 10, Chars: chars(41234)},
			policy.TypeFull, "full pack estimate 30,000 bytes in 10 files fits max_content_bytes 512,000 and max_files 200, and its 41,234 characters fit tier default's 60,000"},
		{"no tier: chars not measured", base, Estimate{ContentBytes: 30000, Files: 10, Chars: func() (int, error) { return 0, errors.New("must not be called") }},
			policy.TypeFull, "full pack estimate 30,000 bytes in 10 files fits max_content_bytes 512,000 and max_files 200"},
	}
	for _, c := range cases {
		sel, err := Select(c.c, c.est)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if sel.Type != c.typ || sel.Reason != c.reason {
			t.Errorf("%s: got %s %q, want %s %q", c.name, sel.Type, sel.Reason, c.typ, c.reason)
		}
	}
	tier := Constraints{Requested: policy.TypeAuto, MaxContentBytes: 512000, MaxFiles: 200, Tier: "cheap", TierChars: 25000}
	if _, err := Select(tier, Estimate{Chars: func() (int, error) { return 0, errors.New("boom") }}); err == nil {
		t.Error("a failed measurement must be an error")
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 12345: "12,345", 1204331: "1,204,331", -1234: "-1,234", -12: "-12"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
