defineTool({ name: "latin", description: "café", parameters: { type: "object" }, run() {} });
