package audit

import (
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode"

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
const assignRulesVersion = "3"

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
	}
	// ini, cfg, conf, properties, yaml, toml, Makefile, markdown, text and
	// unknown files: an unquoted value is taken literally.
	return fileSyntax{unquoted: true}
}

// Regular expressions. Keys are matched syntactically and then checked with
// keyIsCredential, so a non-credential key never hides a credential one.
const (
	keyChars = `[$@]?[A-Za-z_][\w.\-]*`
	qDouble  = `"(?:[^"\\\n]|\\.)*"`
	qSingle  = `'(?:[^'\\\n]|\\.)*'`
	qBack    = "`[^`\\n]*`"
)

var (
	// key <sep> "quoted": source code, json, yaml, toml, ini, php arrays,
	// xml attributes, shell.
	reQuoted = regexp.MustCompile(`(?:^|[^\w.\-$@])["'` + "`" + `]?(` + keyChars + `)["'` + "`" + `]?\]?` +
		`(?:\s*:\s*[A-Za-z_][\w.\[\]]*\??|\s+([A-Za-z_][\w.\[\]]*))?` + // `: str`, `: String`; `string` (Go) or the name after a type (Java)
		`\s*(?:=|:=|:|=>|\?=|\?\?=|\|\|=)\s*(?:[rRbBuU]|@)?(` + qDouble + `|` + qSingle + `|` + qBack + `)`)
	// key <sep> unquoted value (config files only); the value is read in code.
	reUnquotedKey = regexp.MustCompile(`(?:^|[^\w.\-$@/])["']?(` + keyChars + `)["']?[ \t]*(?:=|:=|::=|\?=|:)[ \t]*`)
	// Dockerfile `ENV PASSWORD value` (old space-separated form).
	reDockerEnv = regexp.MustCompile(`^\s*(?i:ENV)\s+(` + keyChars + `)[ \t]+([^\s=].*)$`)
	// <password>value</password>
	reXMLElem = regexp.MustCompile(`<([A-Za-z_][\w.:\-]*)(?:\s[^<>]*)?>([^<>]+)</([A-Za-z_][\w.:\-]*)\s*>`)
	// <add key="Password" value="…"/>, <property name="password" value="…"/>
	reXMLKeyValue = regexp.MustCompile(`\b(?:key|name)\s*=\s*(?:"([^"]*)"|'([^']*)')\s+value\s*=\s*(` + qDouble + `|` + qSingle + `)`)
	// define('DB_PASSWORD', '…');
	rePHPDefine = regexp.MustCompile(`\bdefine\s*\(\s*['"]([^'"]+)['"]\s*,\s*(` + qDouble + `|` + qSingle + `)`)
	// …;Password=…;… (ADO.NET / JDBC / ODBC connection strings)
	reConnString = regexp.MustCompile(`(?i)(^|[;"'])\s*(password|pwd)\s*=\s*([^;"'\r\n]*)`)
	// ?token=… &api_key=…
	reQueryParam = regexp.MustCompile(`[?&](` + keyChars + `)=([^&\s#"'<>` + "`" + `;,)]+)`)
	// scheme://user:password@host
	reURLUserinfo = regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.\-]{1,30}://([^\s:@/?#'"<>` + "`" + `]*):([^\s/?#'"<>` + "`" + `]*)@[\w\-\[]`)
)

// credential keywords, as the last word(s) of a key.
var (
	// A key whose last word is exactly one of these, or ends with one of
	// the "long" ones (dbpassword, mysecret, authtoken).
	credExactWords  = map[string]bool{"pass": true, "pwd": true}
	credSuffixWords = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey", "secretkey", "privatekey"}
	credWordPairs   = [][2]string{{"api", "key"}, {"access", "key"}, {"secret", "key"}, {"private", "key"}}
)

// keyIsCredential reports whether a key names a credential: its last word
// (after splitting on punctuation and camelCase) is pass/pwd or ends with
// password, passwd, passphrase, secret, token, apikey, …, or its last two
// words are api key, access key, secret key or private key.
func keyIsCredential(key string) bool {
	words := splitKey(key)
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	if credExactWords[last] {
		return true
	}
	for _, s := range credSuffixWords {
		if strings.HasSuffix(last, s) {
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

// lineMayHaveCredential is a cheap prefilter.
func lineMayHaveCredential(lower string) bool {
	if strings.Contains(lower, "pass") || strings.Contains(lower, "pwd") ||
		strings.Contains(lower, "secret") || strings.Contains(lower, "token") ||
		(strings.Contains(lower, "://") && strings.Contains(lower, "@")) {
		return true
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

func findAssignments(filePath, text string, li *lineIndex) []assignment {
	syn := syntaxOf(filePath)
	var out []assignment
	n := li.lines()
	var lowerBuf []byte
	for l := 1; l <= n; l++ {
		ls, le := li.start(l), li.end(l)
		if ls >= len(text) {
			break
		}
		line := strings.TrimSuffix(text[ls:le], "\r")
		if len(line) < 5 {
			continue
		}
		lowerBuf = appendLowerASCII(lowerBuf[:0], line)
		if !lineMayHaveCredential(string(lowerBuf)) || strings.Contains(line, "gitleaks:allow") {
			continue
		}
		var found []assignment
		add := func(rule string, keyStart, vs, ve int) {
			// trim surrounding whitespace from the value
			for vs < ve && (line[vs] == ' ' || line[vs] == '\t') {
				vs++
			}
			for ve > vs && (line[ve-1] == ' ' || line[ve-1] == '\t') {
				ve--
			}
			if ve <= vs || isPlaceholder(line[vs:ve]) || isProse(line[vs:ve]) || echoesKey(line, keyStart, line[vs:ve]) {
				return
			}
			found = append(found, assignment{rule: rule, line: l, matchStart: ls + keyStart, start: ls + vs, end: ls + ve})
		}
		scanLine(line, syn, add)
		out = append(out, dedupeSpans(found)...)
	}
	return out
}

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
func scanLine(line string, syn fileSyntax, add func(rule string, keyStart, vs, ve int)) {
	// Each pattern runs only on lines holding the literals it needs (most
	// lines that pass lineMayHaveCredential hold few of them).
	hasEq := strings.IndexByte(line, '=') >= 0
	// key <sep> "literal"
	for _, m := range findAllIf(strings.ContainsAny(line, "\"'`"), reQuoted, line) {
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
	for _, m := range findAllIf(strings.Contains(line, "</"), reXMLElem, line) {
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
	for _, m := range findAllIf(hasEq && strings.Contains(line, "value"), reXMLKeyValue, line) {
		ks, ke := m[2], m[3]
		if ks < 0 {
			ks, ke = m[4], m[5]
		}
		if keyIsCredential(line[ks:ke]) {
			add(RulePasswordAssignment, ks, m[6]+1, m[7]-1)
		}
	}
	// define('DB_PASSWORD', '…')
	for _, m := range findAllIf(strings.Contains(line, "define"), rePHPDefine, line) {
		if keyIsCredential(line[m[2]:m[3]]) {
			add(RulePasswordAssignment, m[2], m[4]+1, m[5]-1)
		}
	}
	// …;Password=…;
	for _, m := range findAllIf(hasEq, reConnString, line) {
		vs, ve := m[6], m[7]
		for ve > vs && line[ve-1] == ' ' {
			ve--
		}
		// only inside a connection string: `;` before the key or after the value
		if line[m[2]:m[3]] == ";" || (m[7] < len(line) && line[m[7]] == ';') {
			add(RulePasswordAssignment, m[4], vs, ve)
		}
	}
	// ?token=…
	for _, m := range findAllIf(hasEq && strings.ContainsAny(line, "?&"), reQueryParam, line) {
		if keyIsCredential(line[m[2]:m[3]]) {
			add(RulePasswordAssignment, m[2], m[4], m[5])
		}
	}
	// scheme://user:password@host
	for _, m := range findAllIf(strings.Contains(line, "://") && strings.IndexByte(line, '@') >= 0, reURLUserinfo, line) {
		add(RulePasswordInURL, m[0], m[4], m[5])
	}
	if !syn.unquoted {
		return
	}
	// key=value, key: value (config files, shell, docs)
	for _, m := range findAllIf(hasEq || strings.IndexByte(line, ':') >= 0, reUnquotedKey, line) {
		if !keyIsCredential(line[m[2]:m[3]]) {
			continue
		}
		if vs, ve, ok := unquotedValue(line, m[1], syn); ok {
			add(RulePasswordAssignment, m[2], vs, ve)
		}
	}
	if m := reDockerEnv.FindStringSubmatchIndex(line); m != nil && keyIsCredential(line[m[2]:m[3]]) {
		if vs, ve, ok := unquotedValue(line, m[4], fileSyntax{unquoted: true, word: true}); ok {
			add(RulePasswordAssignment, m[2], vs, ve)
		}
	}
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
	}
	// your-password-here, <enter token>, my_api_key, example-secret, …
	rePlaceholderPhrase = regexp.MustCompile(`(?i)^(?:your|my|the|enter|insert|put|replace|add|set|some|example|sample|dummy|fake|test|demo|default)[-_ .]?.*(?:password|passwd|pass|pwd|secret|token|key|here|value)s?$|(?i)[-_ .](?:goes[-_ .])?here$`)
	// Values that reference something else.
	reReference = regexp.MustCompile(`(?i)^(?:\$[A-Za-z_]\w*$|\$\(|%\(|%[A-Za-z_][\w]*%$|@[A-Za-z_][\w.]*@$|__[A-Za-z_]\w*__$|<[^<>]*>$|\{[^{}]*\}$|\[[^\[\]]*\]$)|\$\{|\{\{|\{%|<%|#\{|%\{|(?:^|[^\w])(?:os\.getenv|getenv|os\.environ|process\.env|env\(|env\[|environment\.getenvironmentvariable|system\.getenv|secrets\.|vault\(|lookup\(|!vault|enc\[|arn:aws:secretsmanager|arn:aws:ssm)`)
	reMask      = regexp.MustCompile(`(?i)\*{3,}|x{4,}|\.{3,}|•{3,}`)
	// printf verbs: %s, %v, %d
	rePrintf = regexp.MustCompile(`^%[-+# 0-9.]*[a-zA-Z]$`)
)

// isPlaceholder reports whether v is not a credential value: an empty or
// short value, a reference, a template, a null/boolean literal, a mask or an
// example phrase, a file path.
func isPlaceholder(v string) bool {
	v = strings.TrimSpace(v)
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
	if strings.HasSuffix(v, "EXAMPLE") || reReference.MatchString(v) || reMask.MatchString(v) ||
		rePrintf.MatchString(v) || rePlaceholderPhrase.MatchString(v) {
		return true
	}
	if allSameRune(v) {
		return true
	}
	switch {
	case strings.HasPrefix(v, "/"), strings.HasPrefix(v, "~/"), strings.HasPrefix(v, "./"),
		strings.HasPrefix(v, "../"), strings.HasPrefix(v, "file:"):
		return true
	}
	return false
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
// "invalid_page_token"`: names, not credentials.
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
	return strings.Contains(key, val) || strings.Contains(val, key)
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
