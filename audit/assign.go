package audit

import (
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/ctxpack/ctxpack/pack"
)

// Rule ids of ctxpack's own detectors (alongside gitleaks' rule ids).
const (
	// RulePasswordAssignment is a credential-named key assigned a literal
	// value: `password=…`, `"api_key": "…"`, `<password>…</password>`, …
	RulePasswordAssignment = "password-assignment"
	// RulePasswordInURL is the password of a URL's userinfo
	// (`scheme://user:password@host`).
	RulePasswordInURL = "password-in-url"
)

// assignRulesVersion changes whenever the assignment rules change, so cached
// results and the rules digest change with them.
const assignRulesVersion = "4"

// FindAssignments finds credentials assigned literal values in content:
// keys named like password, passwd, pwd, pass, passphrase, secret, token,
// api_key/apikey, access_key, secret_key, private_key (case-insensitive, with
// any prefix such as DB_PASSWORD, dbPassword, spring.datasource.password) in
// ini/properties/env (`key=value`), yaml (`key: value`), json
// (`"key": "value"`), xml (`<password>v</password>`, `password="v"`,
// `<add key="Password" value="v"/>`), php (`'password' => 'v'`,
// `$password = 'v'`, `define('DB_PASSWORD', 'v')`), shell
// (`export PASSWORD=v`), source code (`password = "v"`, `password := "v"`),
// connection strings (`…;Password=v;…`), URL query parameters (`?token=v`)
// and URL userinfo (`scheme://user:v@host`).
//
// Start/End cover the value only. Not findings: empty values, references and
// placeholders (`${X}`, `$X`, `%(x)s`, `{{ … }}`, `<password>`, `%X%`,
// `os.Getenv(…)`, `process.env.X`, `ENV['X']`, `!vault`, `ENC[…]`), null /
// boolean literals, mask and example values (changeme, xxx, ****,
// your-password-here, example, …), values under four bytes, prose (several
// purely alphabetic words), file paths, and — in source code files — any value
// that is not a quoted literal (an identifier or expression). Lines carrying
// gitleaks:allow are skipped. Fingerprints are `path:rule:line`.
func FindAssignments(filePath string, content []byte) []pack.Finding {
	text := string(content)
	li := newLineIndex(text)
	var out []pack.Finding
	for _, a := range findAssignments(filePath, text, li) {
		out = append(out, pack.Finding{
			RuleID:      a.rule,
			Path:        filePath,
			StartLine:   a.line,
			EndLine:     a.line,
			Fingerprint: fingerprint("", filePath, a.rule, a.line),
			Start:       a.start,
			End:         a.end,
		})
	}
	return out
}

type assignment struct {
	rule       string
	line       int
	matchStart int // start of the key, for allowlists that target the match
	start, end int // the value
}

// fileSyntax says how values of a file are to be read.
type fileSyntax struct {
	// unquoted: an unquoted value is a literal (config files, shell, docs);
	// false for source code, JSON and XML, where it is an expression.
	unquoted bool
	// word: an unquoted value ends at whitespace (sh, .env, Dockerfile,
	// prose documents).
	word bool
	// properties: Java .properties, where `key value` assigns too.
	properties bool
}

var sourceExts = map[string]bool{
	"go": true, "js": true, "jsx": true, "mjs": true, "cjs": true, "ts": true, "tsx": true,
	"mts": true, "cts": true, "py": true, "pyi": true, "rb": true, "php": true, "java": true,
	"kt": true, "kts": true, "scala": true, "sc": true, "groovy": true, "gradle": true,
	"cs": true, "fs": true, "vb": true, "swift": true, "m": true, "mm": true, "c": true,
	"h": true, "cc": true, "cpp": true, "cxx": true, "hpp": true, "hh": true, "rs": true,
	"dart": true, "lua": true, "pl": true, "pm": true, "r": true, "jl": true, "ex": true,
	"exs": true, "erl": true, "hrl": true, "hs": true, "ml": true, "mli": true, "clj": true,
	"cljs": true, "elm": true, "vue": true, "svelte": true, "astro": true, "zig": true,
	"nim": true, "cr": true, "d": true, "v": true, "sol": true, "tf": true, "hcl": true,
	"ps1": true, "psm1": true, "sql": true, "proto": true, "graphql": true, "gql": true,
	"json": true, "jsonc": true, "json5": true, "ipynb": true,
	"xml": true, "html": true, "htm": true, "xhtml": true, "jsp": true, "aspx": true,
	"cshtml": true, "razor": true, "xaml": true, "csproj": true, "vbproj": true,
	"fsproj": true, "props": true, "targets": true, "plist": true, "svg": true,
	"config": true, "wsdl": true, "xsd": true, "xsl": true, "xslt": true,
	"erb": true, "ejs": true, "hbs": true, "twig": true, "j2": true, "jinja": true,
	"jinja2": true, "tmpl": true, "tpl": true, "gotmpl": true, "liquid": true,
}

var docExts = map[string]bool{
	"md": true, "markdown": true, "mdx": true, "rst": true, "txt": true, "adoc": true,
	"asciidoc": true, "textile": true, "org": true, "rdoc": true,
}

var shellExts = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "ksh": true, "fish": true, "env": true,
	"envrc": true, "bat": true, "cmd": true,
}

func syntaxOf(filePath string) fileSyntax {
	base := strings.ToLower(path.Base(filePath))
	ext := strings.TrimPrefix(path.Ext(base), ".")
	switch {
	case base == ".env" || strings.HasPrefix(base, ".env.") || base == ".envrc" ||
		base == "dockerfile" || strings.HasPrefix(base, "dockerfile.") ||
		strings.HasSuffix(base, ".dockerfile") || base == "containerfile":
		if ext != "" && sourceExts[ext] {
			return fileSyntax{}
		}
		return fileSyntax{unquoted: true, word: true}
	case shellExts[ext], docExts[ext]:
		return fileSyntax{unquoted: true, word: true}
	case sourceExts[ext]:
		return fileSyntax{}
	case ext == "properties":
		return fileSyntax{unquoted: true, properties: true}
	}
	// ini, cfg, conf, properties, yaml, toml, Makefile, markdown, text and
	// unknown files: an unquoted value is taken literally.
	return fileSyntax{unquoted: true}
}

// Regular expressions. Keys are matched syntactically and then checked with
// keyIsCredential, so a non-credential key never hides a credential one.
const (
	keyChars = `[$@]?[\p{L}_][\p{L}\p{N}_.\-]*`
	// quotedAfterKey is what reQuoted reads between its key and the
	// value's quote: `: str`, `: String`; `string` (Go) or the name after
	// a type (Java, its second group), then the operator.
	quotedAfterKey = `["'` + "`" + `]?\]?` +
		`(?:\s*:\s*[A-Za-z_][\w.\[\]]*\??|\s+([A-Za-z_][\w.\[\]]*))?` +
		`\s*(?:=|:=|:|=>|\?=|\?\?=|\|\|=)\s*(?:[rRbBuU]|@)?`
	qDouble = `"(?:[^"\\\n]|\\.)*"`
	qSingle = `'(?:[^'\\\n]|\\.)*'`
	qBack   = "`[^`\\n]*`"
)

var (
	// key <sep> "quoted": source code, json, yaml, toml, ini, php arrays,
	// xml attributes, shell.
	reQuoted = regexps.MustCompile(`(?:^|[^\w.\-$@])["'` + "`" + `]?(` + keyChars + `)` + quotedAfterKey +
		`(` + qDouble + `|` + qSingle + `|` + qBack + `)`)
	// key <sep> unquoted value (config files only); the value is read in code.
	// (A key after ':' is a part of a value — urn:k8s:secret:tls:ca, an
	// error message's "token: …: …" — not a key; but .npmrc writes
	// //registry/:_authToken=.)
	reUnquotedKey = regexps.MustCompile(`(?:^|[^\w.\-$@/:]|/:)["']?(` + keyChars + `)["']?[ \t]*(?:=|:=|::=|\?=|:)[ \t]*`)
	// .properties `password value` (white space separates key and value).
	rePropertiesSpace = regexps.MustCompile(`^\s*(` + keyChars + `)[ \t]+([^\s=:].*)$`)
	// Dockerfile `ENV PASSWORD value` (old space-separated form).
	reDockerEnv = regexps.MustCompile(`^\s*(?i:ENV)\s+(` + keyChars + `)[ \t]+([^\s=].*)$`)
	// <password>value</password>
	reXMLElem = regexps.MustCompile(`<([A-Za-z_][\w.:\-]*)(?:\s[^<>]*)?>([^<>]+)</([A-Za-z_][\w.:\-]*)\s*>`)
	// <add key="Password" value="…"/>, <property name="password" value="…"/>
	reXMLKeyValue = regexps.MustCompile(`\b(?:key|name)\s*=\s*(?:"([^"]*)"|'([^']*)')\s+value\s*=\s*(` + qDouble + `|` + qSingle + `)`)
	// define('DB_PASSWORD', '…');
	rePHPDefine = regexps.MustCompile(`\bdefine\s*\(\s*['"]([^'"]+)['"]\s*,\s*(` + qDouble + `|` + qSingle + `)`)
	// …;Password=…;… (ADO.NET / JDBC / ODBC connection strings)
	// (ODBC quotes a value in braces: Pwd={a;b}; Jet names it
	// "Jet OLEDB:Database Password".)
	reConnString = regexps.MustCompile(`(?i)(^|[;"'])\s*((?:[a-z][\w :]*?[ :])?(?:password|pwd))\s*=\s*(\{[^}\r\n]*\}|[^;"'\r\n]*)`)
	// ?token=… &api_key=…
	reQueryParam = regexps.MustCompile(`[?&](` + keyChars + `)=(` + queryValue + `+)`)
	// scheme://user:password@host
	// (A password may hold a '/', '?' or '#', which RFC 3986 wants encoded
	// and people do not encode; host:port/path@… is told apart by its
	// digits.)
	reURLUserinfo = regexps.MustCompile(`\b[A-Za-z][A-Za-z0-9+.\-]{1,30}://([^\s:@/?#'"<>` + "`" + `]*):([^\s'"<>@` + "`" + `]*)@[\w\-\[]`)
)

// credential keywords, as the last word(s) of a key.
var (
	// A key whose last word is exactly one of these, or ends with one of
	// the "long" ones (dbpassword, mysecret, authtoken).
	credExactWords  = map[string]bool{"pass": true, "pwd": true, "parola": true, "sifre": true, "şifre": true, "senha": true}
	credSuffixWords = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey", "secretkey", "privatekey",
		"storepass", "keypass",
		// the word for password in other languages, in the Latin script
		// without and with diacritics, and in others
		"passwort", "kennwort", "wachtwoord", "lösenord", "losenord", "salasana", "hasło", "haslo", "heslo",
		"jelszó", "jelszo", "adgangskode", "passord", "lozinka", "geslo", "contraseña", "contrasena",
		"motdepasse", "palavrapasse", "wagwoord", "parool", "salasõna", "slaptažodis", "parole",
		"пароль", "лозинка", "гасло", "κωδικός", "סיסמה", "كلمةالمرور", "رمزعبور", "पासवर्ड",
		"密码", "密碼", "口令", "パスワード", "비밀번호", "รหัสผ่าน", "matkhau", "mậtkhẩu"}
	credWordPairs = [][2]string{{"api", "key"}, {"access", "key"}, {"secret", "key"}, {"private", "key"}}
	// Keys that name a credential as a whole: .npmrc's _auth.
	credKeys = map[string]bool{"_auth": true}
)

// keyIsCredential reports whether a key names a credential: its last word
// (after splitting on punctuation and camelCase) is pass/pwd or ends with
// password, passwd, passphrase, secret, token, apikey, … (or the word for
// password in another language, written in one word or several:
// mot_de_passe, palavra-passe), or its last two words are api key, access
// key, secret key or private key.
func keyIsCredential(key string) bool {
	if credKeys[strings.ToLower(strings.TrimLeft(key, "$@"))] {
		return true
	}
	words := splitKey(key)
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	if credExactWords[last] {
		return true
	}
	joined := strings.Join(words, "")
	for _, s := range credSuffixWords {
		if strings.HasSuffix(last, s) || len(words) > 1 && strings.HasSuffix(joined, s) && len(s) > len(last) {
			return true
		}
	}
	if len(words) >= 2 {
		prev := words[len(words)-2]
		for _, p := range credWordPairs {
			if prev == p[0] && last == p[1] {
				return true
			}
		}
	}
	return false
}

// splitKey splits a key into lowercase words on non-alphanumerics and
// camelCase boundaries: "DB_PASSWORD" → db password, "dbPassword" → db
// password, "APIKey" → api key, "$cfg" → cfg.
func splitKey(key string) []string {
	var words []string
	rs := []rune(key)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(i)
			start = i
		case unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return words
}

// nonASCIICredWords are the credential words the line prefilter looks
// for in a line with non-ASCII bytes (lowercased).
var nonASCIICredWords = []string{"contraseña", "пароль", "лозинка", "гасло", "κωδικός", "סיסמה", "كلمة", "رمز", "पासवर्ड",
	"密码", "密碼", "口令", "パスワード", "비밀번호", "รหัสผ่าน", "mật", "şifre", "hasło", "jelszó", "lösenord", "salasõna", "slaptažodis"}

var credentialWords = []string{"kennwort", "wachtwoord", "losenord", "salasana", "haslo", "heslo", "jelszo", "adgangskode",
	"lozinka", "geslo", "contrasena", "parola", "parool", "parole", "sifre", "senha", "wagwoord", "matkhau", "login",
	"credential", "sign_in", "signin", "_auth"}

// credentialNeedles finds, in one pass over a whole ASCII-lowercased
// text, every string the line prefilter looks for on an ASCII line (none
// holds '\n'): a line without one, and without a non-ASCII byte, cannot
// pass it. Forty substring searches per line were a sixth of a large
// tree's scan. The prefilter accepts a line that holds any of them but
// "@" and "key" outright (sureNeedle); the others it leaves to
// mayHaveCredentialBesideWords. (The prefilter as one predicate,
// lineMayHaveCredential, is the tests' reference.)
var credentialNeedles = sync.OnceValue(func() *literals {
	needles := []string{"pass", "pwd", "secret", "token", "auth", "@", "key"}
	needles = append(needles, credentialWords...)
	needles = append(needles, cmdTriggers...)
	return newLiterals(needles)
})

// What credentialLines marks of a line.
const (
	// lineCandidate: the prefilter could accept the line.
	lineCandidate uint8 = 1 << iota
	// lineSure: it does (the line holds a word it accepts a line for
	// outright); a candidate line without it holds none of those words.
	lineSure
)

// sureNeedle reports whether a line that holds needle, one of
// credentialNeedles', passes the prefilter.
func sureNeedle(needle string) bool { return needle != "@" && needle != "key" }

// credentialLines marks (1-based, by li) the lines of text that the line
// prefilter could accept, and those it does accept for a word alone, and
// returns the ASCII-lowercased text it searched.
func credentialLines(text string, li *lineIndex) (marks []uint8, lower string) {
	marks = make([]uint8, li.lines()+2)
	lower = li.lower()
	// Hits come in order, and no needle holds a '\n': a cursor over the
	// newlines finds each hit's line without a search.
	k := 0
	needles := credentialNeedles()
	needles.scan(lower, nil, func(id, at int) {
		for k < len(li.nl) && li.nl[k] < at {
			k++
		}
		marks[k+1] |= lineCandidate
		if sureNeedle(needles.strs[id]) {
			marks[k+1] |= lineSure
		}
	})
	if isASCII(text) {
		return marks, lower // no line to mark for a non-ASCII byte
	}
	for l := 1; l <= li.lines(); l++ {
		if marks[l] == 0 && !isASCII(text[min(li.start(l), len(text)):li.end(l)]) {
			marks[l] = lineCandidate
		}
	}
	return marks, lower
}

// mayHaveCredentialBesideWords is the line prefilter of a line that holds
// none of the words it accepts a line for outright (credentialLines says
// which lines do): a URL with userinfo or a connection form, a credential
// word not in ASCII, an API, access or private key.
func mayHaveCredentialBesideWords(lower, line string) bool {
	if strings.Contains(lower, "@") && (strings.Contains(lower, "://") ||
		strings.Contains(lower, "@tcp") || strings.Contains(lower, "@unix") || strings.Contains(lower, "@udp") ||
		strings.Contains(lower, "@/") || strings.Contains(lower, "jdbc:oracle")) {
		return true
	}
	if !isASCII(line) {
		l := strings.ToLower(line)
		for _, w := range nonASCIICredWords {
			if strings.Contains(l, w) {
				return true
			}
		}
	}
	// api key, access key, private key (secret key is covered above)
	for i := 0; ; {
		j := strings.Index(lower[i:], "key")
		if j < 0 {
			return false
		}
		k := i + j
		if k > 0 && strings.IndexByte("_-. ", lower[k-1]) >= 0 {
			k--
		}
		before := lower[:k]
		if strings.HasSuffix(before, "api") || strings.HasSuffix(before, "access") || strings.HasSuffix(before, "private") {
			return true
		}
		i += j + 3
	}
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	// Eight bytes at a time: a scan tests every line of a tree.
	for ; len(s) >= 8; s = s[8:] {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func findAssignments(filePath, text string, li *lineIndex) []assignment {
	syn := syntaxOf(filePath)
	var out []assignment
	n := li.lines()
	candidate, lowerText := credentialLines(text, li)
	for l := 1; l <= n; l++ {
		ls, le := li.start(l), li.end(l)
		if ls >= len(text) {
			break
		}
		line := strings.TrimSuffix(text[ls:le], "\r")
		if len(line) < 5 || candidate[l] == 0 {
			continue
		}
		lower := lowerText[ls : ls+len(line)]
		if candidate[l]&lineSure == 0 && !mayHaveCredentialBesideWords(lower, line) || strings.Contains(line, "gitleaks:allow") {
			continue
		}
		var found []assignment
		markers := redactionMarkers(line)
		// add records a value; keyStart < 0 means no key names it (a
		// command-line option): the match starts at the value.
		add := func(rule string, keyStart, vs, ve int) {
			// trim surrounding whitespace from the value
			for vs < ve && (line[vs] == ' ' || line[vs] == '\t') {
				vs++
			}
			for ve > vs && (line[ve-1] == ' ' || line[ve-1] == '\t') {
				ve--
			}
			if ve <= vs || isPlaceholder(line[vs:ve]) || isProse(line[vs:ve]) || overlapsMarker(markers, vs, ve) {
				return
			}
			if keyStart < 0 {
				keyStart = vs
			} else if echoesKey(line, keyStart, line[vs:ve]) || namesSecretObject(line, keyStart, line[vs:ve]) {
				return
			}
			found = append(found, assignment{rule: rule, line: l, matchStart: ls + keyStart, start: ls + vs, end: ls + ve})
		}
		scanLine(line, lower, syn, add)
		out = append(out, dedupeSpans(found)...)
	}
	return out
}

// reQuotedTail is what follows the key reQuoted takes (either of its two
// groups) up to the value's opening quote.
var reQuotedTail = regexps.MustCompile(`^` + quotedAfterKey + `["'` + "`" + `]`)

// queryValue is a byte of a URL query parameter's value.
const queryValue = `[^&\s#"'<>` + "`" + `;,)]`

// reQueryTail is what follows the key reQueryParam takes.
var reQueryTail = regexps.MustCompile(`^=` + queryValue)

// reEqTail is what follows the key reUnquotedKey takes, when its operator
// must hold a '=' (unquotedAssignments without colon).
var reEqTail = regexps.MustCompile(`^["']?[ \t]*(?:=|:=|::=|\?=)`)

// credentialKeys finds, on a line of longKeyLine bytes or more, where a
// key a pattern needs may stand (on the first question asked of it): a
// key the patterns read (keyChars) is a whole run of key characters —
// none of them lets a letter, digit, '_', '.' or '-' follow the key, and
// the byte before it is none of those or a non-ASCII letter — so it is one
// of the runs mayHoldCredentialKey accepts that a byte a key's tail begins
// with follows. A pattern that needs a
// credential key and then its tail finds none where keyThen says so, and
// on a minified line (100 KB holding "token" somewhere) it need not run.
type credentialKeys struct {
	line, lower string
	ascii       bool
	ends        []int // where those runs end (found on the first question)
	found       bool
}

const longKeyLine = 512

func (k *credentialKeys) find() {
	k.found = true
	line := k.line
	isKey := func(i int) (int, bool) {
		c := line[i]
		if c < utf8.RuneSelf {
			return 1, c == '_' || c == '.' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		}
		r, w := utf8.DecodeRuneInString(line[i:])
		return w, unicode.IsLetter(r) || unicode.IsNumber(r)
	}
	for i := 0; i < len(line); {
		w, ok := isKey(i)
		if !ok {
			i += w
			continue
		}
		start := i
		for i < len(line) {
			w, ok := isKey(i)
			if !ok {
				break
			}
			i += w
		}
		// the first bytes of reQuotedTail, reEqTail and reQueryTail
		if i < len(line) && strings.IndexByte("\"'`] \t\n\r\f:=?|", line[i]) >= 0 &&
			mayHoldCredentialKey(line[start:i], k.lower[start:i], k.ascii) {
			k.ends = append(k.ends, i)
		}
	}
}

// keyThen reports whether a credential key may end inside (from, to] of
// the line with tail matching from its end up to to (always, on a line
// shorter than longKeyLine).
func (k *credentialKeys) keyThen(tail *regexp.Regexp, from, to int) bool {
	if len(k.line) < longKeyLine {
		return true
	}
	if !k.found {
		k.find()
	}
	for _, i := range k.ends {
		if i > from && i <= to && tail.MatchString(k.line[i:to]) {
			return true
		}
	}
	return false
}

// keyNeedles are the words one of which a key's letters and digits
// (lowercased, without the $ @ _ . - [ ] and other numbers a key may hold)
// contain whenever keyIsCredential accepts it; "_auth" is credKeys'.
var keyNeedles = func() []string {
	out := []string{"pass", "pwd", "parola", "sifre", "şifre", "senha", "secret", "token", "apikey", "accesskey", "privatekey"}
	for _, w := range credSuffixWords {
		if !containsAny(w, out) {
			out = append(out, w)
		}
	}
	return out
}()

// mayHoldCredentialKey reports whether a line (lower: ASCII-lowercased;
// ascii: no other bytes) can hold a key that keyIsCredential accepts — a
// key split into words, as in p_a_s_s_w_o_r_d, too: a cheap test before
// the patterns that find keys.
func mayHoldCredentialKey(line, lower string, ascii bool) bool {
	if strings.Contains(lower, "_auth") {
		return true
	}
	var buf [256]byte
	squeezed := buf[:0]
	if ascii {
		for i := 0; i < len(lower); i++ {
			switch c := lower[i]; c {
			case '$', '@', '_', '.', '-', '[', ']':
			default:
				squeezed = append(squeezed, c)
			}
		}
	} else {
		// splitKey drops what is neither a letter nor a digit and
		// lowercases rune by rune (İ to i, the Kelvin sign to k).
		for _, r := range line {
			switch {
			case r == '$' || r == '@' || r == '_' || r == '.' || r == '-' || r == '[' || r == ']':
			case unicode.IsNumber(r) && !unicode.IsDigit(r):
			default:
				squeezed = utf8.AppendRune(squeezed, unicode.ToLower(r))
			}
		}
	}
	// One pass for all of them: fifty searches of a line were a sixth of
	// the assignment scan of a large tree.
	found := false
	keyNeedleSet().scan(unsafe.String(unsafe.SliceData(squeezed), len(squeezed)), nil, func(_, _ int) { found = true })
	return found
}

// keyNeedleSet finds keyNeedles in one pass.
var keyNeedleSet = sync.OnceValue(func() *literals { return newLiterals(keyNeedles) })

func appendLowerASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// scanLine reports every credential value on one line via add(rule,
// keyStart, valueStart, valueEnd) with offsets into line.
func scanLine(line, lower string, syn fileSyntax, add func(rule string, keyStart, vs, ve int)) {
	// Each pattern runs only on lines holding the literals it needs (most
	// lines that pass the prefilter hold few of them).
	hasEq := strings.IndexByte(line, '=') >= 0
	// A case-insensitive pattern matches ſ for s and the Kelvin sign for k
	// (no other non-ASCII rune folds to an ASCII letter): on a line holding
	// one, a literal of lower is no precondition.
	ascii := isASCII(line)
	folds := !ascii && hasFoldRune(line)
	// The patterns whose key must pass keyIsCredential run only on a line
	// that can hold such a key.
	mayKey := mayHoldCredentialKey(line, lower, ascii)
	// key <sep> "literal": a quote after an '=' or ':'
	sep := strings.IndexAny(line, "=:")
	keys := &credentialKeys{line: line, lower: lower, ascii: ascii}
	for _, m := range findAllIf(mayKey && sep >= 0 && strings.LastIndexAny(line, "\"'`") > sep && keys.keyThen(reQuotedTail(), -1, len(line)), reQuoted(), line) {
		// `var password string = …` names the key first, `String password
		// = …` second.
		if !keyIsCredential(line[m[2]:m[3]]) && (m[4] < 0 || !keyIsCredential(line[m[4]:m[5]])) {
			continue
		}
		vs, ve := m[6]+1, m[7]-1 // inside the quotes
		if strings.Contains(line[m[6]:m[7]], "${") && line[m[6]] == '`' {
			continue // template literal with interpolation
		}
		add(RulePasswordAssignment, m[2], vs, ve)
	}
	// <password>value</password>
	for _, m := range findAllIf(strings.Contains(line, "</"), reXMLElem(), line) {
		open, closeTag := line[m[2]:m[3]], line[m[6]:m[7]]
		if open != closeTag {
			continue
		}
		local := open[strings.LastIndexByte(open, ':')+1:]
		if keyIsCredential(local) {
			add(RulePasswordAssignment, m[2], m[4], m[5])
		}
	}
	// key="Password" value="…"
	for _, m := range findAllIf(hasEq && valueAssigned(line), reXMLKeyValue(), line) {
		ks, ke := m[2], m[3]
		if ks < 0 {
			ks, ke = m[4], m[5]
		}
		if keyIsCredential(line[ks:ke]) {
			add(RulePasswordAssignment, ks, m[6]+1, m[7]-1)
		}
	}
	// define('DB_PASSWORD', '…')
	for _, m := range findAllIf(strings.Contains(line, "define"), rePHPDefine(), line) {
		if keyIsCredential(line[m[2]:m[3]]) {
			add(RulePasswordAssignment, m[2], m[4]+1, m[5]-1)
		}
	}
	// …;Password=…;
	for _, m := range findAllIf(hasEq && (folds || strings.Contains(lower, "password") || strings.Contains(lower, "pwd")), reConnString(), line) {
		vs, ve := m[6], m[7]
		for ve > vs && line[ve-1] == ' ' {
			ve--
		}
		if ve-vs >= 2 && line[vs] == '{' && line[ve-1] == '}' {
			vs, ve = vs+1, ve-1
		}
		// only inside a connection string: `;` before the key or after the value
		if line[m[2]:m[3]] == ";" || (m[7] < len(line) && line[m[7]] == ';') {
			add(RulePasswordAssignment, m[4], vs, ve)
		}
	}
	// ?token=…
	for _, m := range findAllIf(hasEq && strings.ContainsAny(line, "?&") && keys.keyThen(reQueryTail(), -1, len(line)), reQueryParam(), line) {
		if keyIsCredential(line[m[2]:m[3]]) {
			add(RulePasswordAssignment, m[2], m[4], m[5])
		}
	}
	// scheme://user:password@host
	for _, m := range findAllIf(urlHasUserinfo(line), reURLUserinfo(), line) {
		if slash := strings.IndexAny(line[m[4]:m[5]], "/?#"); slash >= 0 && isDigits(line[m[4]:m[4]+slash]) {
			continue // host:port/path@…
		}
		add(RulePasswordInURL, m[0], m[4], m[5])
	}
	// Command lines: the line itself and each quoted string that reads
	// like one (os.system("mysql -pX …"), `htpasswd -nb u X` in a README).
	if containsAny(lower, cmdTriggers) {
		commandLine(line, shellWords(line), syn.unquoted, add)
		eachQuoted(line, func(s, e int) {
			if strings.IndexByte(line[s:e], ' ') < 0 {
				return
			}
			sub := line[s:e]
			commandLine(sub, shellWords(sub), true, func(rule string, k, vs, ve int) {
				if k >= 0 {
					k += s
				}
				add(rule, k, s+vs, s+ve)
			})
		})
	}
	connectionForms(line, lower, folds, add)
	if !syn.unquoted {
		// Shell lines in any file (a notebook's %env and !export, a
		// README's code), and key=value pairs inside strings (libpq
		// connection strings, command arguments).
		if mayKey && isShellAssignmentLine(line) {
			unquotedAssignments(line, 0, fileSyntax{unquoted: true, word: true}, true, add)
		}
		if mayKey && hasEq {
			eachQuoted(line, func(s, e int) {
				// a key lies inside the string: test the string alone
				sub, subLower, subASCII := line[s:e], lower[s:e], ascii || isASCII(line[s:e])
				if strings.IndexByte(sub, '=') >= 0 && mayHoldCredentialKey(sub, subLower, subASCII) &&
					keys.keyThen(reEqTail(), s, e) {
					unquotedAssignments(sub, s, fileSyntax{unquoted: true, word: true}, false, add)
				}
			})
		}
		return
	}
	if !mayKey {
		return
	}
	if syn.properties {
		// .properties: `key value` is an assignment too.
		if m := rePropertiesSpace().FindStringSubmatchIndex(line); m != nil && keyIsCredential(line[m[2]:m[3]]) {
			if vs, ve, ok := unquotedValue(line, m[4], syn); ok {
				add(RulePasswordAssignment, m[2], vs, ve)
			}
		}
	}
	// key=value, key: value (config files, shell, docs)
	for _, m := range findAllIf(hasEq || strings.IndexByte(line, ':') >= 0, reUnquotedKey(), line) {
		if !keyIsCredential(line[m[2]:m[3]]) {
			continue
		}
		if vs, ve, ok := unquotedValue(line, m[1], syn); ok {
			add(RulePasswordAssignment, m[2], vs, ve)
		}
	}
	if m := reDockerEnv().FindStringSubmatchIndex(line); m != nil && keyIsCredential(line[m[2]:m[3]]) {
		if vs, ve, ok := unquotedValue(line, m[4], fileSyntax{unquoted: true, word: true}); ok {
			add(RulePasswordAssignment, m[2], vs, ve)
		}
	}
}

// redactionMarkers are the [REDACTED:<rule>] spans of a line: a redacted
// text is rescanned, and what a marker replaced is no value of ours.
func redactionMarkers(line string) [][2]int {
	var out [][2]int
	for i := 0; ; {
		j := strings.Index(line[i:], "[REDACTED:")
		if j < 0 {
			return out
		}
		s := i + j
		e := strings.IndexByte(line[s:], ']')
		if e < 0 {
			return append(out, [2]int{s, len(line)})
		}
		out = append(out, [2]int{s, s + e + 1})
		i = s + e + 1
	}
}

func overlapsMarker(ms [][2]int, s, e int) bool {
	for _, m := range ms {
		if m[0] < e && s < m[1] {
			return true
		}
	}
	return false
}

// unquotedAssignments reports `key=value` (and, when colon is set,
// `key: value`) assignments of credential keys in text, a part of a line
// starting at offset off.
func unquotedAssignments(text string, off int, syn fileSyntax, colon bool, add func(rule string, keyStart, vs, ve int)) {
	for _, m := range reUnquotedKey().FindAllStringSubmatchIndex(text, -1) {
		if !keyIsCredential(text[m[2]:m[3]]) {
			continue
		}
		if !colon && !strings.Contains(text[m[3]:m[1]], "=") {
			continue
		}
		if vs, ve, ok := unquotedValue(text, m[1], syn); ok {
			add(RulePasswordAssignment, off+m[2], off+vs, off+ve)
		}
	}
}

// isShellAssignmentLine: `export X=…`, `set X=…`, a notebook's `%env X=…`
// or `!export X=…`, a Dockerfile's `ENV X=…`.
func isShellAssignmentLine(line string) bool {
	t := strings.TrimLeft(line, " \t")
	for _, p := range []string{"export ", "%env ", "!export ", "set ", "SET ", "ENV ", "setx ", "$env:"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// eachQuoted calls f with the inside [s,e) of each quoted string of line.
func eachQuoted(line string, f func(s, e int)) {
	for i := 0; i < len(line); i++ {
		if c := line[i]; c == '"' || c == '\'' || c == '`' {
			j := closingQuote(line, i)
			if j > i+1 {
				f(i+1, j)
			}
			i = j
		}
	}
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// valueAssigned reports whether line holds what reXMLKeyValue's match
// must: "value", white space, '=', white space and a quote. Go code's
// lines with "value" and '=' (value == x, value := f()) mostly do not.
func valueAssigned(line string) bool {
	return anyAfter(line, "value", func(k int) bool {
		if k = skipRegexpSpace(line, k); k >= len(line) || line[k] != '=' {
			return false
		}
		k = skipRegexpSpace(line, k+1)
		return k < len(line) && (line[k] == '"' || line[k] == '\'')
	})
}

// anyAfter reports whether ok holds of the offset after any occurrence
// of lit in line.
func anyAfter(line, lit string, ok func(after int) bool) bool {
	for i := 0; ; {
		j := strings.Index(line[i:], lit)
		if j < 0 {
			return false
		}
		if ok(i + j + len(lit)) {
			return true
		}
		i += j + 1
	}
}

// skipRegexpSpace is the end of the run of \s (isSpace) at i.
func skipRegexpSpace(line string, i int) int {
	for i < len(line) && isSpace(line[i]) {
		i++
	}
	return i
}

// urlHasUserinfo reports whether line holds what reURLUserinfo's match
// must: "://", then up to a ':' none of \s:@/?#'"<>`, then up to an '@'
// none of \s'"<>@`. A line with a URL and an '@' elsewhere (a doc
// comment's link and an e-mail address, a decorator) does not. Linear in
// the line, as the pattern is: the run after a ':' may pass over later
// "://"s, so a run already scanned without an '@' is not scanned again
// (a line of "://:" a thousand times is one pass, not a thousand).
func urlHasUserinfo(line string) bool {
	scanned := 0 // the runs after a ':' scanned so far end here, at no '@'
	return anyAfter(line, "://", func(k int) bool {
		for k < len(line) && !isSpace(line[k]) && strings.IndexByte(":@/?#'\"<>`", line[k]) < 0 {
			k++
		}
		if k >= len(line) || line[k] != ':' {
			return false
		}
		if k++; k < scanned {
			return false // inside a run that ended without an '@'
		}
		for k < len(line) && !isSpace(line[k]) && strings.IndexByte("'\"<>@`", line[k]) < 0 {
			k++
		}
		scanned = k
		return k < len(line) && line[k] == '@'
	})
}

// findAllIf is re's submatch indexes in line, none when the literals re
// needs are missing (ok false).
func findAllIf(ok bool, re *regexp.Regexp, line string) [][]int {
	if !ok {
		return nil
	}
	return re.FindAllStringSubmatchIndex(line, -1)
}

// unquotedValue reads an unquoted value starting at vs.
func unquotedValue(line string, vs int, syn fileSyntax) (int, int, bool) {
	if vs >= len(line) {
		return 0, 0, false
	}
	switch line[vs] {
	case '"', '\'', '`', '{', '[', '(', '|', '>', '!', '&', '*', '#', ';', '=', '\\', ',':
		// quoted (handled elsewhere), flow collection, block scalar, yaml
		// tag/anchor/alias, comment, or not a value at all
		return 0, 0, false
	}
	ve := len(line)
	if syn.word {
		if i := strings.IndexAny(line[vs:], " \t;&|)`"); i >= 0 {
			ve = vs + i
		}
	} else {
		// inline comment: " #" or " ;"; a backtick ends inline code
		if i := strings.IndexByte(line[vs:], '`'); i >= 0 {
			ve = vs + i
		}
		for i := vs + 1; i < ve; i++ {
			if (line[i] == '#' || line[i] == ';') && (line[i-1] == ' ' || line[i-1] == '\t') {
				ve = i
				break
			}
		}
	}
	for ve > vs && (line[ve-1] == ' ' || line[ve-1] == '\t' || (!syn.word && (line[ve-1] == ',' || line[ve-1] == ';'))) {
		ve--
	}
	if ve <= vs {
		return 0, 0, false
	}
	return vs, ve, true
}

// isProse: "Enter your password", "Forgot your password?", "Mot de passe" —
// several purely alphabetic words are a label, not a credential.
func isProse(v string) bool {
	words := strings.Fields(v)
	if len(words) < 2 {
		return false
	}
	for _, w := range words {
		w = strings.TrimRight(w, ".,:;!?")
		w = strings.TrimLeft(w, "(\"'")
		w = strings.TrimRight(w, ")\"'")
		if w == "" {
			continue
		}
		for _, r := range w {
			if !unicode.IsLetter(r) && r != '\'' && r != '-' {
				return false
			}
		}
	}
	return true
}

var (
	placeholderWords = map[string]bool{
		"none": true, "null": true, "nil": true, "true": true, "false": true, "undefined": true,
		"empty": true, "changeme": true, "changeit": true, "password": true, "passwd": true,
		"pass": true, "pwd": true, "secret": true, "token": true, "apikey": true, "example": true,
		"sample": true, "test": true, "testing": true, "dummy": true, "fake": true,
		"placeholder": true, "redacted": true, "removed": true, "hidden": true, "masked": true,
		"todo": true, "tbd": true, "fixme": true, "foo": true, "bar": true, "foobar": true,
		"baz": true, "value": true, "string": true, "required": true, "optional": true,
		"secretkey": true, "accesskey": true, "privatekey": true, "authtoken": true,
		"accesstoken": true, "clientsecret": true, "mypassword": true, "yourpassword": true,
		"mysecret": true, "yoursecret": true, "mytoken": true, "yourtoken": true,
		"replaceme": true, "notset": true, "unset": true, "default": true,
		// GitHub workflow permissions (id-token: write), struct tag options
		"read": true, "write": true, "readall": true, "writeall": true, "omitempty": true, "omitzero": true,
	}
	// Words of a placeholder phrase: your-password-here, my_api_key,
	// ENTER_YOUR_TOKEN, example-secret-value.
	phraseLeads = map[string]bool{
		"your": true, "enter": true, "insert": true, "put": true, "replace": true, "add": true, "set": true,
		"some": true, "example": true, "sample": true, "dummy": true, "fake": true, "test": true, "demo": true,
		"default": true, "the": true, "my": true, "a": true, "paste": true, "fill": true, "use": true, "xxx": true,
	}
	phraseWords = map[string]bool{
		"password": true, "passwd": true, "pass": true, "pwd": true, "passphrase": true, "secret": true,
		"secrets": true, "token": true, "tokens": true, "key": true, "keys": true, "api": true, "apikey": true,
		"access": true, "private": true, "client": true, "auth": true, "value": true, "here": true, "goes": true,
		"db": true, "database": true, "app": true, "user": true, "admin": true, "account": true, "service": true,
		"your": true, "my": true, "the": true, "a": true, "own": true, "real": true, "actual": true, "this": true,
		"in": true, "to": true, "with": true, "for": true, "of": true, "id": true, "bearer": true, "personal": true,
		"root": true, "smtp": true, "mail": true, "email": true, "jwt": true, "signing": true, "session": true,
		"encryption": true, "webhook": true, "github": true, "gitlab": true, "slack": true, "aws": true,
		"stripe": true, "openai": true, "google": true, "azure": true, "npm": true, "registry": true,
		"redis": true, "mysql": true, "postgres": true, "mongo": true, "string": true, "here's": true,
		"is": true, "an": true, "that": true, "very": true, "deep": true, "super": true, "long": true,
		"secure": true, "strong": true, "some": true, "dummy": true, "fake": true, "test": true, "sample": true,
		"example": true, "default": true, "demo": true, "dev": true, "local": true, "other": true, "new": true,
	}
	// Values that reference something else.
	reReference = regexps.MustCompile(`(?i)^(?:\$[A-Za-z_]\w*$|\$\(|%\(|%[A-Za-z_][\w]*%$|@[A-Za-z_][\w.]*@$|__[A-Za-z_]\w*__$|<[^<>]*>$|\{[^{}]*\}$|\[[^\[\]]*\]$)|\$\{|\{\{|\{%|<%|#\{|%\{|(?:^|[^\w])(?:os\.getenv|getenv|os\.environ|process\.env|env\(|env\[|environment\.getenvironmentvariable|system\.getenv|secrets\.|vault\(|lookup\(|!vault|enc\[|arn:aws:secretsmanager|arn:aws:ssm|^urn:)`)
	reMask      = regexps.MustCompile(`(?i)\*{3,}|x{4,}|\.{3,}|•{3,}`)
	// printf verbs: %s, %v, %d
	rePrintf = regexps.MustCompile(`^%[-+# 0-9.]*[a-zA-Z]$`)
	// A version or version range: ^1.0, ~2.3.4, >=1.2 <2, 1.0.0-rc.1, 2.x.
	reVersion = regexps.MustCompile(`^(?:[\^~]|[<>]=?|==?)\s*v?\d+(?:\.(?:\d+|x|\*)){0,3}(?:[-+][0-9A-Za-z.\-]+)?(?:\s*(?:\|\||,|\s)\s*\S.*)?$|^v?\d+(?:\.(?:\d+|x|\*)){1,3}(?:[-+][0-9A-Za-z.\-]+)?$`)
)

// isPlaceholder reports whether v is not a credential value: an empty or
// short value, a reference, a template, a null/boolean literal, a mask or an
// example phrase, a version, a run of one character or of ascending digits,
// a file path.
func isPlaceholder(v string) bool {
	v = strings.Trim(strings.TrimSpace(v), "\"'`,;")
	if len(v) < 4 {
		return true
	}
	lower := strings.ToLower(v)
	norm := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == ' ' || r == '.' {
			return -1
		}
		return r
	}, lower)
	if placeholderWords[norm] || strings.Contains(norm, "changeme") || strings.Contains(norm, "placeholder") ||
		strings.Contains(norm, "example") || strings.Contains(norm, "replaceme") || strings.Contains(norm, "redacted") {
		return true
	}
	if strings.HasSuffix(v, ":") {
		return true // a label: "token: …: …" in a message
	}
	if strings.HasSuffix(v, "EXAMPLE") || reReference().MatchString(v) || reMask().MatchString(v) ||
		rePrintf().MatchString(v) || isPlaceholderPhrase(v) || reVersion().MatchString(v) {
		return true
	}
	if allSameRune(norm) || isDigitRun(norm) {
		return true
	}
	switch {
	case strings.HasPrefix(v, "/"), strings.HasPrefix(v, "~/"), strings.HasPrefix(v, "./"),
		strings.HasPrefix(v, "../"), strings.HasPrefix(v, "file:"):
		return true
	}
	return false
}

// isPlaceholderPhrase: a value made only of letters and separators whose
// words are a placeholder phrase — it starts with one of phraseLeads and
// every word is a phraseWords word (your-password-here, YOUR_API_KEY,
// enter your token), or it ends with "here" (PUT-TOKEN-HERE), or it is a
// lowercase separated phrase of such words only (secret-value,
// secure_password). A camel-case
// value starting with "my" (mySecretPwd) is a password someone chose, not a
// phrase: "my" leads only a separated phrase (my_api_key).
func isPlaceholderPhrase(v string) bool {
	sep := false
	for _, r := range v {
		switch {
		case r == '-' || r == '_' || r == ' ' || r == '.':
			sep = true
		case !unicode.IsLetter(r) && r != '\'':
			return false
		}
	}
	words := splitKey(v)
	if len(words) < 2 {
		return false
	}
	if words[len(words)-1] == "here" {
		return true
	}
	if sep && strings.ToLower(v) == v {
		// secret-value, secure-password, this_is_the_secret: words only
		allWords := true
		for _, w := range words {
			allWords = allWords && (phraseWords[w] || phraseLeads[w])
		}
		if allWords {
			return true
		}
	}
	if !phraseLeads[words[0]] || words[0] == "my" && !sep {
		return false
	}
	for _, w := range words[1:] {
		if !phraseWords[w] && !phraseLeads[w] {
			return false
		}
	}
	return true
}

// isDigitRun: 1234, 123456, 0123456789 — ascending digits.
func isDigitRun(v string) bool {
	if len(v) < 4 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' || i > 0 && v[i] != v[i-1]+1 {
			return false
		}
	}
	return true
}

func allSameRune(v string) bool {
	var first rune
	for i, r := range v {
		if i == 0 {
			first = r
		} else if r != first {
			return false
		}
	}
	return true
}

// dedupeSpans drops spans that overlap an earlier-found, longer or equal one.
func dedupeSpans(as []assignment) []assignment {
	if len(as) < 2 {
		return as
	}
	sort.SliceStable(as, func(i, j int) bool {
		if as[i].start != as[j].start {
			return as[i].start < as[j].start
		}
		return as[i].end-as[i].start > as[j].end-as[j].start
	})
	out := as[:0:0]
	for _, a := range as {
		if len(out) > 0 {
			p := out[len(out)-1]
			if a.start < p.end {
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// echoesKey reports a value that only repeats its key's name, as in a lookup
// table `".htpasswd": "htpasswd"` or a constant `InvalidPageToken =
// "invalid_page_token"`: names, not credentials; so is the key's name with
// more letters around it. A value that holds the key and digits or symbols
// (AdminPassword=AdminPassword123) is a password built on a name.
func echoesKey(line string, keyStart int, value string) bool {
	i := keyStart
	for i < len(line) && strings.ContainsRune("\"'$<@", rune(line[i])) {
		i++
	}
	j := i
	for j < len(line) && (isWordByte(line[j]) || line[j] == '.' || line[j] == '-') {
		j++
	}
	key, val := alnumLower(line[i:j]), alnumLower(value)
	if len(val) < 4 || key == "" {
		return false
	}
	for k := 0; k < len(value); k++ {
		if !isWordByte(value[k]) && value[k] != '.' && value[k] != '-' {
			return false // a symbol: not a name
		}
	}
	if strings.Contains(key, val) {
		return true
	}
	// The key's name and more letters (AwsSecretAccessKey for
	// SecretAccessKey, auth-secret for secret) is a name too; with digits
	// or symbols (AdminPassword123) it is a password built on a name.
	if i := strings.Index(val, key); i >= 0 {
		rest := val[:i] + val[i+len(key):]
		return strings.IndexFunc(rest, func(r rune) bool { return r < 'a' || r > 'z' }) < 0
	}
	return false
}

// reObjectName is a Kubernetes object name (a DNS label), with an optional
// namespace: default/ca-secret.
var reObjectName = regexps.MustCompile(`^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?/)?[a-z](?:[a-z0-9-]*[a-z0-9])?$`)

// namesSecretObject reports a value that names a secret rather than holds
// one: under a key whose last word is "secret" (secret:, auth-secret:,
// certSecret:, secretName:), a lowercase object name with a '-' or '/' or
// a word of its kind in it (ca-secret, default/basic-auth, tlssecret).
func namesSecretObject(line string, keyStart int, value string) bool {
	i := keyStart
	for i < len(line) && strings.ContainsRune("\"'$<@", rune(line[i])) {
		i++
	}
	j := i
	for j < len(line) && (isWordByte(line[j]) || line[j] == '.' || line[j] == '-') {
		j++
	}
	words := splitKey(line[i:j])
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	if last == "name" || last == "ref" {
		if len(words) < 2 || words[len(words)-2] != "secret" {
			return false
		}
	} else if last != "secret" && last != "secrets" {
		return false
	}
	v := strings.TrimSpace(value)
	if !reObjectName().MatchString(v) || strings.Count(v, "") > 64 {
		return false
	}
	digits := 0
	for k := 0; k < len(v); k++ {
		if v[k] >= '0' && v[k] <= '9' {
			digits++
		}
	}
	if digits > 3 {
		return false
	}
	if strings.ContainsAny(v, "-/") {
		return true
	}
	for _, w := range []string{"secret", "tls", "cert", "auth", "cred", "key", "token", "basic", "ca"} {
		if strings.Contains(v, w) {
			return true
		}
	}
	return false
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func alnumLower(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c - 'A' + 'a')
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteByte(c)
		}
	}
	return b.String()
}
