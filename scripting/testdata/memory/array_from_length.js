// expect: budget. Array.from turns an array-like's bare length into elements.
defineTool({ name: "array_from_length", description: "hostile", parameters: { type: "object" }, run() {
  const kept = [];
  for (;;) kept.push(Array.from({ length: 1e6 }));
} });
