defineTool({ name: "lazy", description: "d", parameters: { type: "object" }, run: "soon" });
