// Package secrettest builds fake secrets for tests. They are made at test
// time from a fixed seed so that they look like real credentials to gitleaks'
// rules (which allowlist documentation values such as AKIA…EXAMPLE) but never
// were real ones, and no secret-shaped literal sits in the repository.
package secrettest

import (
	"crypto/sha256"
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"sync"
)

// Character sets of the generated values.
const (
	Alnum    = alnum
	alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper2_7 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	digits   = "0123456789"
	b64chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)

// Gen makes pseudo-random strings from a seed.
type Gen struct{ r *rand.Rand }

// NewGen starts a generator.
func NewGen(seed uint64) *Gen {
	return &Gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Str is n characters drawn from charset.
func (g *Gen) Str(charset string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = charset[g.r.IntN(len(charset))]
	}
	return string(b)
}

// Fake is one set of fake secrets of ten kinds.
type Fake struct {
	AWSKeyID, AWSSecret, GitHub, Slack, Stripe, JWT, APIKey, DBPassword string
	RSAKey, OpenSSHKey                                                  string
}

// Make builds the fake secrets of a seed; the same seed gives the same values.
func Make(seed uint64) Fake {
	g := NewGen(seed)
	b64url := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	pem := func(kind string, lines int) string {
		var b strings.Builder
		b.WriteString("-----BEGIN " + kind + " PRIVATE KEY-----\n")
		for i := 0; i < lines; i++ {
			b.WriteString(g.Str(b64chars, 64) + "\n")
		}
		b.WriteString(g.Str(b64chars, 20) + "==\n")
		b.WriteString("-----END " + kind + " PRIVATE KEY-----")
		return b.String()
	}
	return Fake{
		AWSKeyID:   "AKIA" + g.Str(upper2_7, 16),
		AWSSecret:  g.Str(b64chars, 40),
		GitHub:     "ghp_" + g.Str(alnum, 36),
		Slack:      "xoxb-" + g.Str(digits, 12) + "-" + g.Str(digits, 13) + "-" + g.Str(alnum, 24),
		Stripe:     "sk_live_" + g.Str(alnum, 24),
		JWT:        b64url(`{"alg":"HS256","typ":"JWT"}`) + "." + b64url(`{"sub":"`+g.Str(digits, 10)+`","name":"Jane Roe","iat":1716239022}`) + "." + g.Str(alnum+"-_", 43),
		APIKey:     g.Str(alnum, 32),
		DBPassword: g.Str(alnum, 14),
		RSAKey:     pem("RSA", 12),
		OpenSSHKey: pem("OPENSSH", 6),
	}
}

// Digests records, for a test double of a scanner that is handed digests
// (pack.SumScanner), each path it was handed one for and each path whose
// digest was not the sha256 of its content. The zero Digests is ready.
type Digests struct {
	mu            sync.Mutex
	Summed, Wrong map[string]bool
}

// Note records that content at path was handed with sum.
func (d *Digests) Note(path string, content []byte, sum [32]byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.Summed == nil {
		d.Summed, d.Wrong = map[string]bool{}, map[string]bool{}
	}
	d.Summed[path] = true
	if sum != sha256.Sum256(content) {
		d.Wrong[path] = true
	}
}
