counter = 0; // strict mode: no implicit globals
defineTool({ name: "counts", description: "d", parameters: { type: "object" }, run() { return counter; } });
