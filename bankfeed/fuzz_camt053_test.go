package bankfeed

import (
	"strings"
	"testing"
)

// FuzzCamt053 feeds the camt.053 reader its golden files and the small
// statement of its tests changed at random, with a few seeds that reach
// the refusals: a DOCTYPE, an entity, a batch under Btch, a .08 status.
func FuzzCamt053(f *testing.F) {
	fuzzReader(f, "camt053",
		[]byte(camtGood),
		[]byte(strings.Replace(camtGood, "<BkToCstmrStmt>", `<!DOCTYPE d [<!ENTITY e "x">]><BkToCstmrStmt>`, 1)),
		[]byte(strings.Replace(camtGood, `<Sts>BOOK</Sts>`, `<Sts><Cd>PDNG</Cd></Sts><RvslInd>1</RvslInd>`, 1)),
		[]byte(strings.Replace(camtGood, `</Ntry>`, `<NtryDtls><Btch><TxDtls><Refs><EndToEndId>a&amp;b</EndToEndId></Refs>`+
			`<RltdPties><Dbtr><Pty><Nm>P</Nm></Pty></Dbtr></RltdPties><RmtInf><Ustrd>u&#x20AC;</Ustrd><Strd><CdtrRefInf><Ref>RF18</Ref>`+
			`</CdtrRefInf></Strd></RmtInf></TxDtls></Btch></NtryDtls><AddtlNtryInf><![CDATA[x < y]]></AddtlNtryInf></Ntry>`, 1)),
		[]byte(strings.Replace(camtGood, "\n", "\r\n", -1)),
	)
}
