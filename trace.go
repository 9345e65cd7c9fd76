package warren

import "github.com/warrenhq/warren/trace"

// CompareTraces compares the trace files at want and got and reports their first difference:
// the header's fields, or the first divergent event with both versions of it. "" means the
// traces are identical, which is how a recorded run becomes a test (host trace diff); an error
// means a file could not be read as a trace. notes say what either trace lacks, each naming its
// side ("got: trace incomplete: no end event", a last line cut mid-line): an incomplete trace is
// compared up to its last whole line, not refused, because it is the account of a run that was
// killed or whose disk filled, and what it holds can still be compared.
func CompareTraces(want, got string) (report string, notes []string, err error) {
	res, err := trace.CompareFiles(want, got)
	return res.Report, res.Notes, err
}

// How a run ended (Summary.Status, and the status of the trace's end event).
const (
	// RunFinished: the run reached a fixed point.
	RunFinished = trace.RunFinished
	// RunTickLimit: the run reached its tick limit first.
	RunTickLimit = trace.RunTickLimit
	// RunInterrupted: the run's context ended (a signal to host run, a caller's cancel); the run
	// stopped at the end of its tick.
	RunInterrupted = trace.RunInterrupted
	// RunFailed: the run could not go on: its trace could not be written (ErrTrace), or a system
	// panicked.
	RunFailed = trace.RunFailed
)
