package audit

// literals finds, in one pass over a text, every occurrence of each of a
// set of strings: gitleaks' keywords (which rules its prefilter runs) and
// the rules' anchors (where their windows are). An Aho-Corasick trie walk
// for the keywords and a strings.Index per anchor each cost more than the
// pass; TestLiteralsMatchSearch compares it with both.
type literals struct {
	strs []string
	// byBigram holds the ids of the strings starting with a pair of
	// bytes; first maps the pair to its index + 1 (0: none).
	first    []int32
	byBigram [][]int32
	single   [256][]int32 // one-byte strings
	empty    []int32      // "" occurs everywhere
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
				l.byBigram = append(l.byBigram, nil)
				l.first[b] = int32(len(l.byBigram))
			}
			i := l.first[b] - 1
			l.byBigram[i] = append(l.byBigram[i], int32(id))
		}
	}
	return l
}

// scan calls hit for every occurrence in text of every string whose id
// want holds (nil: every string).
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
		g := l.first[int(text[i])<<8|int(text[i+1])]
		if g == 0 {
			continue
		}
		for _, id := range l.byBigram[g-1] {
			s := l.strs[id]
			if len(text)-i >= len(s) && text[i+2:i+len(s)] == s[2:] && wants(id) {
				hit(int(id), i)
			}
		}
	}
}
