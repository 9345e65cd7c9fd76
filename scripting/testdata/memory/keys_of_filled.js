// expect: budget. Object.keys of a filled array builds one string per element.
defineTool({ name: "keys_of_filled", description: "hostile", parameters: { type: "object" }, run() {
  const a = new Array(5e5).fill(0);
  const kept = [];
  for (;;) kept.push(Object.keys(a));
} });
