package contract

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
)

func TestSharedRulesHaveParityTests(t *testing.T) {
	root := clusterspectest.RepoRoot(t)
	for _, r := range SharedRules {
		if len(r.Tests) == 0 {
			t.Errorf("%s: no parity test", r.Rule)
		}
		for _, test := range r.Tests {
			path, name, _ := strings.Cut(test, ":")
			src, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				t.Errorf("%s: %v", r.Rule, err)
				continue
			}
			if !strings.Contains(string(src), "func "+name+"(") && !strings.Contains(string(src), "def "+name+"(") {
				t.Errorf("%s: %s has no %s", r.Rule, path, name)
			}
		}
	}
}

// TestDriverContractFieldsMatch: the driver's Contract dataclass
// (internal/driver/driverpy/contract.py) has exactly the fields
// contract.Contract sends, each with the matching type.
func TestDriverContractFieldsMatch(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(clusterspectest.RepoRoot(t), "internal/driver/driverpy/contract.py"))
	if err != nil {
		t.Fatal(err)
	}
	class := regexp.MustCompile(`(?s)\nclass Contract:\n(.*?)\n\n    @classmethod`).FindStringSubmatch(string(src))
	if class == nil {
		t.Fatal("driverpy/contract.py has no Contract dataclass")
	}
	var py []string
	for _, f := range regexp.MustCompile(`(?m)^    ([a-z_]+): (str|int|float)$`).FindAllStringSubmatch(class[1], -1) {
		py = append(py, f[1]+" "+f[2])
	}
	pyType := map[reflect.Kind]string{reflect.String: "str", reflect.Int: "int", reflect.Float64: "float"}
	var goFields []string
	ct := reflect.TypeOf(Contract{})
	for i := range ct.NumField() {
		goFields = append(goFields, strings.Split(ct.Field(i).Tag.Get("json"), ",")[0]+" "+pyType[ct.Field(i).Type.Kind()])
	}
	slices.Sort(py)
	slices.Sort(goFields)
	if !slices.Equal(py, goFields) {
		t.Errorf("driverpy's Contract has fields %v, contract.Contract sends %v", py, goFields)
	}
}
