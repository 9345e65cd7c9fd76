// Package models defines how Warren asks an agent's model for its next step, and the
// scripted back end that scenario replay tests use.
//
// A [Model] receives a read-only [View] of one agent (its identity, current stage, the
// conversation so far and the tools the stage advertises) plus the agent's own tiny
// [State], and returns a [Reply]: text and zero or more tool calls. A reply without
// calls means the stage's work is done. Back ends are stateless values shared by every
// agent that uses them; anything they must remember per agent lives in State (one int32),
// which the host keeps in the agent's side store. This keeps an idle agent's model cost to a few bytes and
// lets the host call one back end from many goroutines at once.
//
// Every turn also receives a context, cancelled when the host no longer wants the turn
// (its agent was killed, the run was cancelled or reached its deadline), so a back end that
// waits (on the network, on a script) stops instead of holding a lane worker.
//
// # Kinds
//
// A scenario names a back end by its kind ([models.worker] kind = "scripted"). Kinds form an
// open registry, after Caddy's modules: each is a [Kind] with a namespaced id
// ("models.scripted", whose name "scripted" is what a scenario writes), registered with
// [RegisterKind] from the init function of the file that implements it (scripted_kind.go
// here; the JavaScript policy's in package scripting). A kind's New returns the struct its
// tables decode into (the struct's toml tags are the table's keys), and that struct's Compile
// builds the model from the decoded table and a [KindEnv]: the model's key and id, a way to
// resolve files relative to the scenario, the host's scripting limits and a hash sink. The
// scenario loader knows no kind by name: it looks the kind up ([LookupKind]), decodes the table
// strictly into the kind's struct, and positions what Compile reports ([KeyError]) in the
// file. [Kinds] lists the ids, sorted, for messages, help and docs.
//
// # The scripted back end
//
// [Scripted] replays turns written in a scenario. Each agent walks, in file order, the turns that
// name no agent and those that name it (a turn's agent key), across the whole run, whatever stage
// it is in: every call to [Scripted.Turn] uses the agent's next turn and then advances its cursor
// (also when the turn is a simulated failure or its stage assertion fails). A turn may
// assert the stage it expects (a mismatch is an error wrapping [ErrStageMismatch] that
// names both stages), or be a simulated model failure (an error wrapping
// [ErrScriptedFailure] carrying the scenario's message).
//
// Text and every string leaf of a call's arguments are Go text/template templates over
// the agent and its position in the run:
//
//	{{.Name}} {{.Index}} {{.Group}} {{.Stage}} {{.Turn}} {{.Iteration}} {{.Visit}}
//
// Name, Index and Group identify the agent; Stage is the current stage's name; Turn is
// the 0-based model turn over the whole run, Iteration the 0-based turn within this
// visit of the stage, Visit the 1-based visit count of the stage. Templates are compiled
// (and trial-rendered for a zero-valued agent) by [NewScripted], so a malformed template
// or an unknown field is reported before the run starts, as
// "turn 3: calls[0].args.path: template: ...". Turn numbers in errors count from 1 (the
// third turn written in the scenario); bracketed indexes count from 0.
//
// Tool call ids are "<agent name>-t<turn>-c<index>", for example "worker-0-t4-c1", so
// they are deterministic and unique within a run.
//
// # When the script runs out
//
// What happens when an agent asks for a turn after the last one is chosen by
// [WhenExhausted] (scenario key when_exhausted):
//
//   - "fail" (the default, [ExhaustedFail]): every further call returns an error wrapping
//     [ErrScriptExhausted], "scripted model ran out of turns after N", so the stage ends
//     with outcome "error". Use it to make a scenario that under-scripts its agent fail
//     loudly.
//   - "finish" ([ExhaustedFinish]): every further call returns a reply with empty text
//     and no tool calls, so the current stage ends with outcome "done".
//   - "repeat_last" ([ExhaustedRepeatLast]): the last turn is replayed forever (with its
//     templates re-rendered for the current turn). Use it to drive a stage into its
//     max_iterations limit. A script with no turns cannot repeat and is rejected.
//
// The cursor stops at the number of turns once the script is exhausted; it never wraps.
package models
