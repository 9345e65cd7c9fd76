// expect: budget. replaceAll growing a string to the cap, kept each time.
defineTool({ name: "replace_kept", description: "hostile", parameters: { type: "object" }, run() {
  const s = "ab".repeat(1 << 19);
  const kept = [];
  for (;;) kept.push(s.replaceAll("a", "xyz"));
} });
