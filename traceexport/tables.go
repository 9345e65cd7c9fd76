package traceexport

import (
	"github.com/warrenhq/warren/table"
	"github.com/warrenhq/warren/trace"
)

// EventsTable is the name of the table of every event's common fields.
const EventsTable = "events"

// ManifestFile is the file, beside the tables, that says what an export holds: the trace's
// header, whether it was complete, and each table's file, rows and typed columns (see Manifest).
const ManifestFile = "tables.json"

// commonDocs say what each common field holds, for the tables' column docs.
var commonDocs = map[string]string{
	"tick":  "the scheduler tick of the event",
	"seq":   "the event's number in the trace (1, 2, 3, ...): the order of events, across every table",
	"agent": "the agent's id (1, 2, 3, ... in spawn order); 0 for a world event (mcp_server, pool_breaker, end)",
	"name":  `the agent's name; "" for a world event`,
	"kind":  "the event's kind: in a kind's table, the table's name",
}

// optionalDoc is the doc of a field some events of its kind leave out.
const optionalDoc = "optional: null where the event leaves it out (a ? in docs/trace.md)"

// Tables returns the tables Export writes for any trace, without rows, in the order it writes
// them: EventsTable (the common fields of every event), then one table per event kind of the
// trace schema (trace.Schema), sorted by kind, each holding the common fields and then the kind's
// own, in the order a trace writes them. Every kind has its table, even one no event of a trace
// has (it is then empty), so the same files and columns come out of every trace of a version:
// a query or a notebook written against one export runs on any other.
func Tables() []table.Table {
	common := commonColumns()
	out := []table.Table{{
		Name:    EventsTable,
		Doc:     "one row per event of the trace, in trace order: the fields every event starts with (the rest are in the table of its kind, which shares seq)",
		Columns: common,
	}}
	for _, k := range trace.Schema() {
		cols := append([]table.Column(nil), common...)
		for _, f := range k.Fields {
			c := table.Column{Name: f.Name, Type: table.Type(f.Type)}
			if f.Optional {
				c.Doc = optionalDoc
			}
			cols = append(cols, c)
		}
		out = append(out, table.Table{
			Name:    k.Kind,
			Doc:     "one row per " + k.Kind + " event, in trace order: the common fields, then the kind's (docs/trace.md)",
			Columns: cols,
		})
	}
	return out
}

// commonColumns are the columns of the fields every event starts with.
func commonColumns() []table.Column {
	var cols []table.Column
	for _, f := range trace.CommonFields() {
		cols = append(cols, table.Column{Name: f.Name, Type: table.Type(f.Type), Doc: commonDocs[f.Name]})
	}
	return cols
}
