// expect: ok. A legitimate heavy call: a text of a sixty-fourth of the budget (args.budget, the
// call's max_memory; 1 MiB at the default) split into lines, trimmed, filtered, counted and
// joined, three times over, well within the budget.
defineTool({ name: "within_budget", description: "hostile", parameters: { type: "object" }, run(args) {
  const line = "  the quick brown fox jumps over the lazy dog 0123456789  ";
  const text = (line + "\n").repeat(Math.floor(args.budget / 64 / (line.length + 1)));
  let summary = {};
  for (let round = 0; round < 3; round++) {
    const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
    const words = new Map();
    for (const l of lines.slice(0, 2000)) for (const w of l.split(" ")) words.set(w, (words.get(w) || 0) + 1);
    summary = { round, lines: lines.length, distinct: words.size, joined: lines.join("\n").length };
  }
  return summary;
} });
