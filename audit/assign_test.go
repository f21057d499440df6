package audit

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestFindAssignmentsPositive(t *testing.T) {
	tests := []struct {
		name, path, content string
		want                []string // values, in order
		rule                string   // default RulePasswordAssignment
	}{
		{"ini", "conf/app.ini", "[db]\nhost = db.internal\npassword = S3cr3tPassw0rd!\n", []string{"S3cr3tPassw0rd!"}, ""},
		{"ini inline comment", "conf/app.cfg", "passwd = Qm9v2Lx7 ; set by ops\n", []string{"Qm9v2Lx7"}, ""},
		{"properties", "src/main/resources/application.properties", "spring.datasource.url=jdbc:mysql://db/app\nspring.datasource.password=Tr0ub4dor&3x\n", []string{"Tr0ub4dor&3x"}, ""},
		{"properties colon", "conf/db.properties", "db.pwd:Kx8qP2wz\n", []string{"Kx8qP2wz"}, ""},
		{"dotenv", ".env.production", "DB_HOST=db\nDB_PASSWORD=hunter2x9Q\nSTRIPE_API_KEY=rk9Vd2Lq7Wm3\n", []string{"hunter2x9Q", "rk9Vd2Lq7Wm3"}, ""},
		{"dotenv quoted", ".env", "AUTH_TOKEN=\"q7Lm2Vx9Rt\"\n", []string{"q7Lm2Vx9Rt"}, ""},
		{"shell export", "scripts/deploy.sh", "#!/bin/sh\nexport PASSWORD=sh3llPw9 && ./run\n", []string{"sh3llPw9"}, ""},
		{"shell two on a line", "scripts/run.sh", "env USER=deploy PASS=Zt6wQ1mP ./migrate\n", []string{"Zt6wQ1mP"}, ""},
		{"yaml", "deploy/values.yaml", "db:\n  user: app\n  password: pa55w0rdQ7\n", []string{"pa55w0rdQ7"}, ""},
		{"yaml quoted", "config/oauth.yml", "client_secret: \"x7Gq2mZ9kLp4\"\nclient_id: web\n", []string{"x7Gq2mZ9kLp4"}, ""},
		{"yaml single quoted", "config/mail.yml", "smtp_pass: 'M4ilPw!77'\n", []string{"M4ilPw!77"}, ""},
		{"yaml list env", "docker-compose.yml", "    environment:\n      - POSTGRES_PASSWORD=composePw1\n", []string{"composePw1"}, ""},
		{"json", "config/settings.json", "{\n  \"apiKey\": \"k3yV4lu3Z8q\",\n  \"region\": \"eu\"\n}\n", []string{"k3yV4lu3Z8q"}, ""},
		{"json minified", "config/creds.json", `{"user":"svc","password":"m1n1f13dPw","host":"db"}` + "\n", []string{"m1n1f13dPw"}, ""},
		{"xml element", "conf/settings.xml", "<server>\n  <id>repo</id>\n  <password>Xy7!pQ2z</password>\n</server>\n", []string{"Xy7!pQ2z"}, ""},
		{"xml attribute", "conf/context.xml", `<Resource name="jdbc/app" username="app" password="Xy7pQ2zW" />` + "\n", []string{"Xy7pQ2zW"}, ""},
		{"xml add key value", "Web.config", `<add key="DbPassword" value="Xy7pQ2zW9" />` + "\n", []string{"Xy7pQ2zW9"}, ""},
		{"spring xml property", "beans.xml", `<property name="password" value="spr1ngPw8"/>` + "\n", []string{"spr1ngPw8"}, ""},
		{"php define", "wp-config.php", "define( 'DB_PASSWORD', 'wpP4ssw0rd9' );\n", []string{"wpP4ssw0rd9"}, ""},
		{"php array", "config/database.php", "    'password' => 'l4r4v3lPw',\n", []string{"l4r4v3lPw"}, ""},
		{"php variable", "lib/db.php", "$password = 'phpS3cret1';\n", []string{"phpS3cret1"}, ""},
		{"php array index", "lib/cfg.php", "$cfg['Servers'][$i]['password'] = 'pmaPw1234';\n", []string{"pmaPw1234"}, ""},
		{"go short var", "cmd/app/main.go", "func main() {\n\tpassword := \"g0Passw0rd\"\n}\n", []string{"g0Passw0rd"}, ""},
		{"go const", "internal/cfg/cfg.go", "const apiKey = \"k3y12345abc\"\n", []string{"k3y12345abc"}, ""},
		{"go typed var", "internal/cfg/db.go", "var dbPassword string = \"typedPw123\"\n", []string{"typedPw123"}, ""},
		{"go map literal", "internal/cfg/env.go", "var env = map[string]string{\"ACCESS_KEY\": \"mApL1t3ral\"}\n", []string{"mApL1t3ral"}, ""},
		{"python", "app/settings.py", "SECRET_KEY = 'dj4ng0-s3cr3t-k3y-value'\n", []string{"dj4ng0-s3cr3t-k3y-value"}, ""},
		{"python kwarg", "app/db.py", "conn = psycopg2.connect(user=\"app\", password=\"kwArgPw77\")\n", []string{"kwArgPw77"}, ""},
		{"python annotated", "app/cfg.py", "    secret_key: str = \"annotated99\"\n", []string{"annotated99"}, ""},
		{"python dict", "app/cfg.py", "CREDS = {'private_key': 'pK3yMat3r1al'}\n", []string{"pK3yMat3r1al"}, ""},
		{"js object", "src/config.ts", "export const config = { token: \"tsT0ken9876\", retries: 3 };\n", []string{"tsT0ken9876"}, ""},
		{"js camelCase", "src/db.js", "const dbPassword = 'camelPw99';\n", []string{"camelPw99"}, ""},
		{"java", "src/main/java/App.java", "    private static final String AUTH_TOKEN = \"j4v4T0k3n\";\n", []string{"j4v4T0k3n"}, ""},
		{"csharp verbatim", "src/App.cs", "var apikey = @\"csh4rpK3y\";\n", []string{"csh4rpK3y"}, ""},
		{"toml", "config.toml", "[auth]\ntoken = \"t0mlT0k3n\"\n", []string{"t0mlT0k3n"}, ""},
		{"dockerfile env", "Dockerfile", "FROM alpine\nENV DB_PASSWORD dockerPw77\n", []string{"dockerPw77"}, ""},
		{"connection string", "appsettings.json", "  \"Default\": \"Server=db;Database=app;User Id=sa;Password=C0nnStr1ng;\"\n", []string{"C0nnStr1ng"}, ""},
		{"query param", "app/client.py", "URL = \"https://api.internal/v1/items?api_key=q9Wm2Xr7Lp&page=2\"\n", []string{"q9Wm2Xr7Lp"}, ""},
		{"aws secret", ".aws/credentials.txt", "aws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCYz8Qk2Lm4Np0v\n", []string{"wJalrXUtnFEMIK7MDENGbPxRfiCYz8Qk2Lm4Np0v"}, ""},
		{"url userinfo", "config/db.yml", "url: postgres://app:Zq8vR2mW9xLp@db.internal:5432/orders\n", []string{"Zq8vR2mW9xLp"}, RulePasswordInURL},
		{"url in source", "src/db.go", "dsn := \"mysql://root:r00tPw55@tcp(db:3306)/app\"\n", []string{"r00tPw55"}, RulePasswordInURL},
		{"url empty user", "conf/redis.conf", "cache redis://:r3d1sPass@cache:6379/0\n", []string{"r3d1sPass"}, RulePasswordInURL},
		{"markdown doc", "docs/setup.md", "Set `PGPASSWORD=d0cPw1234` before running.\n", []string{"d0cPw1234"}, ""},
		{"crlf", "conf/app.ini", "user=app\r\npassword=Cr1fPw99\r\n", []string{"Cr1fPw99"}, ""},
		{"npmrc", ".npmrc", "//registry.npmjs.org/:_authToken=npmT0k3n1234\n", []string{"npmT0k3n1234"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := tt.rule
			if rule == "" {
				rule = RulePasswordAssignment
			}
			got := FindAssignments(tt.path, []byte(tt.content))
			var vals []string
			for _, f := range got {
				vals = append(vals, tt.content[f.Start:f.End])
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d findings %q, want %q", len(got), vals, tt.want)
			}
			for i, f := range got {
				if vals[i] != tt.want[i] {
					t.Errorf("finding %d value %q, want %q", i, vals[i], tt.want[i])
				}
				if f.RuleID != rule {
					t.Errorf("finding %d rule %q, want %q", i, f.RuleID, rule)
				}
				wantLine := strings.Count(tt.content[:f.Start], "\n") + 1
				if f.StartLine != wantLine || f.EndLine != wantLine {
					t.Errorf("finding %d lines %d-%d, want %d", i, f.StartLine, f.EndLine, wantLine)
				}
				if fp := tt.path + ":" + rule + ":" + itoa(wantLine); f.Fingerprint != fp {
					t.Errorf("fingerprint %q, want %q", f.Fingerprint, fp)
				}
				if f.Path != tt.path {
					t.Errorf("path %q", f.Path)
				}
			}
		})
	}
}

func TestFindAssignmentsNegative(t *testing.T) {
	tests := []struct{ name, path, content string }{
		{"env reference", ".env", "DB_PASSWORD=${DB_PASSWORD}\n"},
		{"lookup table echoing the key", "sensitive.go", "\t\".htpasswd\":        \"htpasswd\",\n"},
		{"constant naming itself", "read.go", "\tReadInvalidPageToken = \"invalid_page_token\"\n"},
		{"shell var", "run.sh", "PASSWORD=$DB_PASSWORD\n"},
		{"shell quoted var", "run.sh", "export PASSWORD=\"$DB_PASSWORD\"\n"},
		{"command substitution", "run.sh", "PASSWORD=$(cat /run/secrets/db)\n"},
		{"python format", "conf/app.ini", "password = %(pw)s\n"},
		{"helm template", "chart/values.yaml", "password: {{ .Values.pw }}\n"},
		{"helm template quoted", "chart/templates/secret.yaml", "  password: \"{{ .Values.db.password }}\"\n"},
		{"gha secret", ".github/workflows/ci.yml", "        token: ${{ secrets.GITHUB_TOKEN }}\n"},
		{"maven property", "pom.xml", "<password>${db.password}</password>\n"},
		{"angle placeholder", "config.yaml", "password: <password>\n"},
		{"angle placeholder json", "config.json", "{\"password\": \"<your-password>\"}\n"},
		{"windows env", "deploy.bat", "set PASSWORD=%DB_PASSWORD%\n"},
		{"go getenv", "main.go", "token := os.Getenv(\"TOKEN\")\n"},
		{"go getenv var", "main.go", "var token = os.Getenv(\"TOKEN\")\n"},
		{"node env", "index.js", "const token = process.env.TOKEN;\n"},
		{"ruby env", "config/app.rb", "password = ENV['X']\n"},
		{"laravel env", "config/database.php", "'password' => env('DB_PASSWORD'),\n"},
		{"go parameter", "auth.go", "func login(user, password string) error {\n"},
		{"ts annotation", "types.ts", "interface Login { password: string; token?: string }\n"},
		{"python none", "cfg.py", "password = None\n"},
		{"yaml null", "cfg.yaml", "password: null\n"},
		{"ruby nil", "cfg.rb", "password = nil\n"},
		{"bool true", "cfg.toml", "password = true\n"},
		{"bool false yaml", "cfg.yaml", "token: false\n"},
		{"changeme", ".env", "PASSWORD=changeme\n"},
		{"xxx", "cfg.py", "password = \"xxx\"\n"},
		{"mask", "cfg.yaml", "password: \"****\"\n"},
		{"mask partial", "cfg.yaml", "api_key: sk_****_1234abcd\n"},
		{"your password here", "cfg.py", "password = \"your-password-here\"\n"},
		{"example", "cfg.yaml", "api_key: example\n"},
		{"example suffix", "cfg.yaml", "aws_access_key: AKIAIOSFODNN7EXAMPLE\n"},
		{"replace me", "cfg.py", "API_KEY = \"REPLACE_ME\"\n"},
		{"keyword as value", "cfg.py", "password = \"secret\"\n"},
		{"keyword label", "locales/en.yml", "  password: Password\n"},
		{"empty", ".env", "PASSWORD=\n"},
		{"empty quoted", "cfg.yaml", "password: \"\"\n"},
		{"identifier in source", "app.py", "password = get_password()\n"},
		{"attribute in source", "app.py", "token = config.token\n"},
		{"identifier in go", "main.go", "cfg.APIKey = apiKeyFromVault\n"},
		{"comparison", "auth.go", "if password == \"admin1234\" {\n"},
		{"strict comparison", "auth.js", "if (token === \"abcd1234\") {\n"},
		{"not a credential key", "cfg.py", "password_hash = \"pbkdf2$abc$def\"\n"},
		{"bypass", "cfg.py", "bypass = \"enabled1\"\n"},
		{"compass", "cfg.yaml", "compass: northwest\n"},
		{"token type", "cfg.yaml", "token_type: bearer\n"},
		{"prose", "cfg.yaml", "password: Enter your password\n"},
		{"prose quoted", "locales/en.json", "\"forgot_password\": \"Forgot your password?\",\n"},
		{"path", "run.sh", "pwd=/usr/local/bin\n"},
		{"ansible vault", "group_vars/all.yml", "db_password: !vault |\n"},
		{"sops", "secrets.enc.yaml", "api_token: ENC[AES256_GCM,data:Zm9v,iv:YmFy,type:str]\n"},
		{"yaml alias", "cfg.yaml", "password: *default_pw\n"},
		{"printf url", "db.go", "dsn := fmt.Sprintf(\"postgres://%s:%s@%s/%s\", u, p, h, d)\n"},
		{"url ref", ".env", "DATABASE_URL=postgres://app:${PG_PASS}@db:5432/app\n"},
		{"url angle", "README.md", "mongodb+srv://admin:<password>@cluster0.mongodb.net/test\n"},
		{"url placeholder word", "README.md", "postgres://user:password@localhost/db\n"},
		{"gitleaks allow", "cfg.py", "password = \"hunter2xyz\"  # gitleaks:allow\n"},
		{"short", "cfg.ini", "pass = abc\n"},
		{"f-string", "cfg.py", "token = f\"{prefix}-{suffix}\"\n"},
		{"template literal", "cfg.js", "const token = `${a}${b}`;\n"},
		{"brace format", "cfg.py", "password = \"{password}\"\n"},
		{"printf verb", "cfg.go", "password = \"%s\"\n"},
		{"secret name k8s", "k8s/deploy.yaml", "  secretName: db-credentials\n  secret:\n"},
		{"password file", ".env", "DB_PASSWORD_FILE=/run/secrets/db\n"},
		{"connection string ref", "appsettings.json", "\"Default\": \"Server=db;Password=${DB_PW};\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FindAssignments(tt.path, []byte(tt.content))
			for _, f := range got {
				t.Errorf("unexpected %s finding %q at line %d", f.RuleID, tt.content[f.Start:f.End], f.StartLine)
			}
		})
	}
}

func TestKeyIsCredential(t *testing.T) {
	yes := []string{"password", "PASSWORD", "DB_PASSWORD", "dbPassword", "DBPassword", "db.password",
		"db-passwd", "pwd", "db_pwd", "pass", "SMTP_PASS", "passphrase", "secret", "client_secret",
		"clientSecret", "token", "auth_token", "authToken", "_authToken", "api_key", "apiKey", "APIKey",
		"apikey", "X-Api-Key", "access_key", "aws_secret_access_key", "secret_key", "SECRET_KEY",
		"private_key", "privateKey", "$password", "mysqlRootPassword"}
	no := []string{"user", "username", "password_hash", "passwordField", "bypass", "compass", "passenger",
		"token_type", "tokenizer", "max_tokens", "secretName", "public_key", "key", "keyId", "pwdDir",
		"secrets", "password_confirmation", "passport", "tokens"}
	for _, k := range yes {
		if !keyIsCredential(k) {
			t.Errorf("keyIsCredential(%q) = false", k)
		}
	}
	for _, k := range no {
		if keyIsCredential(k) {
			t.Errorf("keyIsCredential(%q) = true", k)
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestCredentialLinesCoverPrefilter: every line lineMayHaveCredential
// accepts is a candidate of credentialLines (findAssignments looks at no
// other), on real, generated and leak-corpus texts.
func TestCredentialLinesCoverPrefilter(t *testing.T) {
	texts := []string{"", "x", "pass\n", "a\r\nPASSWORD=x\r\n", "ключ: пароль123\n", "mysql -uroot -pS3cret\n\n@\n"}
	for i, f := range scanTexts(t) {
		if i%sample(4) == 0 {
			texts = append(texts, f.text)
		}
	}
	accepted := 0
	for _, text := range texts {
		accepted += checkCredentialLines(t, text)
	}
	if accepted < 1000 {
		t.Errorf("only %d lines pass the prefilter", accepted)
	}
}

func checkCredentialLines(t *testing.T, text string) int {
	t.Helper()
	li := newLineIndex(text)
	marks, _ := credentialLines(text, li)
	n := 0
	for l := 1; l <= li.lines(); l++ {
		line := strings.TrimSuffix(text[min(li.start(l), len(text)):li.end(l)], "\r")
		passes := lineMayHaveCredential(string(appendLowerASCII(nil, line)), line)
		if passes {
			n++
			if marks[l]&lineCandidate == 0 {
				t.Fatalf("line %d %q passes lineMayHaveCredential but is no candidate", l, line)
			}
		}
		if marks[l]&lineSure != 0 && !passes {
			t.Fatalf("line %d %q is marked sure but fails lineMayHaveCredential", l, line)
		}
		if marks[l] == lineCandidate && mayHaveCredentialBesideWords(string(appendLowerASCII(nil, line)), line) != passes {
			t.Fatalf("line %d %q: mayHaveCredentialBesideWords differs from lineMayHaveCredential on a line without the words", l, line)
		}
	}
	return n
}

func FuzzCredentialLines(f *testing.F) {
	f.Add("user=admin\npassword = hunter22\n")
	f.Add("é\nAPI-KEY: x\r\n@tcp(")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 64<<10 {
			return
		}
		checkCredentialLines(t, text)
	})
}

// gatePieces make lines around the two gates' literals: the patterns' parts
// and what breaks them, white space of every kind Go's \s takes and some
// it does not.
var gatePieces = []string{
	"value", "Value", "key", "name", "=", "==", ":=", " ", "\t", "\f", "\r", "\v", "\u00a0", "\"", "'", "x\"", "\"y\"", "'z'",
	"://", "http", "s", ":", "@", "/", "?", "#", "<", ">", "`", "u", "p4ss", "é", "[", "-", "_", "host", "\\",
}

// checkGates fails when a pattern matches line but its gate says it
// cannot; it reports which patterns matched.
func checkGates(t *testing.T, line string) (xml, url bool) {
	t.Helper()
	xml, url = reXMLKeyValue().MatchString(line), reURLUserinfo().MatchString(line)
	if xml && !valueAssigned(line) {
		t.Fatalf("%q: reXMLKeyValue matches, valueAssigned says it cannot", line)
	}
	if url && !urlHasUserinfo(line) {
		t.Fatalf("%q: reURLUserinfo matches, urlHasUserinfo says it cannot", line)
	}
	return xml, url
}

// TestAssignmentGatesAreNecessary: the gates in front of reXMLKeyValue and
// reURLUserinfo let through every line either matches, on generated lines
// and on the lines of real and leak-corpus texts.
func TestAssignmentGatesAreNecessary(t *testing.T) {
	lines := []string{`<add key="Password" value="hunter2"/>`, `name = 'db'  value= "x"`, "https://user:p4ss@host/", "ftp://:x@[::1]",
		// Runs after a ':' that pass over later "://"s (urlHasUserinfo
		// scans each once), with and without an '@' that ends them.
		strings.Repeat("s://u:", 50) + "p@h", strings.Repeat("s://:", 50) + "x y@h", "s://a:b c s://d:e@f"}
	r := rand.New(rand.NewPCG(7, 8))
	pick := func(from ...string) string { return from[r.IntN(len(from))] }
	ws := func() string { return pick("", " ", "  ", "\t", "\f", "\r", " \t") }
	for range 20000 {
		var b strings.Builder
		for k := r.IntN(14); k > 0; k-- {
			b.WriteString(gatePieces[r.IntN(len(gatePieces))])
		}
		lines = append(lines, b.String())
		// Each pattern's shape, its parts drawn from what passes and what
		// breaks it.
		lines = append(lines, pick("", "<add ", "x ")+pick("key", "name", "Name")+ws()+pick("=", ":")+ws()+pick(`"k"`, `'k'`, "k")+
			pick(" ", "\t", "\f", "")+pick("value", "Value", "values")+ws()+pick("=", "==", ":")+ws()+pick(`"v"`, `'v'`, "v", `"v`)+pick("", "/>", " x"))
		lines = append(lines, pick("", "see ", "x=")+pick("https", "s3", "x", "")+pick("://", ":/", "//")+pick("", "u", "u s", "u/", "u?", "u#", "é", "u@")+
			pick(":", "", "::")+pick("", "p", "p s", "p'", "p<", "p/", "p:")+pick("@", "", "@@")+pick("h", "-", "[", "", " ", "é"))
	}
	for i, f := range scanTexts(t) {
		if i%sample(4) == 0 {
			lines = append(lines, strings.Split(f.text, "\n")...)
		}
	}
	xmls, urls := 0, 0
	for _, line := range lines {
		xml, url := checkGates(t, line)
		if xml {
			xmls++
		}
		if url {
			urls++
		}
	}
	if xmls < 20 || urls < 20 {
		t.Fatalf("only %d lines match reXMLKeyValue and %d reURLUserinfo: the cases do not reach the gates", xmls, urls)
	}
}

func FuzzAssignmentGates(f *testing.F) {
	f.Add(`<add key="Password" value="hunter2"/>`)
	f.Add("https://user:p4ss@host/ value\t=\f'x'")
	f.Fuzz(func(t *testing.T, line string) {
		checkGates(t, line)
	})
}

// BenchmarkAssignmentGatesHostileLine runs the gates on a line of 160 KB
// made to make them slow: "://:" over and over, each ':' starting a run the
// next ones' would scan again, and "value" with white space and '=' but
// never a quote. A file's line is the repository's to choose; the gates
// must stay linear in it, as the patterns they guard are (~1 ms).
func BenchmarkAssignmentGatesHostileLine(b *testing.B) {
	line := "pass " + strings.Repeat("://:", 20000) + strings.Repeat("value \t= \f", 10000)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if valueAssigned(line) || urlHasUserinfo(line) {
			b.Fatal("a gate let the hostile line through")
		}
	}
}
