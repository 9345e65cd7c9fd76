// expect: budget. A Set grown by add, and a second one built from it by the Set constructor.
defineTool({ name: "set_growth", description: "hostile", parameters: { type: "object" }, run() {
  const s = new Set();
  for (let i = 0; ; i++) { s.add(i); if (i % 100000 === 99999) new Set(s); }
} });
