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
	for _, ct := range []bchain.ChainType{bchain.ChainBitcoinType} {
		for _, cf := range ColumnFamilies(ct) {
			heading := regexp.MustCompile(`(?m)^### ` + regexp.QuoteMeta(cf.String()) + `( \((cache|off-chain)\))?$`)
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
	for _, k := range [][]byte{stateKeyFormat, stateKeyCoin, stateKeyNetwork, stateKeyTip, stateKeyCreated, stateKeyBulk, stateKeyFilters} {
		if !strings.Contains(text, "`"+string(k)+"`") {
			t.Errorf("docs/schema.md does not describe state key %q", k)
		}
	}
}
