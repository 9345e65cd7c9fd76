package components

// StatusKind is where an agent's run stands.
type StatusKind uint8

// The statuses an agent moves through. Done, Failed and Killed are terminal.
const (
	Active StatusKind = iota
	Waiting
	Done
	Failed
	Killed
)

// StatusNames lists every status in order, for summaries and validation messages.
var StatusNames = []string{"active", "waiting", "done", "failed", "killed"}

// String returns the lower-case name used in traces and scenarios.
func (k StatusKind) String() string {
	if int(k) < len(StatusNames) {
		return StatusNames[k]
	}
	return "unknown"
}

// Terminal reports whether the status ends the run.
func (k StatusKind) Terminal() bool { return k >= Done }

// ParseStatus maps a name from StatusNames back to its kind.
func ParseStatus(s string) (StatusKind, bool) {
	for i, n := range StatusNames {
		if n == s {
			return StatusKind(i), true
		}
	}
	return 0, false
}

// Status is an agent's status. Why it is what it is (when it is not simply active or done) is
// AgentData.Reason.
type Status struct {
	Kind StatusKind
}
