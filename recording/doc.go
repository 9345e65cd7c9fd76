// Package recording keeps what a run took from outside its scenario and seed, so that the run
// can be replayed offline and must come out the same.
//
// A run's trace is a function of its scenario and seed only while every input comes from them.
// Tools that touch the machine do not: a shell command's output, an MCP server's answer, what a
// script's httpGet fetched, a file in a reused workdir, a person's answer to a prompt, when an MCP
// session started or broke. host run --record writes each of those, whole, into a recording
// (a Writer); host replay reads it back (a Tape) and answers every such input from it instead of
// from the world outside, so the replay needs no MCP server, no sandbox, no network and no shell,
// and reproduces the recorded trace byte for byte.
//
// A recording is JSON Lines: a header (Header), then one entry per outside input in the order
// the world took them, then an end line. docs/recording.md describes every field.
//
// Each tool entry is keyed by agent, turn and call, with a hash of the request (the tool and its
// arguments). A replay that makes a call the recording does not have, or the same call with other
// arguments, stops with a *DivergenceError that names the agent, turn and call and shows the
// first difference: the replay has left the recorded history and cannot be answered from it
// (the model of Temporal's replayer).
//
// Lifecycle: NewWriter writes the header; the world's goroutine adds entries as inputs arrive
// (Begin when a call starts, Finish when its result is filed, Background, MCPEvents, Answer);
// Close writes the calls still unfinished and the end line. Read loads a whole recording into a
// Tape, which the world's goroutine consults in the same places.
package recording
