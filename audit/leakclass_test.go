package audit

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"gopkg.in/yaml.v3"

	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
)

// redactAs replaces the findings' spans as the builder does (merged,
// last first) with [REDACTED:<rule>].
func redactAs(content string, fs []pack.Finding) string {
	type sp struct {
		s, e int
		rule string
	}
	var spans []sp
	for _, f := range fs {
		spans = append(spans, sp{f.Start, f.End, f.RuleID})
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].s != spans[j].s {
			return spans[i].s < spans[j].s
		}
		return spans[i].e > spans[j].e
	})
	var merged []sp
	for _, s := range spans {
		if n := len(merged); n > 0 && s.s < merged[n-1].e {
			merged[n-1].e = max(merged[n-1].e, s.e)
			continue
		}
		merged = append(merged, s)
	}
	var b strings.Builder
	last := 0
	for _, s := range merged {
		b.WriteString(content[last:s.s])
		b.WriteString("[REDACTED:" + s.rule + "]")
		last = s.e
	}
	b.WriteString(content[last:])
	return b.String()
}

// parses reports a parse error of text as the file kind its path names
// (JSON, a notebook, YAML, TOML), nil for other kinds.
func parses(p, text string) error {
	switch path.Ext(p) {
	case ".json", ".ipynb":
		var v any
		return json.Unmarshal([]byte(text), &v)
	case ".yml", ".yaml":
		var v any
		return yaml.Unmarshal([]byte(text), &v)
	case ".toml":
		var v any
		return toml.Unmarshal([]byte(text), &v)
	}
	return nil
}

// leakCase plants secret at every "{S}" of content.
type leakCase struct {
	name, path, content, secret string
}

// checkCaught scans the case and checks every byte of every planted secret
// is inside a finding, that the redacted text scans clean, holds no part of
// the secret, and still parses as its kind.
func checkCaught(t *testing.T, s *Scanner, c leakCase) {
	t.Helper()
	content := strings.ReplaceAll(c.content, "{S}", c.secret)
	if err := parses(c.path, content); err != nil {
		t.Fatalf("fixture does not parse: %v\n%s", err, content)
	}
	fs, err := s.Scan(context.Background(), c.path, []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; ; {
		i := strings.Index(content[off:], c.secret)
		if i < 0 {
			break
		}
		at := off + i
		covered := make([]bool, len(c.secret))
		for _, f := range fs {
			for k := range covered {
				if f.Start <= at+k && at+k < f.End {
					covered[k] = true
				}
			}
		}
		for k, ok := range covered {
			if !ok {
				t.Fatalf("byte %d of the secret at line %d is not covered:%s\n%s", k, lineOf(content, at), describe(content, fs), content)
			}
		}
		off = at + len(c.secret)
	}
	for _, f := range fs {
		if f.StartLine < 1 || f.Fingerprint != fingerprint("", c.path, f.RuleID, f.StartLine) {
			t.Errorf("finding without a real line or its fingerprint: %+v", f)
		}
	}
	red := redactAs(content, fs)
	if strings.Contains(red, c.secret) || len(c.secret) >= 8 && strings.Contains(red, c.secret[len(c.secret)-6:]) {
		t.Errorf("redacted text still holds (the end of) the secret:\n%s", red)
	}
	if err := parses(c.path, red); err != nil {
		t.Errorf("redacted text no longer parses: %v\n%s", err, red)
	}
	again, err := s.Scan(context.Background(), c.path, []byte(red))
	if err != nil {
		t.Fatal(err)
	}
	if len(again) > 0 {
		t.Errorf("redacted text still has findings:%s\n%s", describe(red, again), red)
	}
}

// TestLeakClassEscapedStrings: secrets inside JSON-escaped strings (class 2
// of issue 13) are found in the decoded values and redacted in the raw
// text, whole escapes at a time, so the document still parses.
func TestLeakClassEscapedStrings(t *testing.T) {
	s := newDefaultScanner(t)
	g := secrettest.NewGen(71)
	pw := func() string { return g.Str(secrettest.Alnum, 14) + "!#" }
	f := secrettest.Make(71)
	cases := []leakCase{
		{"notebook code cell", "analysis.ipynb", `{
 "cells": [
  {
   "cell_type": "code",
   "metadata": {},
   "source": [
    "import psycopg2\n",
    "db_password = \"{S}\"\n",
    "conn = psycopg2.connect(host=\"db\", password=db_password)\n"
   ]
  }
 ],
 "nbformat": 4
}
`, pw()},
		{"notebook env magic", "notebooks/train.ipynb", `{"cells": [{"cell_type": "code", "source": ["%env WANDB_API_KEY={S}\n", "!export HF_TOKEN=\"{S}\"\n"]}], "nbformat": 4}
`, g.Str(secrettest.Alnum, 40)},
		{"notebook output with a token", "report.ipynb", `{"cells": [{"outputs": [{"text": ["{\"access_token\": \"{S}\", \"expires_in\": 3600}\n"]}]}]}
`, g.Str(secrettest.Alnum, 32)},
		{"json config command", "deploy/config.json", `{
  "steps": [
    {"run": "export DEPLOY_PASSWORD=\"{S}\" && ./deploy.sh"}
  ]
}
`, pw()},
		{"json escaped slash in value", "settings.json", `{"client_secret": "{S}"}
`, g.Str(secrettest.Alnum, 10) + `\/` + g.Str(secrettest.Alnum, 10)},
		{"yaml double-quoted json", "k8s/secret.yaml", `stringData:
  config.json: "{\"db\": {\"user\": \"app\", \"password\": \"{S}\"}}"
`, pw()},
		{"json pem with escaped newlines", "service.json", `{"type": "service_account", "private_key": "{S}"}
`, strings.ReplaceAll(f.RSAKey, "\n", `\n`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkCaught(t, s, c) })
	}
}

// TestLeakClassPasswordForms: password forms no key names (class 3):
// command-line options, scheme-less DSNs, login calls, keys in other
// languages, INI and properties files.
func TestLeakClassPasswordForms(t *testing.T) {
	s := newDefaultScanner(t)
	g := secrettest.NewGen(73)
	pw := func() string { return g.Str(secrettest.Alnum, 12) + "x9Q" }
	cases := []leakCase{
		{"docker login -p", "scripts/release.sh", "#!/bin/sh\ndocker login -u ci-bot -p {S} registry.internal.io\n", pw()},
		{"docker login in a workflow", ".github/workflows/push.yml", "jobs:\n  push:\n    steps:\n      - run: docker login -u ci -p {S} ghcr.io\n", pw()},
		{"podman login --password", "Makefile", "login:\n\tpodman login --username ci --password {S} quay.io\n", pw()},
		{"echo to --password-stdin", "ci/login.sh", "echo '{S}' | docker login -u ci --password-stdin registry.io\n", pw()},
		{"mysql -pX", "Makefile", "restore:\n\tmysql -uroot -p{S} orders < dump.sql\n", pw()},
		{"mysqldump in python argv", "backup.py", "subprocess.run([\"mysqldump\", \"-uroot\", \"-p{S}\", \"orders\"], check=True)\n", pw()},
		{"mysql in os.system", "tools/sync.py", "os.system(\"mysql -h db -u app -p{S} app < schema.sql\")\n", pw()},
		{"sshpass -p", "deploy.sh", "sshpass -p '{S}' ssh deploy@10.0.0.5 'systemctl restart app'\n", pw()},
		{"htpasswd -b", "Dockerfile", "FROM nginx:1.27\nRUN htpasswd -bc /etc/nginx/.htpasswd admin {S}\n", pw()},
		{"htpasswd -nb", "README.md", "Create the entry with `htpasswd -nbB admin {S}`.\n", pw()},
		{"redis-cli -a", "ops/flush.sh", "redis-cli -h cache -a {S} FLUSHALL\n", pw()},
		{"curl -u", "docs/api.md", "```\ncurl -u admin:{S} https://api.internal/v1/users\n```\n", pw()},
		{"openssl pass:", "certs/make.sh", "openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:{S}\n", pw()},
		{"keytool -storepass", "build.gradle.sh", "keytool -genkey -alias app -keystore app.jks -storepass {S}\n", pw()},
		{"generic --password=", "scripts/db.sh", "pg_restore --dbname=app --password={S} dump.sql\n", pw()},
		{"smbclient -U user%pass", "backup.sh", "smbclient //nas/backup -U svc%{S} -c 'put db.tar'\n", pw()},
		{"sqlplus user/pass@db", "db/run.sh", "sqlplus scott/{S}@orcl @migrate.sql\n", pw()},
		{"ldapsearch -w", "ldap.sh", "ldapsearch -x -D cn=admin,dc=corp -w {S} -b dc=corp\n", pw()},
		{"go mysql dsn", "internal/db/db.go", "package db\n\nconst dsn = \"orders:{S}@tcp(db.internal:3306)/orders?parseTime=true\"\n", pw()},
		{"go mysql dsn no protocol", "cmd/migrate/main.go", "package main\n\nvar dsn = \"root:{S}@/app\"\n", pw()},
		{"odbc braces", "appsettings.json", "{\"ConnectionStrings\": {\"Default\": \"Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=sa;Pwd={{S}};\"}}\n", pw()},
		{"jet oledb password", "app.config", "<add name=\"db\" connectionString=\"Provider=Microsoft.ACE.OLEDB.12.0;Jet OLEDB:Database Password={S};\" />\n", pw()},
		{"oracle jdbc", "src/main/resources/application.properties", "spring.datasource.url=jdbc:oracle:thin:scott/{S}@db.internal:1521:ORCL\n", pw()},
		{"requests auth tuple", "client.py", "resp = requests.get(url, auth=(\"svc-reports\", \"{S}\"))\n", pw()},
		{"smtp login", "mailer.py", "server.login(\"noreply@corp.io\", \"{S}\")\n", pw()},
		{"HTTPBasicAuth", "api.py", "session.auth = HTTPBasicAuth(user, '{S}')\n", pw()},
		{"SetBasicAuth", "client.go", "package c\n\nfunc f() { req.SetBasicAuth(\"svc\", \"{S}\") }\n", pw()},
		{"NetworkCredential", "Mailer.cs", "var cred = new NetworkCredential(\"svc\", \"{S}\");\n", pw()},
		{"mot_de_passe", "config.py", "mot_de_passe = \"{S}\"\n", pw()},
		{"contraseña yaml", "config/es.yaml", "base_de_datos:\n  usuario: app\n  contraseña: {S}\n", pw()},
		{"passwort properties", "app.properties", "db.benutzer=app\ndb.passwort={S}\n", pw()},
		{"senha python", "settings.py", "SENHA = '{S}'\n", pw()},
		{"пароль yaml", "config/ru.yml", "пароль: \"{S}\"\n", pw()},
		{"kennwort ini", "setup.ini", "[Datenbank]\nKennwort = {S}\n", pw()},
		{"密码 yaml", "config/zh.yaml", "数据库:\n  密码: {S}\n", pw()},
		{"ini section", "conf/app.ini", "[database]\nhost = db\nuser = app\npassword = {S}\n", pw()},
		{"ini quoted", "php.ini", "[mail]\nsmtp_password = \"{S}\"\n", pw()},
		{"properties space separator", "conf/db.properties", "db.user app\ndb.password {S}\n", pw()},
		{"properties colon", "jdbc.properties", "jdbc.password: {S}\n", pw()},
		{"npmrc _auth", "tools/npmrc.txt", "registry=https://npm.corp.io/\n_auth={S}\n", base64.StdEncoding.EncodeToString([]byte("ci:" + pw()))},
		{"toml", "config.toml", "[database]\nuser = \"app\"\npassword = \"{S}\"\n", pw()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkCaught(t, s, c) })
	}
}

// TestLeakClassPlaceholders: values the placeholder heuristics took for
// examples (class 4) are credentials.
func TestLeakClassPlaceholders(t *testing.T) {
	s := newDefaultScanner(t)
	cases := []leakCase{
		{"value holds its key", "web.config", "<add key=\"AdminPassword\" value=\"{S}\" />\n", "AdminPassword123"},
		{"value holds its key env", ".env.production", "AdminPassword={S}\n", "AdminPassword123"},
		{"camel my prefix", "config.yaml", "db_password: {S}\n", "myS3cretPwd"},
		{"camel my prefix letters only", "settings.py", "DB_PASSWORD = \"{S}\"\n", "mySecretPwd"},
		{"ends with Pwd", "app.ini", "[db]\npwd = {S}\n", "Winter2024Pwd"},
		{"contains http", "config.yml", "proxy_password: {S}\n", "http2Proxy!Pass"},
		{"admin stop word", "conf/app.toml", "admin_password = \"{S}\"\n", "Admin!2024pw"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkCaught(t, s, c) })
	}
}

// TestNoFalsePositives: checksums, workflow expressions and permissions,
// package versions, struct tags and references are not secrets.
func TestNoFalsePositives(t *testing.T) {
	s := newDefaultScanner(t)
	g := secrettest.NewGen(79)
	// Digests of generated text: random bytes, as real ones are.
	h1 := func() string {
		d := sha256.Sum256([]byte(g.Str(secrettest.Alnum, 32)))
		return base64.StdEncoding.EncodeToString(d[:])
	}
	sri := func() string {
		d := sha512.Sum512([]byte(g.Str(secrettest.Alnum, 32)))
		return base64.StdEncoding.EncodeToString(d[:])
	}
	hex64 := func() string {
		d := sha256.Sum256([]byte(g.Str(secrettest.Alnum, 32)))
		return hex.EncodeToString(d[:])
	}
	cases := []struct{ name, path, content string }{
		{"go.sum", "go.sum", "github.com/aws/aws-sdk-go-v2/credentials v1.17.41 h1:" + h1() + "\n" +
			"github.com/aws/aws-sdk-go-v2/credentials v1.17.41/go.mod h1:" + h1() + "\n" +
			"github.com/golang-jwt/jwt/v5 v5.2.1 h1:" + h1() + "\n" +
			"golang.org/x/oauth2 v0.23.0 h1:" + h1() + "\n"},
		{"go.mod", "go.mod", "module example.com/app\n\ngo 1.23\n\nrequire (\n\tgithub.com/aws/aws-sdk-go-v2/credentials v1.17.41\n\tgolang.org/x/oauth2 v0.23.0\n)\n"},
		{"package-lock", "package-lock.json", `{
  "packages": {
    "node_modules/@auth0/auth0-spa-js": {
      "version": "2.1.3",
      "resolved": "https://registry.npmjs.org/@auth0/auth0-spa-js/-/auth0-spa-js-2.1.3.tgz",
      "integrity": "sha512-` + sri() + `"
    },
    "node_modules/js-tokens": {"version": "4.0.0", "integrity": "sha512-` + sri() + `"}
  }
}
`},
		{"yarn.lock", "yarn.lock", "\"@octokit/auth-token@^4.0.0\":\n  version \"4.0.0\"\n  integrity sha512-" + sri() + "\n"},
		{"poetry.lock", "poetry.lock", "files = [\n    {file = \"auth_token-1.0-py3-none-any.whl\", hash = \"sha256:" + hex64() + "\"},\n]\n"},
		{"Pipfile.lock", "Pipfile.lock", "{\"default\": {\"secret-handshake\": {\"hashes\": [\"sha256:" + hex64() + "\"], \"version\": \"==1.0.1\"}}}\n"},
		{"image digest", "k8s/deploy.yaml", "image: ghcr.io/org/token-service@sha256:" + hex64() + "\n"},
		{"workflow permissions", ".github/workflows/release.yml", "permissions:\n  id-token: write\n  contents: read\n  pull-requests: write\n"},
		{"workflow expressions", ".github/workflows/ci.yml", `jobs:
  build:
    steps:
      - uses: docker/login-action@v3
        with:
          password: ${{ secrets.REGISTRY_PASSWORD }}
          token: ${{ secrets.GITHUB_TOKEN }}
      - run: docker login -u ${{ github.actor }} -p ${{ secrets.GITHUB_TOKEN }} ghcr.io
      - run: echo "${{ secrets.DEPLOY_TOKEN }}" | docker login --password-stdin -u ci ghcr.io
      - run: git clone https://x-access-token:${{ secrets.GH_PAT }}@github.com/org/repo.git
`},
		{"package versions", "package.json", `{
  "dependencies": {
    "pbkdf2-password": "^1.2.1",
    "passport-token": "~0.3.0",
    "secret-handshake": "1.1.21",
    "@types/passport-http-bearer": ">=1.0.37 <2",
    "api-key-auth": "latest"
  }
}
`},
		{"struct tags", "api/types.go", "package api\n\ntype Creds struct {\n\tToken string `json:\"token,omitempty\"`\n\tAPIKey string `yaml:\"api_key,omitempty\" json:\"api_key,omitempty\"`\n\tRefreshToken string `json:\"refresh_token,omitzero\"`\n}\n"},
		{"changelog struct tag", "CHANGELOG.md", "* [CHANGE] API: list rules field \"groupNextToken:omitempty\" renamed to \"groupNextToken\". #15400\n"},
		{"cli references", "scripts/db.sh", "mysql -uroot -p$MYSQL_ROOT_PASSWORD app\nmysql -u root -p app\nsshpass -p \"${SSH_PASS}\" ssh host\ncurl -u \"$USER:$TOKEN\" https://x\ndocker login -p \"$REGISTRY_TOKEN\" r.io\nhtpasswd -b .htpasswd admin \"$ADMIN_PW\"\n"},
		{"cli in go identifiers", "run.go", "package run\n\nfunc f() { exec.Command(\"mysql\", \"-u\", user, \"-p\"+pw) }\n"},
		{"login with identifiers", "auth.py", "def sign_in(self):\n    return self.client.login(username, password)\n"},
		{"dsn printf", "db.go", "package db\n\nvar f = fmt.Sprintf(\"%s:%s@tcp(%s)/%s\", u, p, h, d)\n"},
		{"repeated placeholder", "cfg.yml", "secret_key: 11111111-1111-1111-1111-111111111111\nbearer_token: 1234\n"},
		{"email is not a dsn", "AUTHORS.md", "Jane Roe <jane@example.org>, git@github.com:org/repo.git\n"},
		{"prose about passwords", "docs/setup.md", "Run `mysql -u root -p` and type the password when asked.\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, err := s.Scan(context.Background(), c.path, []byte(c.content))
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) > 0 {
				t.Errorf("false positives:%s", describe(c.content, fs))
			}
		})
	}
}

// TestNoFalsePositivesNamesAndPhrases: what real repositories hold under
// credential keys that is no credential — Kubernetes secret names, URN
// references, values naming their key, phrases of placeholder words,
// message labels, diff headers' blob ids.
func TestNoFalsePositivesNamesAndPhrases(t *testing.T) {
	s := newDefaultScanner(t)
	cases := []struct{ name, path, content string }{
		{"k8s secret names", "deploy/ingress.yaml", "spec:\n  tls:\n    secret: traefik-dashboard-auth-secret\n    certSecret: tlssecret\n  auth:\n    secret: default/basic-auth\n  ca:\n    - secret: root-ca5\n  secretName: redis-credentials\n"},
		{"annotation", "ingress.yml", "metadata:\n  annotations:\n    nginx.ingress.kubernetes.io/auth-secret: \"default/ca-secret\"\n"},
		{"urn references", "docs/jwt.md", "```yaml\nca: \"urn:k8s:secret:tls:ca\"\nbindPassword: \"urn:k8s:secret:my-secret:bindpassword\"\npassword: urn:k8s:secret:redis:password\n```\n"},
		{"value names its key", "redactor_test.go", "package r\n\nvar c = Config{SecretAccessKey: \"AwsSecretAccessKey\"}\n"},
		{"placeholder phrases", "docs/redis.md", "password: \"secure-password\"\n\"X-Secret\": \"secret-value\"\nsecret: this_is_the_very_deep_secret\n"},
		{"message label", "docs/faq.md", "[example.com] acme: error presenting token: gandiv5: unexpected authZone\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, err := s.Scan(context.Background(), c.path, []byte(c.content))
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) > 0 {
				t.Errorf("false positives:%s", describe(c.content, fs))
			}
		})
	}
	// A password under a secret key is still one.
	for _, v := range []string{"hunter2xyz", "s3cr3tvalue", "Xk9-pQ2-wZ7"} {
		content := "secret: " + v + "\n"
		if fs, _ := s.Scan(context.Background(), "app.yaml", []byte(content)); len(fs) == 0 {
			t.Errorf("%q under secret: not found", v)
		}
	}
}
