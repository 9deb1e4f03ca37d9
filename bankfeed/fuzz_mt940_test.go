package bankfeed

import "testing"

func FuzzMT940(f *testing.F) {
	fuzzReader(f, "mt940",
		[]byte(mtStmt(mtGood61, mtGood62)),
		[]byte("{1:F01BANKBEBBAXXX0000000000}{2:O940BANKBEBBXXXXN}{4:\n"+mtStmt(mtGood61, mtGood62)+"-}\n"),
		[]byte(mtStmt(":61:2601021231RDR50,00N062KREF+//B1\n/TRCD/1/", mtGood62)),
		[]byte(mtStmt(mtGood61, mtGood62)+"-\n"+mtDoc(":20:S", ":25:A", ":28C:1", ":60M:C260310EUR0,", ":86:105?20EREF+X?32N", ":62M:C260310EUR0,")),
	)
}
