package audit

import (
	"path"
	"strings"
)

// Passwords that no key names: on command lines (docker login -p X, mysql
// -pX, sshpass -p X, htpasswd -b file user X, …), in connection strings
// without a scheme (Go's user:pass@tcp(host)/db, Oracle's user/pass@db) and
// as the second argument of a login or basic-auth call (auth=("u", "p"),
// login("u", "p")).

// word is one shell word of a line: [s,e) is its text without surrounding
// quotes; op marks a command separator (| ; & && ||).
type word struct {
	s, e   int
	quoted bool
	op     bool
}

// shellWords splits line into shell-like words. Quotes group (a quoted
// section inside a word, as in --password="a b", stays part of it), and
// besides white space the separators of argument lists (`,`, brackets,
// parentheses) split words, so `["mysql", "-pX"]` reads like `mysql -pX`.
func shellWords(line string) []word {
	var out []word
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == ',' || c == '[' || c == ']' || c == '(' || c == ')' || c == '{' || c == '}':
			i++
			continue
		case c == '|' || c == ';' || c == '&':
			j := i
			for j < len(line) && (line[j] == '|' || line[j] == ';' || line[j] == '&') {
				j++
			}
			out = append(out, word{s: i, e: j, op: true})
			i = j
			continue
		case c == '"' || c == '\'' || c == '`':
			j := closingQuote(line, i)
			out = append(out, word{s: i + 1, e: j, quoted: true})
			i = j + 1
			continue
		}
		j := i
		for j < len(line) {
			d := line[j]
			if d == '"' || d == '\'' {
				j = closingQuote(line, j) + 1
				continue
			}
			if d == ' ' || d == '\t' || d == ',' || d == '[' || d == ']' || d == '(' || d == ')' || d == '|' || d == ';' || d == '&' || d == '{' || d == '}' {
				break
			}
			j++
		}
		if j > len(line) {
			j = len(line)
		}
		out = append(out, word{s: i, e: j})
		i = j
	}
	return out
}

// closingQuote is the offset of the quote closing the one at i (a backslash
// escapes in double quotes), or len(line) when it is not closed.
func closingQuote(line string, i int) int {
	q := line[i]
	for j := i + 1; j < len(line); j++ {
		if q == '"' && line[j] == '\\' {
			j++
			continue
		}
		if line[j] == q {
			return j
		}
	}
	return len(line)
}

// unquote narrows [s,e) to the inside of the quotes around it, if any.
func unquote(line string, s, e int) (int, int) {
	if e-s >= 2 && (line[s] == '"' || line[s] == '\'') && line[e-1] == line[s] {
		return s + 1, e - 1
	}
	return s, e
}

// Commands whose short options take a password, by option.
var (
	mysqlCmds   = set("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mysqlpump", "mysqlsh", "mariadb", "mariadb-dump", "mariadb-admin", "mariadb-import", "7z", "7za", "7zr", "unrar")
	loginCmds   = set("docker", "podman", "buildah", "nerdctl", "skopeo", "oras", "helm", "crane", "regctl", "finch")
	dashPCmds   = set("sshpass", "mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat", "mongotop", "rdesktop")
	dashUpperP  = set("sqlcmd", "bcp", "osql", "isql", "ipmitool")
	dashW       = set("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare", "ldapmodrdn", "ldapexop")
	dashA       = set("redis-cli", "keydb-cli")
	userPercent = set("smbclient", "rpcclient", "smbmap", "smbget", "smbcacls")
	userColon   = set("curl")
	oracleCmds  = set("sqlplus", "sqlldr", "expdp", "impdp", "rman", "sqlcl")
	freerdp     = set("xfreerdp", "wlfreerdp", "sdl-freerdp")
	javaKeyOpts = set("-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass", "-destkeypass")
	opensslPass = set("-passin", "-passout", "-pass", "-password", "-passphrase")
)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// cmdTriggers are literals one of which a line must hold for commandLine to
// have anything to find (lowercased line).
var cmdTriggers = []string{
	"mysql", "mariadb", "7z", "unrar", "login", "sshpass", "mongo", "rdesktop", "sqlcmd", "bcp", "osql", "isql",
	"ipmitool", "ldap", "redis-cli", "keydb-cli", "smb", "rpcclient", "curl", "sqlplus", "sqlldr", "expdp",
	"impdp", "rman", "sqlcl", "freerdp", "storepass", "keypass", "pass", "htpasswd",
}

// commandLine reports the passwords of the command lines in words: options
// of known commands, `--<credential>=value` / `--<credential> value` of any
// command, htpasswd's batch mode and `echo X | … --password-stdin`. literal
// says whether an unquoted word is literal text (shell, config, docs) or an
// expression (source code, where only quoted words are values).
func commandLine(line string, words []word, literal bool, add func(rule string, keyStart, vs, ve int)) {
	val := func(w word) (int, int, bool) {
		if !w.quoted && !literal {
			return 0, 0, false
		}
		s, e := unquote(line, w.s, w.e)
		if s >= e || w.op {
			return 0, 0, false
		}
		return s, e, true
	}
	text := func(w word) string { return line[w.s:w.e] }
	// Segments between separators; a pipe keeps what came before for
	// --password-stdin.
	segStart := 0
	var prevSeg []word
	for i := 0; i <= len(words); i++ {
		if i < len(words) && !words[i].op {
			continue
		}
		seg := words[segStart:i]
		commandSegment(line, seg, prevSeg, val, text, add)
		if i < len(words) && strings.Contains(text(words[i]), "|") && !strings.Contains(text(words[i]), "||") {
			prevSeg = seg
		} else {
			prevSeg = nil
		}
		segStart = i + 1
	}
}

func commandSegment(line string, seg, piped []word, val func(word) (int, int, bool), text func(word) string, add func(string, int, int, int)) {
	if len(seg) == 0 {
		return
	}
	emit := func(_ word, s, e int) {
		if s < e {
			add(RulePasswordAssignment, -1, s, e)
		}
	}
	// The value after an option word: attached (`-pX`, `--password=X`) or
	// the next word.
	next := func(j int) (int, int, bool) {
		if j+1 >= len(seg) {
			return 0, 0, false
		}
		n := seg[j+1]
		if !n.quoted && strings.HasPrefix(text(n), "-") {
			return 0, 0, false
		}
		return val(n)
	}
	stdin := false
	for _, w := range seg {
		if text(w) == "--password-stdin" {
			stdin = true
		}
	}
	if stdin && len(piped) == 2 && (text(piped[0]) == "echo" || text(piped[0]) == "printf") {
		if s, e, ok := val(piped[1]); ok {
			emit(piped[1], s, e)
		}
	}
	cmd, login := "", false
	htFlags, htArgs := "", []word(nil)
	for j, w := range seg {
		t := text(w)
		// A command may follow a prompt or a marker: `$ mysql …`, a diff's
		// `+mysql …`, a notebook's `!mysql …`.
		if base := path.Base(strings.TrimLeft(t, "+-!$>")); isCommandName(base) {
			cmd, login = base, false
			continue
		}
		if loginCmds[cmd] && t == "login" {
			login = true
			continue
		}
		// --password=X, --db-password X, --token=X: any command.
		if strings.HasPrefix(t, "--") && len(t) > 2 {
			name, _, hasEq := strings.Cut(t[2:], "=")
			if strings.HasPrefix(name, "no-") || !keyIsCredential(name) {
				continue
			}
			if hasEq {
				if _, _, ok := val(w); ok {
					s, e := unquote(line, w.s+2+len(name)+1, w.e)
					emit(w, s, e)
				}
			} else if s, e, ok := next(j); ok {
				emit(w, s, e)
			}
			continue
		}
		switch {
		case javaKeyOpts[t], opensslPass[t]:
			if s, e, ok := next(j); ok {
				if opensslPass[t] && strings.HasPrefix(line[s:e], "pass:") {
					s += len("pass:")
				}
				emit(w, s, e)
			}
			continue
		case strings.HasPrefix(t, "pass:") && len(t) > len("pass:") && j > 0 && opensslPass[text(seg[j-1])]:
			continue // taken with its option
		}
		switch {
		case mysqlCmds[cmd] && strings.HasPrefix(t, "-p") && len(t) > 2 && t[2] != '-':
			if s, e, ok := val(w); ok {
				emit(w, s+2, e)
			}
		case (login && t == "-p") || (dashPCmds[cmd] && t == "-p"):
			if s, e, ok := next(j); ok {
				emit(w, s, e)
			}
		case (login || cmd == "sshpass") && strings.HasPrefix(t, "-p") && len(t) > 2 && t[2] != '-':
			if s, e, ok := val(w); ok {
				emit(w, s+2, e)
			}
		case dashUpperP[cmd] && t == "-P", dashW[cmd] && t == "-w", dashA[cmd] && t == "-a":
			if s, e, ok := next(j); ok {
				emit(w, s, e)
			}
		case userPercent[cmd] && (t == "-U" || t == "--user"):
			if s, e, ok := next(j); ok {
				if k := strings.IndexByte(line[s:e], '%'); k >= 0 {
					emit(w, s+k+1, e)
				}
			}
		case userColon[cmd] && (t == "-u" || t == "--user"):
			if s, e, ok := next(j); ok {
				if k := strings.IndexByte(line[s:e], ':'); k >= 0 {
					emit(w, s+k+1, e)
				}
			}
		case userColon[cmd] && strings.HasPrefix(t, "-u") && len(t) > 2:
			if s, e, ok := val(w); ok {
				if k := strings.IndexByte(line[s:e], ':'); k >= 0 {
					emit(w, s+k+1, e)
				}
			}
		case freerdp[cmd] && strings.HasPrefix(t, "/p:"):
			if s, e, ok := val(w); ok {
				emit(w, s+3, e)
			}
		case oracleCmds[cmd] && !strings.HasPrefix(t, "-"):
			if s, e, ok := val(w); ok {
				v := line[s:e]
				if k := strings.IndexByte(v, '/'); k > 0 && !strings.HasPrefix(v[k:], "//") && reOracleUser().MatchString(v[:k]) {
					end := e
					if at := strings.IndexByte(v[k+1:], '@'); at >= 0 {
						end = s + k + 1 + at
					}
					emit(w, s+k+1, end)
				}
			}
			cmd = "" // only the first argument is a logon
		case cmd == "htpasswd":
			if strings.HasPrefix(t, "-") && !w.quoted {
				htFlags += t[1:]
			} else {
				htArgs = append(htArgs, w)
			}
		}
	}
	if cmd == "htpasswd" && strings.Contains(htFlags, "b") {
		want := 3 // file user password
		if strings.Contains(htFlags, "n") {
			want = 2 // user password
		}
		if len(htArgs) >= want {
			if s, e, ok := val(htArgs[want-1]); ok {
				emit(htArgs[want-1], s, e)
			}
		}
	}
}

var reOracleUser = regexps.MustCompile(`^[A-Za-z][\w$#.]*$`)

// isCommandName: a word that can name a command we know.
func isCommandName(base string) bool {
	return mysqlCmds[base] || loginCmds[base] || dashPCmds[base] || dashUpperP[base] || dashW[base] || dashA[base] ||
		userPercent[base] || userColon[base] || oracleCmds[base] || freerdp[base] || base == "htpasswd" ||
		base == "keytool" || base == "jarsigner" || base == "openssl"
}

var (
	// user:password@tcp(host:3306)/db, user:password@unix(/s)/db,
	// user:password@/db (Go's MySQL DSN, no scheme).
	reGoDSN = regexps.MustCompile(`(?:^|[\s"'` + "`" + `=(,])([\w.\-]+):([^\s@'"` + "`" + `]+)@(?:(?:tcp6?|udp|unix)\(|/\w)`)
	// jdbc:oracle:thin:user/password@host…
	reOracleJDBC = regexps.MustCompile(`(?i)jdbc:oracle:\w+:([\w$#.]+)/([^@\s'"` + "`" + `]+)@`)
	// auth=("user", "password"), login("user", "password"),
	// HTTPBasicAuth(user, "password"), new NetworkCredential("u", "p"), …:
	// the second argument when it is a literal.
	reAuthPair = regexps.MustCompile(`(?i)(?:^|[^\w])(auth|basic_?auth|http_?basic_?auth|http_?digest_?auth|digest_?auth|proxy_?auth|set_?basic_?auth|with_?basic_?auth|basic|login|log_?in|sign_?in|authenticate|network_?credential|username_?password_?credentials|password_?authentication|username_?password_?authentication_?token|credentials)\s*(?:=\s*|:\s*)?` + authPairRest)
)

// connectionForms reports passwords of scheme-less connection strings and
// of login calls on a line (lower is line ASCII-lowercased; folds says line
// holds a non-ASCII rune that a case-insensitive pattern takes for an ASCII
// letter). Each pattern runs only on lines holding literals every
// match of it holds: most candidate lines hold none, and running the
// patterns over them was a fifth of the assignment scan.
func connectionForms(line, lower string, folds bool, add func(rule string, keyStart, vs, ve int)) {
	if strings.IndexByte(line, '@') >= 0 {
		// @tcp( @tcp6( @udp( @unix( @/x
		dsn := strings.Contains(line, "@tcp") || strings.Contains(line, "@udp") ||
			strings.Contains(line, "@unix") || strings.Contains(line, "@/")
		for _, m := range findAllIf(dsn, reGoDSN(), line) {
			add(RulePasswordInURL, m[2], m[4], m[5])
		}
		for _, m := range findAllIf(folds || strings.Contains(lower, "jdbc:oracle:"), reOracleJDBC(), line) {
			add(RulePasswordInURL, m[2], m[4], m[5])
		}
	}
	if strings.IndexByte(line, ',') >= 0 && strings.ContainsAny(line, "([{") {
		// On a long line, the rest of a match from its bracket on must
		// follow one of the names too (a minified script holds many).
		var tail func(k int) bool
		if len(line) >= 512 {
			tail = func(k int) bool { return reAuthPairTail().MatchString(line[k:]) }
		}
		for _, m := range findAllIf(folds || nameThenOpen(lower, authPairEnds, tail), reAuthPair(), line) {
			add(RulePasswordAssignment, m[2], m[4]+1, m[5]-1)
		}
	}
}

// authPairRest is reAuthPair from the bracket after the name on: the
// arguments, the second a quoted password.
const authPairRest = `[(\[{]\s*(?:\w+\s*=\s*)?(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[\w.\[\]]+)\s*,\s*(?:\w+\s*=\s*)?("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')`

// reAuthPairTail is authPairRest at the start of a text.
var reAuthPairTail = regexps.MustCompile(`(?i)^` + authPairRest)

// authPairEnds are the endings of every name reAuthPair knows.
var authPairEnds = []string{"auth", "basic", "login", "log_in", "signin", "sign_in", "authenticate", "credential", "credentials", "token"}

// nameThenOpen reports whether lower holds one of names followed, as in
// reAuthPair, by white space, an optional '=' or ':' and white space, and
// an opening bracket at an offset k that at accepts (nil: any).
func nameThenOpen(lower string, names []string, at func(k int) bool) bool {
	skip := func(k int) int {
		for k < len(lower) && (lower[k] == ' ' || lower[k] == '\t' || lower[k] == '\n' || lower[k] == '\f' || lower[k] == '\r') {
			k++
		}
		return k
	}
	for _, n := range names {
		for i := 0; ; {
			j := strings.Index(lower[i:], n)
			if j < 0 {
				break
			}
			k := skip(i + j + len(n))
			if k < len(lower) && (lower[k] == '=' || lower[k] == ':') {
				k = skip(k + 1)
			}
			if k < len(lower) && (lower[k] == '(' || lower[k] == '[' || lower[k] == '{') && (at == nil || at(k)) {
				return true
			}
			i += j + 1
		}
	}
	return false
}
