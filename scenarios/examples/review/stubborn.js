// A writer whose drafts never pass review: each draft is one line, numbered from the round count
// the stage graph keeps in its memory (obs.memory.rounds, set by the review stage's transitions).
// It plans and writes; the review stage runs on the scenario's reviewer model (stage_models).
definePolicy(function decide(obs) {
  if (obs.iteration > 0 || obs.stage === "plan") {
    return { text: "Done with " + obs.stage + "." };
  }
  const round = (obs.memory.rounds || 0) + 1;
  return { text: "Draft " + round + ".", calls: [{ tool: "write_file", args: { path: "draft.md", content: "Draft " + round + ": it works.\n" } }] };
});
