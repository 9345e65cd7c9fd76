// Package systems holds the tick pipeline: one system per file, each resolving its views, maps,
// swaps and resources once in Initialize so that Update only does the work. Pipeline lists them
// in the order they run every tick:
//
//	sync_stage       Entering          -> ReadyToInfer       stage entry: visits, iteration reset
//	infer_dispatch   ReadyToInfer      -> ReadyForTools | ResolveTransition | AwaitingInference
//	infer_collect    AwaitingInference -> ReadyForTools | ResolveTransition
//	tool_dispatch    ReadyForTools     -> ReadyToInfer | AwaitingTools (lane calls, open prompts)
//	interact         due prompts       -> (AwaitingTools) | ReadyToInfer
//	tool_collect     AwaitingTools     -> ReadyToInfer
//	transition       ResolveTransition -> Entering | Terminal
//	reap             Terminal          -> (removed; final record kept)
//
// Any of them may also send an agent to Terminal when its model or a tool panics: that agent
// fails alone, the panic is in the trace, and the world goes on.
package systems
