package db

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// docs/schema.md must describe every column family and the current format
// version, so that the document cannot silently fall behind schema.go.
func TestSchemaDocCoversEveryColumnFamily(t *testing.T) {
	doc, err := os.ReadFile("../docs/schema.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	ethStart := strings.Index(text, "## Ethereum-type column families")
	if ethStart < 0 {
		t.Fatal("docs/schema.md has no Ethereum-type section")
	}
	// Ethereum's own forms of shared names are headed "name (Ethereum)".
	ethForms := map[CF]bool{CFAddresses: true, CFBlockTxs: true}
	for _, ct := range []bchain.ChainType{bchain.ChainBitcoinType, bchain.ChainEthereumType} {
		for _, cf := range ColumnFamilies(ct) {
			suffix := `( \((cache|off-chain)\))?`
			if ct == bchain.ChainEthereumType && ethForms[cf] {
				suffix = ` \(Ethereum\)`
			}
			heading := regexp.MustCompile(`(?m)^### ` + regexp.QuoteMeta(cf.String()) + suffix + `$`)
			if !heading.MatchString(text) {
				t.Errorf("docs/schema.md has no section '### %s'", cf)
				continue
			}
			if cf.IsCache() && !strings.Contains(text, "### "+cf.String()+" (cache)") {
				t.Errorf("docs/schema.md must mark %s as a cache", cf)
			}
			if cf.IsOffChain() && !strings.Contains(text, "### "+cf.String()+" (off-chain)") {
				t.Errorf("docs/schema.md must mark %s as off-chain", cf)
			}
		}
	}
	if !strings.Contains(text, "Format version: **"+strconv.Itoa(FormatVersion)+"**") {
		t.Errorf("docs/schema.md does not state format version %d", FormatVersion)
	}
	for _, k := range [][]byte{stateKeyFormat, stateKeyCoin, stateKeyNetwork, stateKeyTip, stateKeyCreated, stateKeyBulk, stateKeyFilters, stateKeyRemoved} {
		if !strings.Contains(text, "`"+string(k)+"`") {
			t.Errorf("docs/schema.md does not describe state key %q", k)
		}
	}
}
