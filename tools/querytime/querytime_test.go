package querytime

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSpecsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.json")
	specs := []Spec{{Name: "a", Paths: []string{"/api/v2/tx/1", "/api/v2/tx/2"}}, {Name: "b", Paths: []string{"/x?a=1&b=2"}, NoXpubCache: true}}
	if err := WriteSpecs(path, specs); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSpecs(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, specs) {
		t.Errorf("read %+v, wrote %+v", got, specs)
	}
	for _, bad := range []string{`[{"Name":"a"}]`, `[{"Paths":["/x"]}]`, `{`} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSpecs(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming the file", bad, err)
		}
	}
}
