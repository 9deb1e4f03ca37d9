package matcher

import (
	"fmt"
	"testing"
)

// TestRefundSet: a refund is one however often it is asked for, whether
// the set reads its list or, past refundSetList refunds, its index.
func TestRefundSet(t *testing.T) {
	for _, n := range []int{1, refundSetList, refundSetList + 1, 3 * refundSetList} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := &refundSet{}
			first := map[string]*refundSeen{}
			for i := range n {
				no := fmt.Sprintf("R%d", i)
				r, made := s.get(no)
				if !made || r.no != no {
					t.Fatalf("get(%s) = %+v, %v: want a new refund", no, r, made)
				}
				first[no] = r
			}
			for i := n - 1; i >= 0; i-- {
				no := fmt.Sprintf("R%d", i)
				if r, made := s.get(no); made || r != first[no] {
					t.Errorf("get(%s) again made a refund of its own", no)
				}
			}
			if len(s.list) != n {
				t.Errorf("%d refunds in the list, want %d", len(s.list), n)
			}
			if got, want := s.index != nil, n > refundSetList; got != want {
				t.Errorf("indexed = %v, want %v", got, want)
			}
		})
	}
}
