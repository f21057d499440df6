package pack

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxpack/ctxpack/policy"
)

// Constraints are seed 000's PackConstraints as the policy gives them.
type Constraints struct {
	// Requested is the policy's pack.type: auto, full or summary
	// (prefer_summary is "summary").
	Requested       string
	MaxContentBytes int64
	MaxFiles        int
	// Tier and TierChars are the optional character ceiling (seed 004); 0
	// TierChars means no tier.
	Tier      string
	TierChars int
}

// ConstraintsOf reads the constraints from a policy.
func ConstraintsOf(pol *policy.Policy) Constraints {
	return Constraints{
		Requested:       pol.Pack.Type,
		MaxContentBytes: pol.Limits.MaxContentBytes,
		MaxFiles:        pol.Limits.MaxFiles,
		Tier:            pol.Pack.Tier,
		TierChars:       pol.TierLimit(),
	}
}

// Estimate is what the selector knows about the Full pack before building it.
type Estimate struct {
	// ContentBytes is the content a Full pack would carry: every packable
	// file after truncation and redaction, plus the bounded diffs.
	ContentBytes int64
	// Files is the number of packable files (included unless a limit drops them).
	Files int
	// Chars, when not nil, measures the serialized Full pack in characters;
	// it is called only when a tier is set and the other limits pass.
	Chars func() (int, error)
}

// Selection is the chosen pack type and the sentence that says why.
type Selection struct {
	Type   string
	Reason string
}

// Select applies seed 000's selection logic, in order: prefer_summary (or an
// explicit type) → that type; estimated Full size over max_content_bytes →
// Summary; file count over max_files → Summary; with a tier (seed 004), a
// Full pack over the tier's ceiling → Summary; otherwise Full. Numbers in
// the reason are thousands-separated.
func Select(c Constraints, est Estimate) (Selection, error) {
	switch c.Requested {
	case policy.TypeSummary:
		return Selection{policy.TypeSummary, "summary pack requested"}, nil
	case policy.TypeFull:
		return Selection{policy.TypeFull, "full pack requested"}, nil
	}
	if est.ContentBytes > c.MaxContentBytes {
		return Selection{policy.TypeSummary, fmt.Sprintf("full pack estimate %s bytes exceeds max_content_bytes %s",
			thousands(est.ContentBytes), thousands(c.MaxContentBytes))}, nil
	}
	if est.Files > c.MaxFiles {
		return Selection{policy.TypeSummary, fmt.Sprintf("%s packable files exceed max_files %s",
			thousands(int64(est.Files)), thousands(int64(c.MaxFiles)))}, nil
	}
	reason := fmt.Sprintf("full pack estimate %s bytes in %s %s fits max_content_bytes %s and max_files %s",
		thousands(est.ContentBytes), thousands(int64(est.Files)), plural(est.Files, "file", "files"),
		thousands(c.MaxContentBytes), thousands(int64(c.MaxFiles)))
	if c.TierChars > 0 && est.Chars != nil {
		n, err := est.Chars()
		if err != nil {
			return Selection{}, err
		}
		if n > c.TierChars {
			return Selection{policy.TypeSummary, fmt.Sprintf("full pack estimate %s characters exceeds tier %s's ceiling of %s characters",
				thousands(int64(n)), c.Tier, thousands(int64(c.TierChars)))}, nil
		}
		reason += fmt.Sprintf(", and its %s characters fit tier %s's %s", thousands(int64(n)), c.Tier, thousands(int64(c.TierChars)))
	}
	return Selection{policy.TypeFull, reason}, nil
}

// thousands formats n with comma thousands separators: 1204331 → "1,204,331".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if len(s) <= 3 {
		if neg {
			return "-" + s
		}
		return s
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 && !(neg && b.Len() == 1) {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// th is thousands for an int.
func th(n int) string { return thousands(int64(n)) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// count is "1 file" / "1,204 files".
func count(n int, one, many string) string { return th(n) + " " + plural(n, one, many) }
