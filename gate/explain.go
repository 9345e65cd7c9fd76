package gate

import (
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/warrenhq/warren/policy"
)

// String renders the explanation as host explain prints it: the decision, the call's keys, the
// gate's own layers, the permission layers' explanation (when the call reached them), then what
// auto mode and the unattended rule did.
func (x Explanation) String() string {
	var b strings.Builder
	d := x.Decision
	layer := d.Layer
	if p := x.Permission; p != nil && p.Decision.Layer == d.Layer && p.Decision.Key != "" {
		layer += ", key " + p.Decision.Key // the permission layers decided: name the key
	}
	b.WriteString(d.Verdict.String() + " (" + layer + "): " + d.Reason + "\n")
	if x.Keys != "" {
		b.WriteString("keys: " + x.Keys + "\n")
	}
	before, after := x.Steps, []policy.Step(nil)
	if x.Permission != nil {
		// The permission layers' steps follow the read-only floor's, which every call that
		// reaches them has passed.
		n := slices.IndexFunc(x.Steps, func(s policy.Step) bool { return s.Layer == LayerReadOnly }) + 1
		before, after = x.Steps[:n], x.Steps[n+len(x.Permission.Steps):]
	}
	writeSteps(&b, before)
	if x.Permission != nil {
		b.WriteString("  permission: ")
		for i, line := range strings.Split(strings.TrimSuffix(x.Permission.String(), "\n"), "\n") {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(line + "\n")
		}
	}
	writeSteps(&b, after)
	return b.String()
}

// writeSteps writes gate steps as aligned lines.
func writeSteps(b *strings.Builder, steps []policy.Step) {
	if len(steps) == 0 {
		return
	}
	w := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	for _, s := range steps {
		// Writes to a strings.Builder cannot fail.
		_, _ = w.Write([]byte("  " + s.Layer + "\t" + s.Key + "\t" + s.Value + "\t" + s.Effect + "\n"))
	}
	_ = w.Flush()
}
