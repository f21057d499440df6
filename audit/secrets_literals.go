package audit

// literals finds, in one pass over a text, every occurrence of each of a
// set of strings: gitleaks' keywords (which rules its prefilter runs) and
// the rules' anchors (where their windows are). An Aho-Corasick trie walk
// for the keywords and a strings.Index per anchor each cost more than the
// pass; TestLiteralsMatchSearch compares it with both.
type literals struct {
	strs []string
	// first maps a pair of bytes to the index + 1 of the group of strings
	// starting with it (0: none).
	first  []int32
	groups []bigramGroup
	single [256][]int32 // one-byte strings
	empty  []int32      // "" occurs everywhere
}

// bigramGroup holds the ids of the strings starting with one pair of
// bytes: of two bytes (pair) and longer (long), with the set of the
// longer ones' third bytes. A pair of a text starts a group's string about
// once in five bytes, and its third byte rules most of them out (hugo's
// tree: 0.54 string comparisons a byte without the test, 0.08 with it).
type bigramGroup struct {
	pair  []int32
	long  []int32
	third [4]uint64 // bit c: a long string's third byte is c
}

func newLiterals(strs []string) *literals {
	l := &literals{strs: strs, first: make([]int32, 1<<16)}
	for id, s := range strs {
		switch len(s) {
		case 0:
			l.empty = append(l.empty, int32(id))
		case 1:
			l.single[s[0]] = append(l.single[s[0]], int32(id))
		default:
			b := int(s[0])<<8 | int(s[1])
			if l.first[b] == 0 {
				l.groups = append(l.groups, bigramGroup{})
				l.first[b] = int32(len(l.groups))
			}
			g := &l.groups[l.first[b]-1]
			if len(s) == 2 {
				g.pair = append(g.pair, int32(id))
				continue
			}
			g.long = append(g.long, int32(id))
			g.third[s[2]>>6] |= 1 << (s[2] & 63)
		}
	}
	return l
}

// scan calls hit for every occurrence in text of every string whose id
// want holds (nil: every string), in the order of the occurrences' offsets.
func (l *literals) scan(text string, want []bool, hit func(id, at int)) {
	wants := func(id int32) bool { return want == nil || want[id] }
	for _, id := range l.empty {
		if wants(id) {
			for at := 0; at <= len(text); at++ {
				hit(int(id), at)
			}
		}
	}
	for i := 0; i < len(text); i++ {
		for _, id := range l.single[text[i]] {
			if wants(id) {
				hit(int(id), i)
			}
		}
		if i+1 >= len(text) {
			break
		}
		gi := l.first[int(text[i])<<8|int(text[i+1])]
		if gi == 0 {
			continue
		}
		g := &l.groups[gi-1]
		for _, id := range g.pair {
			if wants(id) {
				hit(int(id), i)
			}
		}
		if i+2 >= len(text) {
			continue
		}
		if c := text[i+2]; g.third[c>>6]&(1<<(c&63)) != 0 {
			for _, id := range g.long {
				s := l.strs[id]
				if s[2] == c && len(text)-i >= len(s) && text[i+3:i+len(s)] == s[3:] && wants(id) {
					hit(int(id), i)
				}
			}
		}
	}
}
