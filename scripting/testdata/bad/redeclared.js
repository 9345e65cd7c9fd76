let total = 0;
let total = 1;
defineTool({ name: "redeclared", description: "d", parameters: { type: "object" }, run() { return total; } });
