package warren

import "github.com/warrenhq/warren/trace"

// CompareTraces compares the trace files at want and got and reports their first difference:
// the header's fields, or the first divergent event with both versions of it. "" means the
// traces are identical, which is how a recorded run becomes a test (host trace diff); an error
// means a file could not be read as a trace.
func CompareTraces(want, got string) (string, error) { return trace.Compare(want, got) }
