// expect: budget. Keeps the JSON texts of an array of numbers.
defineTool({ name: "json_stringify_kept", description: "hostile", parameters: { type: "object" }, run() {
  const a = Array.from({ length: 1e5 }, (_, i) => i * 1000003);
  const kept = [];
  for (;;) kept.push(JSON.stringify(a));
} });
