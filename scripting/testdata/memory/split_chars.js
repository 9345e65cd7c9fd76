// expect: budget. Splitting a 4 MiB string into characters is four million strings in one step.
defineTool({ name: "split_chars", description: "hostile", parameters: { type: "object" }, run() {
  const s = "x".repeat(4e6);
  const kept = [];
  for (;;) kept.push(s.split(""));
} });
