// expect: budget. Fills most of the budget (args.budget, the call's max_memory), then a global
// match whose pieces would not fit: built one exec at a time, it fails when it reaches the budget
// instead of building them all.
defineTool({ name: "regexp_match_all", description: "hostile", parameters: { type: "object" }, run(args) {
  const kept = [];
  const block = 1 << 20;
  for (let i = 0; i < Math.floor(args.budget / (2 * block + 64)) - 1; i++) kept.push("k".repeat(block));
  const s = "x".repeat(4e6);
  for (;;) kept.push(s.match(/x/g));
} });
