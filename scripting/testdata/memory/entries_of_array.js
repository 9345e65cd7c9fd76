// expect: budget. Object.entries makes a [key, value] array per element: about 600 bytes each.
defineTool({ name: "entries_of_array", description: "hostile", parameters: { type: "object" }, run() {
  const a = new Array(1e5).fill(0);
  const kept = [];
  for (;;) kept.push(Object.entries(a));
} });
