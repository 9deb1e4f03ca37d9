package payouts

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// A night has up to a hundred thousand payouts and as many entries: an
// entry's text is not tried against every payout. It is cut into words
// (runs of letters and digits), and each word is looked up among the
// words the payouts' ids and references are indexed by; only the few
// names found so are tried whole (namesAt) where the word stands.

// isWordRune reports whether r belongs to a word: a letter or a digit.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// edgeBefore reports whether s[:i] ends at a word's edge.
func edgeBefore(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return !isWordRune(r)
}

// edgeAfter reports whether s[i:] begins at a word's edge.
func edgeAfter(s string, i int) bool {
	if i >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return !isWordRune(r)
}

// nextWord returns where the first word of s at or after i begins and
// ends; begin is len(s) when there is none.
func nextWord(s string, i int) (begin, end int) {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isWordRune(r) {
			break
		}
		i += size
	}
	begin = i
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			break
		}
		i += size
	}
	return begin, i
}

// foldByte is an ASCII byte in lower case: a quick look before
// strings.EqualFold, which most places of a text fail at their first byte.
func foldByte(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// refIndex finds the payouts whose id or reference an entry's text
// names. Each name is indexed by one of its words, the one fewest names
// share: Stripe's ids all begin with the word "po", Adyen's batches are
// all "batch <n>", and a lookup of such a word would try them all.
type refIndex struct {
	words map[string]int32 // a word of the names → its number
	first []int32          // by word: the first name indexed by it; -1 none
	names []refName
}

type refName struct {
	text   string // a payout's id or reference, as the bank may show it
	at     int    // where its indexed word begins in text
	payout int32
	next   int32 // the next name indexed by the same word; -1 ends
}

// refs are the texts an entry may name a payout by (rule 15b): its id,
// and its reference where the file gives one. A name of fewer than
// minRefLen characters is never looked for.
func refs(p *Open) [2]string {
	var out [2]string
	for i, s := range []string{p.ID, p.Reference} {
		if utf8.RuneCountInString(s) >= minRefLen && (i == 0 || s != p.ID) {
			out[i] = s
		}
	}
	return out
}

func newRefIndex(pays []*Open) *refIndex {
	x := &refIndex{words: make(map[string]int32, 2*len(pays)), names: make([]refName, 0, len(pays))}
	var shared []int32 // by word: how many names hold it
	type word struct{ at, id int32 }
	var words []word // each name's words, in one array
	ends := make([]int32, 0, len(pays))
	for i, p := range pays {
		if p.Amount == 0 {
			continue // never open, never sent back
		}
		for _, s := range refs(p) {
			for b, e := nextWord(s, 0); b < len(s); b, e = nextWord(s, e) {
				id, ok := x.words[s[b:e]]
				if !ok {
					id = int32(len(shared))
					x.words[s[b:e]] = id
					shared = append(shared, 0)
				}
				shared[id]++
				words = append(words, word{int32(b), id})
			}
			if s != "" {
				x.names = append(x.names, refName{text: s, payout: int32(i)})
				ends = append(ends, int32(len(words)))
			}
		}
	}
	x.first = make([]int32, len(shared))
	for i := range x.first {
		x.first[i] = -1
	}
	from := int32(0)
	for k := range x.names {
		nm := &x.names[k]
		best := word{at: -1}
		for _, w := range words[from:ends[k]] {
			if best.at < 0 || shared[w.id] < shared[best.id] {
				best = w
			}
		}
		from = ends[k]
		// A name without a letter or a digit has no word to be found by.
		if best.at >= 0 {
			nm.at, nm.next = int(best.at), x.first[best.id]
			x.first[best.id] = int32(k)
		}
	}
	return x
}

// find appends to dst each payout a text names that dst does not hold
// from its own entry on (dst[from:]). Where one name stands inside a
// longer one the text names (PAY-0001 in "PAY-0001-B"), the longer is
// the one named.
func (x *refIndex) find(dst []int32, from int, text string) []int32 {
	type match struct {
		begin, end int
		payout     int32
	}
	var found []match
	for b, e := nextWord(text, 0); b < len(text); b, e = nextWord(text, e) {
		id, ok := x.words[text[b:e]]
		if !ok {
			continue
		}
		for k := x.first[id]; k >= 0; k = x.names[k].next {
			nm := &x.names[k]
			if at := b - nm.at; namesAt(text, nm.text, at) {
				found = append(found, match{at, at + len(nm.text), nm.payout})
			}
		}
	}
	for _, m := range found {
		inside := slices.ContainsFunc(found, func(o match) bool {
			return o.begin <= m.begin && m.end <= o.end && o.end-o.begin > m.end-m.begin
		})
		if !inside && !slices.Contains(dst[from:], m.payout) {
			dst = append(dst, m.payout)
		}
	}
	return dst
}

// scan lists, for each booked entry, the payouts its end-to-end id, bank
// reference or remittance names, each field read on its own.
func (x *refIndex) scan(ents []*Entry) spans {
	s := spans{at: make([]int32, 1, len(ents)+1), list: make([]int32, 0, len(ents))}
	for _, e := range ents {
		if booked(e.BankEntry) && len(x.names) > 0 {
			from := len(s.list)
			for _, text := range [...]string{e.EndToEndID, e.BankRef, e.Remittance} {
				s.list = x.find(s.list, from, text)
			}
		}
		s.end()
	}
	return s
}
