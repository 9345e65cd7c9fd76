package trace

// Kinds returns every value the "kind" field of an event can take, sorted, as a fresh slice the
// caller may keep: the kinds of the schema (Schema). It exists so that nothing has to list the
// kinds by hand: a reader of traces can check it knows them all, docs/trace.md's table of kinds
// is checked against it (TestDocsListKinds), and a test drives every Writer method to check that
// each writes a kind listed here and that every kind listed here is written by some method.
func Kinds() []string {
	out := make([]string, len(schema))
	for i, k := range schema {
		out[i] = k.Kind
	}
	return out
}
