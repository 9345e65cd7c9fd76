// expect: budget. Grows one array by push, one element at a time, without end.
defineTool({ name: "push_forever", description: "hostile", parameters: { type: "object" }, run() {
  const a = [];
  for (let i = 0; ; i++) a.push(i);
} });
