// expect: budget. An array concatenated with itself until it has millions of elements.
defineTool({ name: "concat_doubling", description: "hostile", parameters: { type: "object" }, run() {
  let a = [1];
  const kept = [];
  for (;;) { a = a.length < 2e6 ? a.concat(a) : a; kept.push(a.concat([])); }
} });
