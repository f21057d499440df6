package leakcorpus

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Character sets of generated values.
const (
	upper    = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower    = "abcdefghijklmnopqrstuvwxyz"
	digits   = "0123456789"
	alnum    = upper + lower + digits
	lowerNum = lower + digits
	hexChars = "0123456789abcdef"
	b64      = alnum + "+/"
	b64url   = alnum + "-_"
	aws27    = upper + "234567"
	symbols  = "!#%*+-.=?^_~"
)

// gen draws the corpus's values from a seeded generator: the same seed
// gives the same corpus, and no value is a real credential (none was ever
// issued; none ends in EXAMPLE, which gitleaks allowlists).
type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, seed^0x5eed))} }

func (g *gen) str(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// password is a password a person would pick for a service: letters, digits
// and a symbol or two, 12 to 18 characters.
func (g *gen) password() string {
	n := 10 + g.r.IntN(7)
	return g.str(upper, 1) + g.str(lower+digits, n) + g.str(symbols, 1) + g.str(digits, 1)
}

// token is a value with its fixed prefix: constant is how many leading
// bytes every value of its kind shares (not probed for leaks).
type token struct {
	value    string
	constant int
	provider string
}

func tk(provider, prefix, rest string) token {
	return token{value: prefix + rest, constant: len(prefix), provider: provider}
}

// providers are generators of the usual providers' credentials, in the
// shapes their issuers use (and gitleaks' rules describe).
func (g *gen) providers() []func() token {
	return []func() token{
		func() token { return tk("aws-access-key-id", "AKIA", g.str(aws27, 16)) },
		func() token { return tk("github-pat", "ghp_", g.str(alnum, 36)) },
		func() token { return tk("github-fine-grained", "github_pat_", g.str(alnum, 22)+"_"+g.str(alnum, 59)) },
		func() token { return tk("gitlab-pat", "glpat-", g.str(alnum+"-_", 20)) },
		func() token {
			return tk("slack-bot", "xoxb-", g.str(digits, 12)+"-"+g.str(digits, 13)+"-"+g.str(alnum, 24))
		},
		func() token {
			return tk("slack-webhook", "https://hooks.slack.com/services/", "T"+g.str(upper+digits, 10)+"/B"+g.str(upper+digits, 10)+"/"+g.str(alnum, 24))
		},
		func() token { return tk("stripe", "sk_live_", g.str(alnum, 99)[:24+g.r.IntN(40)]) },
		func() token { return tk("stripe-restricted", "rk_live_", g.str(alnum, 34)) },
		func() token { return tk("google-api-key", "AIza", g.str(alnum+"-_", 35)) },
		func() token { return tk("sendgrid", "SG.", g.str(alnum+"-_", 22)+"."+g.str(alnum+"-_", 43)) },
		func() token { return tk("twilio", "SK", g.str(hexChars, 32)) },
		func() token {
			return tk("openai", "sk-proj-", g.str(alnum+"-_", 74)+"T3BlbkFJ"+g.str(alnum+"-_", 74))
		},
		func() token { return tk("anthropic", "sk-ant-api03-", g.str(alnum+"-_", 93)+"AA") },
		func() token { return tk("npm", "npm_", g.str(alnum, 36)) },
		func() token { return tk("pypi", "pypi-AgEIcHlwaS5vcmc", g.str(b64url, 70)) },
		func() token { return tk("digitalocean", "dop_v1_", g.str(hexChars, 64)) },
		func() token { return tk("shopify", "shpat_", g.str(hexChars, 32)) },
		func() token { return tk("heroku", "HRKU-AA", g.str(alnum+"-_", 58)) },
		func() token { return tk("vault", "hvs.", g.str(alnum+"-_", 95)) },
		func() token { return tk("doppler", "dp.pt.", g.str(alnum, 43)) },
		func() token { return tk("huggingface", "hf_", g.str(upper+lower, 34)) },
		func() token { return tk("linear", "lin_api_", g.str(alnum, 40)) },
		func() token { return tk("postman", "PMAK-", g.str(hexChars, 24)+"-"+g.str(hexChars, 34)) },
		func() token { return tk("grafana", "glsa_", g.str(alnum, 32)+"_"+g.str(hexChars, 8)) },
		func() token { return tk("sentry", "sntryu_", g.str(hexChars, 64)) },
		func() token { return tk("databricks", "dapi", g.str(hexChars, 32)) },
		func() token { return tk("square", "EAAA", g.str(alnum+"-_", 60)) },
		func() token { return tk("dynatrace", "dt0c01.", g.str(upper+digits, 24)+"."+g.str(upper+digits, 64)) },
		func() token { return tk("jwt", "eyJ", g.jwt()[3:]) },
	}
}

func (g *gen) jwt() string {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	head := enc(`{"alg":"HS256","typ":"JWT"}`)
	body := enc(fmt.Sprintf(`{"sub":"%s","name":"%s","iat":%d}`, g.str(digits, 10), g.pick("Ana Lima", "Jon Park", "Ines Roy"), 1700000000+g.r.IntN(9e7)))
	return head + "." + body + "." + g.str(b64url, 43)
}

// awsSecret is an AWS secret access key (40 base64 characters).
func (g *gen) awsSecret() string { return g.str(b64, 40) }

// pem is a private key block of the given kind with body lines of random
// base64 (the part probed for leaks).
func (g *gen) pem(kind string) (string, []string) {
	var b strings.Builder
	var body []string
	b.WriteString("-----BEGIN " + kind + " PRIVATE KEY-----\n")
	for i := 0; i < 8; i++ {
		l := g.str(b64, 64)
		body = append(body, l)
		b.WriteString(l + "\n")
	}
	l := g.str(b64, 40) + "=="
	body = append(body, l)
	b.WriteString(l + "\n-----END " + kind + " PRIVATE KEY-----")
	return b.String(), body
}

// serviceAccount is a GCP service account key file.
func (g *gen) serviceAccount() (string, []string) {
	key, body := g.pem("")
	key = strings.Replace(key, "BEGIN  PRIVATE", "BEGIN PRIVATE", 1)
	key = strings.Replace(key, "END  PRIVATE", "END PRIVATE", 1)
	project := g.pick("billing-prod", "orders-eu", "ml-train") + "-" + g.str(digits, 6)
	doc := map[string]string{
		"type":                        "service_account",
		"project_id":                  project,
		"private_key_id":              g.str(hexChars, 40),
		"private_key":                 key + "\n",
		"client_email":                "deployer@" + project + ".iam.gserviceaccount.com",
		"client_id":                   g.str(digits, 21),
		"auth_uri":                    "https://accounts.google.com/o/oauth2/auth",
		"token_uri":                   "https://oauth2.googleapis.com/token",
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return string(b) + "\n", body
}
