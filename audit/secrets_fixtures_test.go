package audit

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Fake secrets for tests. They are built at test time from a fixed seed so
// that they look like real credentials to gitleaks' rules (which allowlist
// documentation values such as AKIA…EXAMPLE) but never were real ones.

const (
	alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper2_7 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	digits   = "0123456789"
	b64chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)

type fakeGen struct{ r *rand.Rand }

func newFakeGen(seed uint64) *fakeGen {
	return &fakeGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (g *fakeGen) str(charset string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = charset[g.r.IntN(len(charset))]
	}
	return string(b)
}

type fakeSecrets struct {
	AWSKeyID, AWSSecret, GitHub, Slack, Stripe, JWT, APIKey, DBPassword string
	RSAKey, OpenSSHKey                                                  string
}

func makeFakeSecrets(seed uint64) fakeSecrets {
	g := newFakeGen(seed)
	b64url := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	pem := func(kind string, lines int) string {
		var b strings.Builder
		b.WriteString("-----BEGIN " + kind + " PRIVATE KEY-----\n")
		for i := 0; i < lines; i++ {
			b.WriteString(g.str(b64chars, 64) + "\n")
		}
		b.WriteString(g.str(b64chars, 20) + "==\n")
		b.WriteString("-----END " + kind + " PRIVATE KEY-----")
		return b.String()
	}
	return fakeSecrets{
		AWSKeyID:   "AKIA" + g.str(upper2_7, 16),
		AWSSecret:  g.str(b64chars, 40),
		GitHub:     "ghp_" + g.str(alnum, 36),
		Slack:      "xoxb-" + g.str(digits, 12) + "-" + g.str(digits, 13) + "-" + g.str(alnum, 24),
		Stripe:     "sk_live_" + g.str(alnum, 24),
		JWT:        b64url(`{"alg":"HS256","typ":"JWT"}`) + "." + b64url(`{"sub":"`+g.str(digits, 10)+`","name":"Jane Roe","iat":1716239022}`) + "." + g.str(alnum+"-_", 43),
		APIKey:     g.str(alnum, 32),
		DBPassword: g.str(alnum, 14),
		RSAKey:     pem("RSA", 12),
		OpenSSHKey: pem("OPENSSH", 6),
	}
}
