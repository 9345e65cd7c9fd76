defineTool({ name: "one_line", description: "d", parameters: { type: "object" }, run() { return 1 }} });
