package audit

import (
	"regexp"
	"strings"
)

// The assignment scan as it was before it was made cheaper (the regexps
// run over whole candidate lines), kept as the reference the differential
// tests compare the current one with: same findings, same order, same
// positions.

// lineMayHaveCredential is the line prefilter as one predicate: a
// credential word, a URL with userinfo, a connection form or a command
// that takes a password. findAssignments gets its answer from
// credentialLines' marks and mayHaveCredentialBesideWords
// (TestCredentialLinesCoverPrefilter holds the two to it).
func lineMayHaveCredential(lower, line string) bool {
	if strings.Contains(lower, "pass") || strings.Contains(lower, "pwd") ||
		strings.Contains(lower, "secret") || strings.Contains(lower, "token") ||
		strings.Contains(lower, "auth") {
		return true
	}
	for _, w := range credentialWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	for _, w := range cmdTriggers {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return mayHaveCredentialBesideWords(lower, line)
}

func findAssignmentsRef(filePath, text string, li *lineIndex) []assignment {
	syn := syntaxOf(filePath)
	var out []assignment
	n := li.lines()
	var lowerBuf []byte
	candidate, _ := credentialLines(text, li)
	for l := 1; l <= n; l++ {
		ls, le := li.start(l), li.end(l)
		if ls >= len(text) {
			break
		}
		line := strings.TrimSuffix(text[ls:le], "\r")
		if len(line) < 5 || candidate[l] == 0 {
			continue
		}
		lowerBuf = appendLowerASCII(lowerBuf[:0], line)
		lower := string(lowerBuf)
		if !lineMayHaveCredential(lower, line) || strings.Contains(line, "gitleaks:allow") {
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
		scanLineRef(line, lower, syn, add)
		out = append(out, dedupeSpans(found)...)
	}
	return out
}

func scanLineRef(line, lower string, syn fileSyntax, add func(rule string, keyStart, vs, ve int)) {
	// Each pattern runs only on lines holding the literals it needs (most
	// lines that pass lineMayHaveCredential hold few of them).
	hasEq := strings.IndexByte(line, '=') >= 0
	// key <sep> "literal"
	for _, m := range findAllIfRef(strings.ContainsAny(line, "\"'`"), reQuoted(), line) {
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
	for _, m := range findAllIfRef(strings.Contains(line, "</"), reXMLElem(), line) {
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
	for _, m := range findAllIfRef(hasEq && strings.Contains(line, "value"), reXMLKeyValue(), line) {
		ks, ke := m[2], m[3]
		if ks < 0 {
			ks, ke = m[4], m[5]
		}
		if keyIsCredential(line[ks:ke]) {
			add(RulePasswordAssignment, ks, m[6]+1, m[7]-1)
		}
	}
	// define('DB_PASSWORD', '…')
	for _, m := range findAllIfRef(strings.Contains(line, "define"), rePHPDefine(), line) {
		if keyIsCredential(line[m[2]:m[3]]) {
			add(RulePasswordAssignment, m[2], m[4]+1, m[5]-1)
		}
	}
	// …;Password=…;
	for _, m := range findAllIfRef(hasEq, reConnString(), line) {
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
	for _, m := range findAllIfRef(hasEq && strings.ContainsAny(line, "?&"), reQueryParam(), line) {
		if keyIsCredential(line[m[2]:m[3]]) {
			add(RulePasswordAssignment, m[2], m[4], m[5])
		}
	}
	// scheme://user:password@host
	for _, m := range findAllIfRef(strings.Contains(line, "://") && strings.IndexByte(line, '@') >= 0, reURLUserinfo(), line) {
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
	connectionFormsRef(line, add)
	if !syn.unquoted {
		// Shell lines in any file (a notebook's %env and !export, a
		// README's code), and key=value pairs inside strings (libpq
		// connection strings, command arguments).
		if isShellAssignmentLine(line) {
			unquotedAssignmentsRef(line, 0, fileSyntax{unquoted: true, word: true}, true, add)
		}
		if hasEq {
			eachQuoted(line, func(s, e int) {
				if strings.IndexByte(line[s:e], '=') >= 0 {
					unquotedAssignmentsRef(line[s:e], s, fileSyntax{unquoted: true, word: true}, false, add)
				}
			})
		}
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
	for _, m := range findAllIfRef(hasEq || strings.IndexByte(line, ':') >= 0, reUnquotedKey(), line) {
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

func unquotedAssignmentsRef(text string, off int, syn fileSyntax, colon bool, add func(rule string, keyStart, vs, ve int)) {
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

func findAllIfRef(ok bool, re *regexp.Regexp, line string) [][]int {
	if !ok {
		return nil
	}
	return re.FindAllStringSubmatchIndex(line, -1)
}

func connectionFormsRef(line string, add func(rule string, keyStart, vs, ve int)) {
	if strings.IndexByte(line, '@') >= 0 {
		for _, m := range reGoDSN().FindAllStringSubmatchIndex(line, -1) {
			add(RulePasswordInURL, m[2], m[4], m[5])
		}
		for _, m := range reOracleJDBC().FindAllStringSubmatchIndex(line, -1) {
			add(RulePasswordInURL, m[2], m[4], m[5])
		}
	}
	if strings.IndexByte(line, ',') >= 0 {
		for _, m := range reAuthPair().FindAllStringSubmatchIndex(line, -1) {
			add(RulePasswordAssignment, m[2], m[4]+1, m[5]-1)
		}
	}
}
