// expect: budget. Fills all but about 100 KB of the budget (args.budget, the call's max_memory),
// then splits by an empty regular expression: a piece per character, more than fit, so the split
// is asked for one piece more than fits and the call fails without building the rest.
defineTool({ name: "regexp_split", description: "hostile", parameters: { type: "object" }, run(args) {
  const kept = [];
  const block = 1 << 20, cost = 2 * block + 64; // a string of block characters and its slot
  const fill = args.budget - 100000;
  for (let i = 0; i < Math.floor(fill / cost); i++) kept.push("k".repeat(block));
  kept.push("k".repeat(Math.floor((fill % cost - 64) / 2)));
  const s = "xy".repeat(1e5);
  for (;;) kept.push(s.split(/(?:)/));
} });
