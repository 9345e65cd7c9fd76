package trace

import "slices"

// kinds is every event kind the Writer writes, sorted. The Kind constants are spread over the
// files of the methods that write them; this is the one place that lists them all.
var kinds = []string{
	KindAnswer,
	KindEnd,
	KindFanOutStart,
	KindKill,
	KindMCPServer,
	KindMemory,
	KindMerge,
	KindMessage,
	KindModelFallback,
	KindModelRetry,
	KindModelTurn,
	KindPoolBreaker,
	KindPrompt,
	KindReap,
	KindSpawn,
	KindStageEnter,
	KindTerminal,
	KindToolCall,
	KindToolNote,
	KindToolResult,
	KindTransition,
	KindWaitEnd,
	KindWaitStart,
	KindWorkerEnd,
}

// Kinds returns every value the "kind" field of an event can take, sorted, as a fresh slice the
// caller may keep. It exists so that nothing has to list the kinds by hand: a reader of traces
// can check it knows them all, docs/trace.md's table of kinds is checked against it
// (TestDocsListKinds), and a test drives every Writer method to check that each writes a kind
// listed here and that every kind listed here is written by some method.
func Kinds() []string { return slices.Clone(kinds) }
