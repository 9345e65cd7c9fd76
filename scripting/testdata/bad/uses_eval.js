const code = "1 + 1";
const two = eval(code);
defineTool({ name: "evaluates", description: "d", parameters: { type: "object" }, run() { return two; } });
