package tools

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Risk is how much harm a tool call can do, on one ladder:
// read_only < write_local < network_get < network_write < spends_money.
// A goal's policy sets a ceiling; calls above it ask the user.
type Risk int

const (
	ReadOnly Risk = iota
	WriteLocal
	NetworkGet
	NetworkWrite
	SpendsMoney
)

// UndeclaredRisk is the level of a tool that did not declare one (plugins, unknown tools):
// high enough to ask the user under any default ceiling.
const UndeclaredRisk = NetworkWrite

var riskNames = []string{"read_only", "write_local", "network_get", "network_write", "spends_money"}

func (r Risk) String() string {
	if r < 0 || int(r) >= len(riskNames) {
		return fmt.Sprintf("risk(%d)", int(r))
	}
	return riskNames[r]
}

// ParseRisk reads a risk name such as "write_local".
func ParseRisk(s string) (Risk, error) {
	for i, n := range riskNames {
		if strings.EqualFold(s, n) {
			return Risk(i), nil
		}
	}
	return 0, fmt.Errorf("unknown risk %q: use one of %s", s, strings.Join(riskNames, ", "))
}

// Risks lists every level, lowest first.
func Risks() []Risk { return []Risk{ReadOnly, WriteLocal, NetworkGet, NetworkWrite, SpendsMoney} }

func (r Risk) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }

func (r *Risk) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseRisk(s)
	*r = v
	return err
}
